package tui

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// The client's overrides and provider key (scv flags, SCV_* environment)
// go with every session the TUI opens after its first: /new starts one
// with them, and the resume after a reconnect carries the key and the
// endpoint overrides (not --model: a /model choice since stays), so a
// daemon started with other settings or without the key neither wins
// silently nor fails.
func TestClientSettingsOnLaterSessions(t *testing.T) {
	client := ClientSettings{Model: "client-model", Provider: "openai", BaseURL: "http://relay.example/v1",
		ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: "sk-client", ProviderKeyBaseURL: "http://relay.example/v1"}
	rd := &redialer{rec: &recorder{}, up: true}
	h := newHarness(t, func(c *Config) {
		c.Client = client
		c.Redial = rd.dial
		c.RedialDelay = func(int) time.Duration { return 0 }
	})
	h.submit("/new")
	want := []any{&proto.SessionStart{Envelope: proto.Envelope{RequestID: "tui-1"}, Cwd: sessionStarted.Cwd, Model: "client-model",
		Provider: "openai", BaseURL: "http://relay.example/v1", Origin: proto.OriginTUI, ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: "sk-client",
		ProviderKeyBaseURL: "http://relay.example/v1"}}
	if d := cmp.Diff(want, h.rec.take()); d != "" {
		t.Errorf("/new sent (-want +got):\n%s", d)
	}

	_, cmd := h.m.Update(DisconnectedMsg{Err: errors.New("EOF")})
	h.run(cmd)
	h.keys(enter)
	wantResume := []any{&proto.SessionResume{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: sessionStarted.SessionID,
		Provider: "openai", BaseURL: "http://relay.example/v1",
		ProviderKeyEnv: "OPENAI_API_KEY", ProviderKey: "sk-client", ProviderKeyBaseURL: "http://relay.example/v1"}}
	if d := cmp.Diff(wantResume, rd.rec.take()); d != "" {
		t.Errorf("the resume after a reconnect sent (-want +got):\n%s", d)
	}
}
