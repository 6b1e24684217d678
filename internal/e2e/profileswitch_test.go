package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestModelSwitchesProfile: session.configure with provider moves a
// daemon session between two provider profiles served by two fake model
// servers. Each next request goes to the profile's server with the key
// for that server only: the client's key (sent for the first server) to
// the first, the daemon's own key of the second profile to the second; a
// third profile at the second server that takes its key from the
// client's variable is refused, so the client's key never reaches a host
// it was not given for. The store keeps the move: a resume on another
// connection goes on at the second server.
func TestModelSwitchesProfile(t *testing.T) {
	const clientKey, otherKey = "sk-client-a-7d1e", "sk-daemon-b-91c4"
	fa, fb := modeltest.New(t), modeltest.New(t)
	cfg := providerConfig(fa.URL(), fmt.Sprintf(`[providers.other]
wire_api = "chat"
base_url = %q
model = "b-model"
api_key_env = "OTHER_KEY"
max_retries = 0

[providers.third]
base_url = %q
model = "c-model"
max_retries = 0
`, fb.URL()+"/v1", fb.URL()+"/v1"))
	in := newInstance(t, cfg)
	in.startDaemon(in.withEnv("OPENAI_API_KEY", "OTHER_KEY="+otherKey))
	c := in.connect()
	started := in.startSession(c, proto.SessionStart{ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: clientKey, ProviderKeyBaseURL: fa.URL(), Origin: proto.OriginTUI})
	sid := started.SessionID

	turn := func(f *modeltest.Server, prompt string) {
		t.Helper()
		f.Script(modeltest.Text("answer to " + prompt))
		sendTurn(t, c, sid, prompt)
		evs := until(t, c, proto.EventTurnCompleted)
		if tc, ok := evs[len(evs)-1].(*proto.TurnCompleted); !ok || tc == nil {
			t.Fatalf("turn %q did not complete: %v", prompt, eventTypes(evs))
		}
	}
	configure := func(m *proto.SessionConfigure) (*proto.SessionConfigured, error) {
		t.Helper()
		m.SessionID = sid
		return client.CallFor[*proto.SessionConfigured](t.Context(), c, m)
	}
	auth := func(f *modeltest.Server) []string {
		var out []string
		for _, r := range f.Requests() {
			out = append(out, r.Method+" "+r.Path+" "+r.Header.Get("Authorization"))
		}
		return out
	}

	turn(fa, "one")
	moved, err := configure(&proto.SessionConfigure{Provider: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Provider != "other" || moved.Model != "b-model" || moved.BaseURL != fb.URL()+"/v1" || moved.PreviousBaseURL != fa.URL() {
		t.Errorf("session.configured = %+v, want provider other, b-model at %s from %s", moved, fb.URL()+"/v1", fa.URL())
	}
	turn(fb, "two")

	_, err = configure(&proto.SessionConfigure{Provider: "third"})
	if err == nil || !strings.Contains(err.Error(), "a key is sent only to the endpoint it was given for") || strings.Contains(err.Error(), clientKey) {
		t.Errorf("move to a profile whose key would be the client's at another host: %v, want a refusal", err)
	}
	back, err := configure(&proto.SessionConfigure{Provider: "openai", Model: "gpt-5"})
	if err != nil {
		t.Fatal(err)
	}
	if back.Model != "gpt-5" || back.BaseURL != fa.URL() {
		t.Errorf("back: %+v", back)
	}
	turn(fa, "three")
	if _, err := configure(&proto.SessionConfigure{Provider: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(t.Context(), &proto.SessionClose{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	c.Close()

	c = in.connect()
	resumed := resume(t, c, sid)
	if resumed.BaseURL != fb.URL()+"/v1" || resumed.Model != "b-model" {
		t.Errorf("resumed at %s %s, want the profile it was moved to", resumed.BaseURL, resumed.Model)
	}
	turn(fb, "four")

	wantA := []string{"POST /responses Bearer " + clientKey, "POST /responses Bearer " + clientKey}
	wantB := []string{"POST /v1/chat/completions Bearer " + otherKey, "POST /v1/chat/completions Bearer " + otherKey}
	if got := auth(fa); strings.Join(got, "\n") != strings.Join(wantA, "\n") {
		t.Errorf("first server got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantA, "\n"))
	}
	if got := auth(fb); strings.Join(got, "\n") != strings.Join(wantB, "\n") {
		t.Errorf("second server got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantB, "\n"))
	}
	if reqs := fa.Requests(); len(reqs) == 2 && reqs[1].Body["model"] != "gpt-5" {
		t.Errorf("the turn after the move back asked for %v, want gpt-5", reqs[1].Body["model"])
	}
}
