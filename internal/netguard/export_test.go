package netguard

import "net/netip"

// ParseHostLiteral is parseHost for the notation tables of the tests: the
// address of a well-formed literal; ok is false for host names and
// malformed literals.
func ParseHostLiteral(host string) (netip.Addr, bool) {
	a, lit, err := parseHost(host)
	return a, lit && err == nil
}
