// Package netguard owns the address guard of web_fetch: which IP addresses
// count as public, how host literals in every notation a URL parser accepts
// map to addresses, and a checking resolver plus dialer that connects only to
// addresses it has checked, so a name cannot be rebound to a private address
// between check and connect.
//
// The special-purpose ranges come from code.dny.dev/ssrf (generated from the
// IANA registries); this package names the classes for error messages, adds
// the IPv6 forms that embed an IPv4 address (judged by that address) and
// refuses scoped (zoned) IPv6 addresses.
package netguard

import (
	"encoding/binary"
	"net/netip"

	"code.dny.dev/ssrf"
)

// class is a named range; the first match in classes wins, so more specific
// ranges come before the ranges that contain them.
type class struct {
	prefix netip.Prefix
	name   string
}

var classes = func() []class {
	table := []struct{ p, name string }{
		{"255.255.255.255/32", "broadcast"},
		{"169.254.169.254/32", "link-local (cloud metadata)"},
		{"0.0.0.0/8", "unspecified"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared (CGNAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "reserved (IETF protocol assignments)"},
		{"192.0.2.0/24", "documentation"},
		{"192.31.196.0/24", "reserved (AS112)"},
		{"192.52.193.0/24", "reserved (AMT)"},
		{"192.88.99.0/24", "reserved (6to4 relay anycast)"},
		{"192.168.0.0/16", "private"},
		{"192.175.48.0/24", "reserved (AS112)"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"},
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"100::/64", "reserved (discard-only)"},
		{"2001:2::/48", "benchmarking"},
		{"2001:db8::/32", "documentation"},
		{"3fff::/20", "documentation"},
		{"2001::/23", "reserved (IETF protocol assignments)"},
		{"2620:4f:8000::/48", "reserved (AS112)"},
		{"fc00::/7", "unique-local"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local"},
		{"ff00::/8", "multicast"},
	}
	out := make([]class, len(table))
	for i, c := range table {
		out[i] = class{netip.MustParsePrefix(c.p), c.name}
	}
	return out
}()

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	v4compat   = netip.MustParsePrefix("::/96")
)

// Classify names the class of addr and says whether it is public. Public
// addresses get the class "public". IPv4-mapped, IPv4-compatible, NAT64,
// 6to4 and Teredo addresses are judged by the IPv4 address they embed
// (Teredo by both its server and its client address); any zoned address is
// refused as scoped.
func Classify(addr netip.Addr) (string, bool) {
	if !addr.IsValid() {
		return "invalid", false
	}
	if addr.Zone() != "" {
		return "scoped (zoned) IPv6", false
	}
	if addr.Is4In6() {
		return embedded("IPv4-mapped", addr.Unmap())
	}
	if addr.Is6() {
		if name, ok := classify6Embedded(addr); ok {
			return name, name == "public"
		}
	}
	for _, c := range classes {
		if c.prefix.Contains(addr) {
			return c.name, false
		}
	}
	// The IANA-derived table is the authority: anything it denies that the
	// named classes above miss is still refused.
	if err := ssrfTable.SafeAddr(addr); err != nil {
		if addr.Is6() && !ssrf.IPv6GlobalUnicast.Contains(addr) {
			return "reserved (outside IPv6 global unicast)", false
		}
		return "reserved (special-purpose)", false
	}
	return "public", true
}

var ssrfTable = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// classify6Embedded handles the IPv6 forms that carry an IPv4 address. ok is
// false when addr is none of them.
func classify6Embedded(addr netip.Addr) (string, bool) {
	b := addr.As16()
	v4 := func(off int) netip.Addr { return netip.AddrFrom4([4]byte(b[off : off+4])) }
	switch {
	case addr == netip.IPv6Unspecified() || addr == netip.IPv6Loopback():
		return "", false
	case v4compat.Contains(addr):
		n, _ := embedded("IPv4-compatible", v4(12))
		return n, true
	case nat64.Contains(addr):
		n, _ := embedded("NAT64", v4(12))
		return n, true
	case nat64Local.Contains(addr):
		return "reserved (local-use NAT64)", true
	case sixToFour.Contains(addr):
		n, _ := embedded("6to4", v4(2))
		return n, true
	case teredo.Contains(addr):
		server := v4(4)
		var client [4]byte
		binary.BigEndian.PutUint32(client[:], ^binary.BigEndian.Uint32(b[12:16]))
		if n, pub := embedded("Teredo server", server); !pub {
			return n, true
		}
		n, _ := embedded("Teredo", netip.AddrFrom4(client))
		return n, true
	}
	return "", false
}

// embedded judges an IPv6 form by the IPv4 address it carries.
func embedded(form string, v4 netip.Addr) (string, bool) {
	name, pub := Classify(v4)
	if pub {
		return "public", true
	}
	return name + " (" + v4.String() + " embedded in " + form + " IPv6)", false
}
