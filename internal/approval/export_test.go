package approval

// ProposePrefix is proposePrefix without the reason, for the tables of the
// tests (the grants' offer is the one production caller).
func ProposePrefix(cmd string) string {
	p, _ := proposePrefix(cmd)
	return p
}
