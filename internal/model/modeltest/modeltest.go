// Package modeltest is a scripted fake model server for tests: it speaks
// the three wire APIs (POST /responses, /chat/completions and
// /v1/messages, streamed), replays one queued script per request and
// records every request so tests can assert what SCV sent.
package modeltest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Handler is the fake provider as an http.Handler, usable without a
// testing.TB (e.g. from a standalone binary).
type Handler struct {
	// OnRequest, if set before serving, sees each request as it is
	// recorded (called with the handler's lock held, in arrival order).
	OnRequest func(Recorded)
	// Models, if set before serving, answers GET …/models with these ids
	// in the OpenAI shape {"data":[{"id":…}]}; such a listing uses no
	// script and is not recorded.
	Models []string
	// Respond, if set before serving, answers every request from its path
	// and raw body instead of the script queue, and such requests are not
	// recorded or decoded: a load driver's fake model keeps no state per
	// request.
	Respond func(path string, body []byte) []Step

	mu       sync.Mutex
	scripts  [][]Step
	requests []Recorded
}

// NewHandler returns a handler with an empty script queue.
func NewHandler() *Handler { return &Handler{} }

// Script queues the steps that answer the next unanswered request.
func (h *Handler) Script(steps ...Step) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.scripts = append(h.scripts, steps)
}

// Pending is the number of scripted responses not yet used.
func (h *Handler) Pending() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.scripts)
}

// Requests returns a copy of every request received, in order.
func (h *Handler) Requests() []Recorded {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Recorded(nil), h.requests...)
}

// Server is a Handler on an httptest server, closed when the test ends.
type Server struct {
	*Handler
	srv *httptest.Server
}

// New starts a fake model server on 127.0.0.1.
func New(tb testing.TB) *Server {
	tb.Helper()
	h := NewHandler()
	s := &Server{Handler: h, srv: httptest.NewServer(h)}
	tb.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL to configure as base_url (no trailing slash).
func (s *Server) URL() string { return s.srv.URL }

// Recorded is one request as the server received it.
type Recorded struct {
	Method string
	Path   string
	Header http.Header
	// Body is the decoded JSON body (nil if it was not JSON).
	Body map[string]any
	Raw  []byte
	// Unscripted is set when no script was left; the server answered 500.
	Unscripted bool
}

// Wire is "responses", "chat" or "anthropic" from the path, or "" for
// other paths.
func (r Recorded) Wire() string {
	switch {
	case strings.HasSuffix(r.Path, "/responses"):
		return "responses"
	case strings.HasSuffix(r.Path, "/chat/completions"):
		return "chat"
	case strings.HasSuffix(r.Path, "/messages"):
		return "anthropic"
	}
	return ""
}

// ToolNames lists the function tools offered, in order, on any wire
// (Anthropic tool definitions have no type).
func (r Recorded) ToolNames() []string {
	var names []string
	for _, t := range objects(r.Body["tools"]) {
		if typ, ok := t["type"]; ok && typ != "function" && typ != "custom" {
			continue
		}
		if f, ok := t["function"].(map[string]any); ok {
			t = f
		}
		if n, ok := t["name"].(string); ok {
			names = append(names, n)
		}
	}
	return names
}

// HasHostedWebSearch reports whether the provider's web search was
// offered ({"type":"web_search"}, or Anthropic's web_search_YYYYMMDD).
func (r Recorded) HasHostedWebSearch() bool {
	for _, t := range objects(r.Body["tools"]) {
		if typ, _ := t["type"].(string); typ == "web_search" || strings.HasPrefix(typ, "web_search_") {
			return true
		}
	}
	return false
}

// InputItems are the Responses `input` items.
func (r Recorded) InputItems() []map[string]any { return objects(r.Body["input"]) }

// Messages are the chat or Anthropic `messages`.
func (r Recorded) Messages() []map[string]any { return objects(r.Body["messages"]) }

func objects(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") && h.Models != nil {
		data := make([]map[string]any, len(h.Models))
		for i, id := range h.Models {
			data[i] = map[string]any{"id": id, "object": "model"}
		}
		b, _ := json.Marshal(map[string]any{"object": "list", "data": data})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if h.Respond != nil {
		h.play(w, r, Recorded{Path: r.URL.Path}, h.Respond(r.URL.Path, raw))
		return
	}
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &rec.Body)
	h.mu.Lock()
	var steps []Step
	if len(h.scripts) == 0 {
		rec.Unscripted = true
	} else {
		steps, h.scripts = h.scripts[0], h.scripts[1:]
	}
	n := len(h.requests) + 1
	h.requests = append(h.requests, rec)
	if h.OnRequest != nil {
		h.OnRequest(rec)
	}
	h.mu.Unlock()

	if rec.Unscripted {
		msg := fmt.Sprintf("modeltest: request %d (%s %s) has no script: queue one with Script(...)", n, r.Method, r.URL.Path)
		writeJSONError(w, http.StatusInternalServerError, msg)
		return
	}
	h.play(w, r, rec, steps)
}

// play answers one request with its steps on the request's wire.
func (h *Handler) play(w http.ResponseWriter, r *http.Request, rec Recorded, steps []Step) {
	for _, s := range steps {
		if e := s.HTTPError; e != nil {
			if e.RetryAfter != "" {
				w.Header().Set("Retry-After", e.RetryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.Status)
			_, _ = io.WriteString(w, e.Body)
			return
		}
	}
	var enc encoder
	switch rec.Wire() {
	case "responses":
		enc = &responsesEncoder{}
	case "chat":
		enc = &chatEncoder{}
	case "anthropic":
		enc = &anthropicEncoder{}
	default:
		writeJSONError(w, http.StatusNotFound, "modeltest: unknown path "+r.URL.Path)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	play(r.Context(), w, enc, steps)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "modeltest"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// SentImage is one input image found in a request: its media type and
// its decoded bytes (nil when the base64 did not decode).
type SentImage struct {
	MediaType string
	Data      []byte
}

// Images lists the input images of the request's messages, in order, on
// any wire: Responses input_image parts, chat image_url parts and
// Anthropic image blocks, each holding base64 data.
func (r Recorded) Images() []SentImage {
	var out []SentImage
	fromURL := func(u string) {
		rest, ok := strings.CutPrefix(u, "data:")
		mt, b64, ok2 := strings.Cut(rest, ";base64,")
		if !ok || !ok2 {
			out = append(out, SentImage{})
			return
		}
		data, _ := base64.StdEncoding.DecodeString(b64)
		out = append(out, SentImage{MediaType: mt, Data: data})
	}
	items := r.InputItems()
	items = append(items, r.Messages()...)
	for _, m := range items {
		for _, p := range objects(m["content"]) {
			switch p["type"] {
			case "input_image":
				u, _ := p["image_url"].(string)
				fromURL(u)
			case "image_url":
				iu, _ := p["image_url"].(map[string]any)
				u, _ := iu["url"].(string)
				fromURL(u)
			case "image":
				src, _ := p["source"].(map[string]any)
				mt, _ := src["media_type"].(string)
				b64, _ := src["data"].(string)
				data, _ := base64.StdEncoding.DecodeString(b64)
				out = append(out, SentImage{MediaType: mt, Data: data})
			}
		}
	}
	return out
}
