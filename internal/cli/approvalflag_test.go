package cli

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/approval"
)

// TestApprovalPolicyFlagNamesEveryPolicy keeps --approval-policy's help in
// step with the policies approval.Parse accepts.
func TestApprovalPolicyFlagNamesEveryPolicy(t *testing.T) {
	f := newRootCmd(&globals{}).PersistentFlags().Lookup("approval-policy")
	if f == nil {
		t.Fatal("no --approval-policy flag")
	}
	for _, p := range []approval.Policy{approval.AskUnsandboxed, approval.AskOnRisk, approval.AskAlways, approval.DenyOnRisk} {
		if _, err := approval.Parse(string(p)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !strings.Contains("|"+f.Usage+"|", "|"+string(p)+"|") {
			t.Errorf("--approval-policy help %q does not name %s", f.Usage, p)
		}
	}
}
