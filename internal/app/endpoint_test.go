package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

func TestOrigin(t *testing.T) {
	for _, tt := range []struct{ a, b string }{
		{"https://API.example.com/v1", "https://api.example.com:443/other"},
		{"http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"},
	} {
		if !sameOrigin(tt.a, tt.b) {
			t.Errorf("sameOrigin(%q, %q) = false", tt.a, tt.b)
		}
	}
	for _, tt := range []struct{ a, b string }{
		{"http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1"},
		{"http://api.example.com/v1", "https://api.example.com/v1"},
		{"https://api.example.com/v1", "https://api.example.com.evil.test/v1"},
		{"", ""},
		{"ftp://x/", "ftp://x/"},
	} {
		if sameOrigin(tt.a, tt.b) {
			t.Errorf("sameOrigin(%q, %q) = true", tt.a, tt.b)
		}
	}
}

func TestResumeOverrides(t *testing.T) {
	stored := server.Endpoint{Provider: "relay", WireAPI: "chat", BaseURL: "http://a.test/v1", Model: "m1"}
	for _, tt := range []struct {
		name     string
		over     config.Overrides
		stored   server.Endpoint
		want     config.Overrides
		wantWire string
	}{
		{"stored", config.Overrides{}, stored, config.Overrides{Provider: "relay", Model: "m1", BaseURL: "http://a.test/v1"}, "chat"},
		{"model override keeps the endpoint", config.Overrides{Model: "m2"}, stored, config.Overrides{Provider: "relay", Model: "m2", BaseURL: "http://a.test/v1"}, "chat"},
		{"base URL override takes the profile's wire", config.Overrides{BaseURL: "http://b.test/v1"}, stored, config.Overrides{Provider: "relay", Model: "m1", BaseURL: "http://b.test/v1"}, ""},
		{"same profile named", config.Overrides{Provider: "relay"}, stored, config.Overrides{Provider: "relay", Model: "m1", BaseURL: "http://a.test/v1"}, "chat"},
		{"another profile is the configuration's", config.Overrides{Provider: "openai"}, stored, config.Overrides{Provider: "openai"}, ""},
		{"stored before endpoints", config.Overrides{}, server.Endpoint{Provider: "relay", Model: "m1"}, config.Overrides{Provider: "relay", Model: "m1"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, wire := resumeOverrides(tt.over, tt.stored)
			if d := cmp.Diff(tt.want, got); d != "" || wire != tt.wantWire {
				t.Errorf("overrides (-want +got):\n%s wire %q, want %q", d, wire, tt.wantWire)
			}
		})
	}
}

// TestStoredEndpoint: a stored session is rebuilt at its stored wire and
// base URL; an explicit base URL takes the profile's configured wire; the
// process's key is not given to a stored endpoint it is not for (and a
// KeyOptional app still opens the session, whose requests then fail with
// that message).
func TestStoredEndpoint(t *testing.T) {
	f := newFixture(t, "")
	stored := server.Endpoint{Provider: "openai", WireAPI: "chat", BaseURL: f.fake.URL() + "/v1", Model: "m-stored"}
	_, info, err := f.app.NewSession(t.Context(), "s1", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws}, Stored: &stored})
	if err != nil {
		t.Fatal(err)
	}
	if info.WireAPI != "chat" || info.BaseURL != stored.BaseURL || info.Model != "m-stored" {
		t.Errorf("stored session built at %s %s %s, want the stored endpoint", info.WireAPI, info.BaseURL, info.Model)
	}
	_, info, err = f.app.NewSession(t.Context(), "s2", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws, BaseURL: f.fake.URL()}, Stored: &stored})
	if err != nil {
		t.Fatal(err)
	}
	if info.WireAPI != "responses" || info.BaseURL != f.fake.URL() {
		t.Errorf("overridden base URL built at %s %s, want the profile's wire at the override", info.WireAPI, info.BaseURL)
	}
	elsewhere := stored
	elsewhere.BaseURL = "http://127.0.0.1:1/v1"
	_, _, err = f.app.NewSession(t.Context(), "s3", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws}, Stored: &elsewhere})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY of this server is for "+origin(f.fake.URL())) {
		t.Errorf("a stored endpoint the key is not for: %v", err)
	}
	f.app.opts.KeyOptional = true
	if _, _, err := f.app.NewSession(t.Context(), "s4", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws}, Stored: &elsewhere}); err != nil {
		t.Errorf("KeyOptional: %v, want a session whose requests fail", err)
	}
}
