package model_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
)

// TestClientsShareOnePool: the model clients of different sessions reuse
// one connection to the same endpoint, and each request still carries
// its own client's key (the pool holds connections, never credentials).
// A pool per client kept a closed session's idle connection alive for
// 90 s.
func TestClientsShareOnePool(t *testing.T) {
	var mu sync.Mutex
	var conns int
	var keys []string
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"type":"response.output_text.delta","delta":"ok"}`+"\n\n"+`data: {"type":"response.completed","response":{}}`+"\n\n")
	}))
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)

	for _, key := range []string{"sk-first", "sk-second", "sk-third"} {
		c, err := model.New(model.Options{BaseURL: hs.URL, APIKey: key, Model: "m1", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := run(t, c, hello)
		if err != nil || r.Content != "ok" {
			t.Fatalf("client %s: %+v, %v", key, r, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"Bearer sk-first", "Bearer sk-second", "Bearer sk-third"}, keys); d != "" {
		t.Errorf("keys sent (-want +got):\n%s", d)
	}
	if conns != 1 {
		t.Errorf("three clients opened %d connections to one endpoint, want 1 (one shared pool)", conns)
	}
}
