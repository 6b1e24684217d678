package tui_test

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestCostAndProfileMoveUnderTmux drives the real binary against a daemon
// whose fake profile prices its model: after a turn the status line shows
// the session's tokens and cost and /cost its breakdown; `/model -p
// second` moves the session to a second profile at another fake server,
// the TUI says the endpoint changed, and the next prompt reaches that
// server only.
func TestCostAndProfileMoveUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake, second := modeltest.New(t), modeltest.New(t)
	fake.Script(modeltest.Text("priced answer"), modeltest.Usage(1000, 200))
	second.Script(modeltest.Text("answer from the second profile"), modeltest.Usage(50, 5))
	writeConfig(t, home, fake.URL())
	extra := `
[providers.fake.models.fake-model]
input_price = 2
output_price = 10

[providers.second]
base_url = "` + second.URL() + `/v1"
model = "second-model"
wire_api = "chat"
api_key_env = ""
`
	appendConfig(t, home, extra)
	p := attachTUI(t, scv, home, ws, 110, 32)

	p.submit("what does it cost?")
	// 1,000 prompt tokens at $2 and 200 answer tokens at $10 per million.
	p.waitFor("priced answer", "1.2k tok · $0.004")
	p.submit("/cost")
	p.waitFor("cost of this session", "what does it cost?", "total")

	p.submit("/model -p second")
	p.waitFor("endpoint changed: "+fake.URL()+" → "+second.URL()+"/v1", "profile second · model: second-model")
	p.submit("and now?")
	s := p.waitFor("answer from the second profile", "1.3k tok · $0.004")
	if strings.Contains(s, "turn failed") {
		t.Errorf("a turn failed:\n%s", s)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the first profile's server got %d requests, want 1", n)
	}
	if r := second.Requests(); len(r) != 1 || r[0].Path != "/v1/chat/completions" || r[0].Body["model"] != "second-model" {
		t.Errorf("the second profile's server got %v", r)
	}
	p.quit()
}
