package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

func usd(v float64) *float64 { return &v }

func raws(lines ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		out[i] = json.RawMessage(l)
	}
	return out
}

// TestCostStatusAndReport: the status line shows the session's tokens and
// cost, /cost one row per turn and the total; a turn without a price
// shows no cost and is counted apart.
func TestCostStatusAndReport(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Width = 100 })
	h.prompt("first question", "t1")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 1, ContextTokens: 900,
		Usage: &proto.Usage{InputTokens: 10000, OutputTokens: 2300, TotalTokens: 12300, CacheReadTokens: 8000, CostUSD: usd(0.042)}})
	if f := h.frame(); !strings.Contains(f, "12.3k tok · $0.042") {
		t.Errorf("status line lacks the session's tokens and cost:\n%s", f)
	}
	h.prompt("second\nwith two lines", "t2")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t2"), Steps: 1, Usage: &proto.Usage{InputTokens: 500, OutputTokens: 100, TotalTokens: 600}})
	if f := h.frame(); !strings.Contains(f, "12.9k tok · $0.042") {
		t.Errorf("status line after an unpriced turn:\n%s", f)
	}
	h.rec.take()
	h.submit("/cost")
	if got := h.rec.take(); len(got) != 0 {
		t.Fatalf("/cost sent %v", got)
	}
	report := h.m.costReport()
	assertContains(t, "/cost", report,
		"  1     first question                   10.0k      2.3k      8.0k     $0.042",
		"  2     second                             500       100         0          —",
		"  total                                  10.5k      2.4k      8.0k     $0.042",
		"1 turn had no known price",
	)
	if !strings.Contains(h.frame(), "cost of this session") {
		t.Errorf("/cost is not shown:\n%s", h.frame())
	}
}

// TestCostUnknownModel: a model without a price shows tokens only.
func TestCostUnknownModel(t *testing.T) {
	h := newHarness(t, nil)
	if f := h.frame(); strings.Contains(f, " tok") {
		t.Errorf("tokens shown before any usage:\n%s", f)
	}
	h.prompt("hi", "t1")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 1, Usage: &proto.Usage{InputTokens: 900, OutputTokens: 300, TotalTokens: 1200}})
	f := h.frame()
	if !strings.Contains(f, "1.2k tok") || strings.Contains(f, "$") {
		t.Errorf("an unknown model's status line:\n%s", f)
	}
	if r := h.m.costReport(); !strings.Contains(r, "no price is known for this model: tokens only") {
		t.Errorf("/cost of an unknown model:\n%s", r)
	}
}

// TestCostResumed: a resumed session shows the total of all its stored
// turns (session.resumed usage), those not redrawn as one earlier row.
func TestCostResumed(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Width = 100 })
	h.m.st.resumeReq = "r1"
	h.ev(req("r1", &proto.SessionResumed{SessionID: "s2", Cwd: "/w", Model: "m", ContextMaxTokens: 1000, Tools: []string{},
		Usage:  &proto.Usage{InputTokens: 30000, OutputTokens: 3000, TotalTokens: 33000, CostUSD: usd(1.5)},
		Before: 5,
		Turns: []proto.StoredTurn{{TurnID: "t6", N: 6, Prompt: "latest", State: "completed",
			Usage: &proto.Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100, CostUSD: usd(0.25)},
			Events: raws(
				`{"type":"turn.started","session_id":"s2","seq":40,"turn_id":"t6"}`,
				`{"type":"assistant.completed","session_id":"s2","seq":41,"turn_id":"t6","content":"ok"}`,
				`{"type":"turn.completed","session_id":"s2","seq":42,"turn_id":"t6","steps":1,"usage":{"input_tokens":1000,"output_tokens":100,"total_tokens":1100,"cost_usd":0.25},"context_tokens":10}`,
			)}}}))
	if f := h.frame(); !strings.Contains(f, "33.0k tok · $1.500") {
		t.Errorf("a resumed session's status line does not show its total:\n%s", f)
	}
	r := h.m.costReport()
	assertContains(t, "/cost of a resumed session", r, "earlier turns (not shown)", "$1.250", "  6     latest", "$0.250", "$1.500")
}

// TestModelPickerProfiles: /model lists the session's models and a row
// per other profile; that row lists the profile's models, and picking one
// moves the session (session.configure with provider); the answer shows
// the endpoint change and the new window. /model -p PROFILE does it too.
func TestModelPickerProfiles(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Height = 16 })
	h.submit("/model")
	h.rec.take()
	h.ev(req("tui-1", &proto.ModelsListed{Current: "gpt-test", Models: []string{"gpt-big", "gpt-test"}, Provider: "openai",
		Profiles: []proto.Profile{{Name: "openai", WireAPI: "responses", BaseURL: "https://api.openai.com/v1", Model: "gpt-test"},
			{Name: "local", WireAPI: "chat", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen3:8b"}}}))
	f := h.frame()
	if !strings.Contains(f, "⇄ profile local · qwen3:8b") || !strings.Contains(f, "http://127.0.0.1:11434/v1") {
		t.Fatalf("the picker lacks the other profile:\n%s", f)
	}
	h.keys(down, enter) // gpt-test is current; down to the profile row
	want := []any{&proto.ModelsList{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1", Provider: "local"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("the profile row sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.ModelsListed{Current: "gpt-test", Models: []string{"llama3", "qwen3:8b"}, Provider: "local"}))
	f = h.frame()
	if !strings.Contains(f, "Models of profile local") || !strings.Contains(f, "the profile's model") {
		t.Fatalf("the profile's models:\n%s", f)
	}
	h.keys(enter) // llama3
	want = []any{&proto.SessionConfigure{Envelope: proto.Envelope{RequestID: "tui-3"}, SessionID: "s1", Provider: "local", Model: "llama3"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Fatalf("picking another profile's model sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-3", &proto.SessionConfigured{Model: "llama3", ContextMaxTokens: 8192, Provider: "local",
		BaseURL: "http://127.0.0.1:11434/v1", PreviousBaseURL: "https://api.openai.com/v1"}))
	f = h.frame()
	for _, w := range []string{"endpoint changed: https://api.openai.com/v1 → http://127.0.0.1:11434/v1", "profile local · model: llama3", "scv │ llama3 │", "ctx 8.2k"} {
		if !strings.Contains(f, w) {
			t.Errorf("after the move the frame lacks %q:\n%s", w, f)
		}
	}
	h.submit("/model -p openai")
	want = []any{&proto.SessionConfigure{Envelope: proto.Envelope{RequestID: "tui-4"}, SessionID: "s1", Provider: "openai"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("/model -p sent (-want +got):\n%s", d)
	}
	// A profile whose models cannot be listed still offers its own.
	h.submit("/model")
	h.rec.take()
	h.ev(req("tui-5", &proto.ModelsListed{Current: "gpt-test", Models: []string{"gpt-test"}, Provider: "openai",
		Profiles: []proto.Profile{{Name: "openai", Model: "gpt-test"}, {Name: "local", Model: "qwen3:8b"}}}))
	h.keys(down, enter)
	h.rec.take()
	h.ev(req("tui-6", &proto.Error{Code: proto.ErrInvalidRequest, Message: "connection refused"}))
	if f := h.frame(); !strings.Contains(f, "qwen3:8b") || !strings.Contains(f, "could not be listed") {
		t.Errorf("a failed profile listing:\n%s", f)
	}
}
