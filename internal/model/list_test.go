package model_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
)

// TestListModels asks a loopback /models endpoint through each wire's
// client: the ids come back sorted, with the wire's own authentication;
// an error status, an answer of another shape, an oversized answer and a
// redirect are errors that say what happened, never echoing the key.
func TestListModels(t *testing.T) {
	var auth, key, query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, key, query = r.Header.Get("Authorization"), r.Header.Get("x-api-key"), r.URL.RawQuery
		switch r.URL.Path {
		case "/ok/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"zeta"},{"id":"alpha","owned_by":"x"},{"id":""}]}`))
		case "/denied/models":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"bad key sk-secret-123"}}`))
		case "/shape/models":
			_, _ = w.Write([]byte(`{"models":["a"]}`))
		case "/huge/models":
			_, _ = w.Write([]byte(`{"data":[` + strings.Repeat(`{"id":"m"},`, 500_000) + `{"id":"m"}]}`))
		case "/moved/models":
			http.Redirect(w, r, "/ok/models", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	list := func(wire, base string) ([]string, error) {
		c, err := model.New(model.Options{WireAPI: wire, BaseURL: srv.URL + base, APIKey: "sk-secret-123", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		return c.(model.Lister).ListModels(context.Background())
	}
	for _, wire := range []string{"responses", "chat", "anthropic"} {
		ids, err := list(wire, "/ok")
		if err != nil || !cmp.Equal(ids, []string{"alpha", "zeta"}) {
			t.Errorf("%s: %q, %v", wire, ids, err)
		}
		if wire == "anthropic" && key != "sk-secret-123" || wire != "anthropic" && auth != "Bearer sk-secret-123" {
			t.Errorf("%s: authorization %q, x-api-key %q", wire, auth, key)
		}
		if want := map[bool]string{true: "limit=1000"}[wire == "anthropic"]; query != want {
			t.Errorf("%s: query %q, want %q", wire, query, want)
		}
	}
	for base, want := range map[string]string{
		"/denied": "listing models: HTTP 401 Unauthorized: the provider refused the key: check that it is a valid key for 127.0.0.1:",
		"/shape":  `listing models: the answer is not {"data":[{"id":…}]}`,
		"/huge":   "listing models: the answer is larger than 4194304 bytes",
		"/moved":  "redirect, which is refused",
	} {
		_, err := list("chat", base)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "sk-secret-123") {
			t.Errorf("%s: %v, want it to contain %q and not the key", base, err, want)
		}
	}
}
