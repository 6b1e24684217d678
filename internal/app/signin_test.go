package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// TestKnownAgentsAreTheAdapters ties the agent names the config accepts
// ([agents.<name>] tables) to the adapter table: config may not import the
// tools, so the list is written twice and this test keeps the two equal,
// order included.
func TestKnownAgentsAreTheAdapters(t *testing.T) {
	if d := cmp.Diff(agents.Names(), config.KnownAgents); d != "" {
		t.Errorf("config.KnownAgents differs from the adapters (-adapters +config):\n%s", d)
	}
}

// TestACPAgentsHaveAdapters: the agents config lets use transport = "acp"
// are those with an ACP adapter, and each accepts the transport.
func TestACPAgentsHaveAdapters(t *testing.T) {
	var want []string
	for _, name := range agents.Names() {
		d, _ := agents.Lookup(name)
		_, err := agents.Apply(d, agents.Override{Transport: agents.TransportACP})
		if d.ACPCommand != "" {
			want = append(want, name)
			if err != nil {
				t.Errorf("%s refuses transport = \"acp\": %v", name, err)
			}
		} else if err == nil {
			t.Errorf("%s accepts transport = \"acp\" without an ACP adapter", name)
		}
	}
	if d := cmp.Diff(want, config.ACPAgents); d != "" {
		t.Errorf("config.ACPAgents differs from the adapters with an ACP command (-adapters +config):\n%s", d)
	}
}

// TestSignInForEveryAdapter: the app builds a sign-in for every adapter
// and refuses a name that is none.
func TestSignInForEveryAdapter(t *testing.T) {
	f := newFixture(t, "")
	for _, name := range agents.Names() {
		if _, err := f.app.SignIn(name); err != nil {
			t.Errorf("SignIn(%s): %v", name, err)
		}
	}
	if _, err := f.app.SignIn("nope"); err == nil {
		t.Error("SignIn accepted an unknown agent")
	}
}
