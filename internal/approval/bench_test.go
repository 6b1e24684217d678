package approval

import (
	"fmt"
	"testing"
)

// BenchmarkAllowedWith256Rules: a call matched against the most rules a
// configuration may hold (256: half deny, half allow, none covering it)
// and a session grant, as every tool call of such a session is.
func BenchmarkAllowedWith256Rules(b *testing.B) {
	var rules []Grant
	for i := range 256 {
		s := Spec{Tool: "bash", Prefix: fmt.Sprintf("tool%d sub", i), Source: "c.toml:1"}
		s.Deny = i%2 == 0
		g, err := s.Rule()
		if err != nil {
			b.Fatal(err)
		}
		rules = append(rules, g)
	}
	br := NewBroker()
	br.UseRules("/w", NewRuleBook("u", rules), NewRuleBook("s", nil))
	c := bashCall("go test ./... -run X")
	b.ReportAllocs()
	for b.Loop() {
		if _, deny, _ := br.Denied(c); deny {
			b.Fatal("denied")
		}
		if _, ok := br.Allowed(c); ok {
			b.Fatal("allowed")
		}
	}
}
