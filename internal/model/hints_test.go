package model_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model"
)

// TestErrorsSayWhatToDo: a refused key names where the key came from
// (never the key), a missing model names the commands that list the
// endpoint's models, and a server that is not running is asked about by
// its base URL.
func TestErrorsSayWhatToDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/denied"):
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided"}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"The model 'nope' does not exist"}}`))
		}
	}))
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String() + "/v1"
	closed.Close()

	stream := func(base, key, source string) string {
		c, err := model.New(model.Options{WireAPI: "chat", BaseURL: base, APIKey: key, KeySource: source, Model: "nope", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}, func(model.Delta) {})
		if err == nil {
			t.Fatalf("%s: no error", base)
		}
		return err.Error()
	}
	for _, tc := range []struct {
		name, base, key, source string
		want                    []string
	}{
		{"401 names the variable", srv.URL + "/denied", "sk-wrong-1234", "OPENAI_API_KEY (providers.openai.api_key_env)",
			[]string{"HTTP 401 Unauthorized: the provider refused the key from OPENAI_API_KEY (providers.openai.api_key_env)", "(the provider said: Incorrect API key provided)"}},
		{"401 without a key", srv.URL + "/denied", "", "", []string{"no API key was sent: name the variable that holds it with api_key_env"}},
		{"404 names scv models", srv.URL + "/v1", "sk-x-1234", "", []string{"HTTP 404 Not Found: no such model or path at " + srv.URL + "/v1: `/model` or `scv models` lists what this endpoint serves"}},
		{"refused connection", deadURL, "sk-x-1234", "", []string{"is the server at " + deadURL + " running? (connection refused)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := stream(tc.base, tc.key, tc.source)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\nlacks %q", msg, w)
				}
			}
			if tc.key != "" && strings.Contains(msg, tc.key) {
				t.Errorf("error shows the key: %q", msg)
			}
		})
	}
	// The listing itself: its 404 points at base_url, not at itself.
	c, _ := model.New(model.Options{WireAPI: "chat", BaseURL: srv.URL + "/v1", APIKey: "sk-x-1234"})
	_, err = c.(model.Lister).ListModels(context.Background())
	if err == nil || !strings.Contains(err.Error(), "has no model listing (GET /models): check base_url") {
		t.Errorf("listing 404: %v", err)
	}
}
