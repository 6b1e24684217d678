package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Options configures a Guard.
type Options struct {
	// AllowPrivate lifts the guard (web.allow_private_addresses).
	AllowPrivate bool
	// Resolver returns the addresses of a host name; nil uses
	// net.DefaultResolver. Tests inject a fake so no DNS is needed.
	Resolver func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an already checked IP:port; nil uses a net.Dialer
	// whose Control re-checks the socket address. Tests inject a recording
	// dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// AllowAddrPorts are exact address-and-port exceptions (tests: a local
	// server on one port is reachable, the same address on any other port is
	// not).
	AllowAddrPorts []netip.AddrPort
}

// Guard is a checking resolver and a dialer limited to checked addresses.
type Guard struct {
	opts Options
}

// New returns a Guard.
func New(opts Options) *Guard {
	g := &Guard{opts: opts}
	if g.opts.Resolver == nil {
		g.opts.Resolver = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if g.opts.Dial == nil {
		d := &net.Dialer{Control: g.control}
		g.opts.Dial = d.DialContext
	}
	return g
}

// RefusedError says a host or address is not reachable through the guard.
type RefusedError struct {
	Host  string // as written in the URL; empty for a bare address
	Addr  netip.Addr
	Class string
}

func (e *RefusedError) Error() string {
	what := e.Addr.String()
	if e.Host != "" && e.Host != what {
		what = e.Host + " (" + e.Addr.String() + ")"
	}
	return fmt.Sprintf("refused %s: %s address (set web.allow_private_addresses to allow)", what, e.Class)
}

// Check reports whether addr:port may be dialled.
func (g *Guard) Check(ap netip.AddrPort) error {
	if g.opts.AllowPrivate {
		return nil
	}
	if slices.Contains(g.opts.AllowAddrPorts, ap) {
		return nil
	}
	if class, public := Classify(ap.Addr()); !public {
		return &RefusedError{Addr: ap.Addr(), Class: class}
	}
	return nil
}

// CheckHost checks a host that is an IP literal (in any URL notation)
// without resolving anything; a host name passes, since it is checked when
// it is resolved. It lets a tool refuse a literal before asking approval.
func (g *Guard) CheckHost(host string, port uint16) error {
	a, lit, err := parseHost(host)
	if !lit {
		return nil
	}
	if err != nil {
		return fmt.Errorf("refused %s: %v", host, err)
	}
	if err := g.Check(netip.AddrPortFrom(a, port)); err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			re.Host = host
		}
		return err
	}
	return nil
}

// Resolve resolves host once and checks every address; one refused address
// refuses the name. IP literals in any notation are not looked up.
func (g *Guard) Resolve(ctx context.Context, host string, port uint16) ([]netip.AddrPort, error) {
	a, lit, err := parseHost(host)
	if lit && err != nil {
		return nil, fmt.Errorf("refused %s: %v", host, err)
	}
	addrs := []netip.Addr{a}
	if !lit {
		// DNS names are case-insensitive and may be written fully
		// qualified; the resolver sees one canonical spelling.
		name := strings.TrimSuffix(strings.ToLower(host), ".")
		addrs, err = g.opts.Resolver(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		if err := g.Check(ap); err != nil {
			var re *RefusedError
			if errors.As(err, &re) {
				re.Host = host
			}
			return nil, err
		}
		out = append(out, ap)
	}
	return out, nil
}

// DialContext is for http.Transport: it resolves the host of address once,
// checks all its addresses and dials only those, in order.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("refused network %q", network)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port", address)
	}
	aps, err := g.Resolve(ctx, host, uint16(port))
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ap := range aps {
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		nw := "tcp4"
		if ap.Addr().Is6() {
			nw = "tcp6"
		}
		c, err := g.opts.Dial(ctx, nw, ap.String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control re-checks the address the kernel is about to connect to, so the
// default dialer refuses anything that did not pass the checks above.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused %s: not an IP address", address)
	}
	return g.Check(ap)
}
