package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/config"
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
