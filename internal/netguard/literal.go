package netguard

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// errBadNumeric marks a host that a URL parser would treat as an IPv4
// address (its last label is a number) but that is not a valid one.
var errBadNumeric = errors.New("malformed numeric IPv4 host")

// parseHost reports whether host is meant as an IP literal and, if so, its
// address or why it is malformed. A literal is any notation the WHATWG URL
// parser (and inet_aton) accepts: dotted decimal, decimal, octal and
// hexadecimal numbers and short forms such as 127.1 or 0x7f.1, a trailing
// dot, and IPv6 with or without brackets and with a zone written as %zone
// or %25zone.
func parseHost(host string) (netip.Addr, bool, error) {
	h := host
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.Contains(h, ":") {
		h = strings.Replace(h, "%25", "%", 1)
		a, err := netip.ParseAddr(h)
		if err != nil {
			return netip.Addr{}, true, err
		}
		return a, true, nil
	}
	return parseIPv4(h)
}

// parseIPv4 follows the WHATWG "IPv4 parser": up to four dot-separated
// numbers, each decimal, octal (leading 0) or hexadecimal (0x); the last
// number fills the remaining bytes.
func parseIPv4(h string) (netip.Addr, bool, error) {
	h = strings.TrimSuffix(h, ".")
	parts := strings.Split(h, ".")
	if !endsInNumber(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errBadNumeric
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := parseIPv4Number(p)
		if err != nil {
			return netip.Addr{}, true, errBadNumeric
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, errBadNumeric
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, true, errBadNumeric
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// endsInNumber is the WHATWG check that decides a host is numeric: the last
// label is all digits, or parses as a hex/octal number.
func endsInNumber(last string) bool {
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, err := parseIPv4Number(last)
	return err == nil
}

func parseIPv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, errBadNumeric
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if strings.ContainsAny(s, "+-_") {
		return 0, errBadNumeric
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, errBadNumeric
	}
	return n, nil
}
