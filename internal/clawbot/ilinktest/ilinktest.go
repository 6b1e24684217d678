// Package ilinktest is a scriptable fake of WeChat's iLink bot API for
// tests: QR login (codes and their status answers), long-polled
// getupdates batches, and sendmessage answers, with every request
// recorded. It listens on 127.0.0.1 only.
package ilinktest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Answer is one scripted HTTP answer: a status (200 when 0) and a body,
// given as a value to encode as JSON or as Raw text.
type Answer struct {
	Status int
	JSON   any
	Raw    string
	// Hold delays the answer (a long poll that waits).
	Hold time.Duration
}

// Request is one request as the server received it.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
	Raw                 []byte
	// At is when the request arrived.
	At time.Time
}

// Sent is one sendmessage request's message.
type Sent struct {
	To, ClientID, ContextToken, Text string
	Header                           http.Header
	Body                             map[string]any
}

// Server is the fake.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	idleHold time.Duration
	maxBatch int
	changed  chan struct{}
	codes    [][]Answer // per QR code: its status answers; the last repeats
	codeN    int
	statusN  map[string]int
	polls    []Answer
	posted   []any // the message log Post appends to
	sends    []Answer
	requests []Request
	sent     []Sent
	cursors  []string
	closed   bool
}

// New starts a fake server, closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{idleHold: 200 * time.Millisecond, changed: make(chan struct{}), statusN: map[string]int{}}
	s.srv = httptest.NewServer(s)
	tb.Cleanup(s.Close)
	return s
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server (held polls end).
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.changed)
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

func (s *Server) notify() {
	// Called with mu held.
	if !s.closed {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// SetIdleHold sets how long a getupdates with nothing to answer waits
// before answering an empty batch (200 ms at first; the real service waits
// about 35 s).
func (s *Server) SetIdleHold(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idleHold = d
}

// SetMaxBatch makes a poll answered from the message log get at most n
// messages (0: all of them, the default), as the real service hands a
// backlog out in bounded batches.
func (s *Server) SetMaxBatch(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxBatch = n
}

// LoginCode adds a QR code that get_bot_qrcode hands out (in order); its
// status polls get statuses in order, the last one repeating.
func (s *Server) LoginCode(statuses ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes = append(s.codes, statuses)
}

// Status is a get_qrcode_status answer with the given status and fields.
func Status(status string, fields ...string) Answer {
	m := map[string]any{"status": status}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i]] = fields[i+1]
	}
	return Answer{JSON: m}
}

// Poll queues a getupdates answer.
func (s *Server) Poll(a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls = append(s.polls, a)
	s.notify()
}

// Post appends messages to the server's message log. A poll with no
// queued answer gets the messages after its cursor's position ("pos-N";
// any other cursor is position 0) and the cursor of the log's end, as the
// real service does: a message is delivered again to a poll that repeats
// an old cursor, and nothing is lost with a poll whose client died.
func (s *Server) Post(msgs ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posted = append(s.posted, msgs...)
	s.notify()
}

// Batch queues a successful getupdates answer with msgs and cursor.
func (s *Server) Batch(cursor string, msgs ...any) {
	if msgs == nil {
		msgs = []any{}
	}
	s.Poll(Answer{JSON: map[string]any{"ret": 0, "msgs": msgs, "get_updates_buf": cursor}})
}

// SendAnswer queues a sendmessage answer; without one, a send gets 200
// {"ret":0}.
func (s *Server) SendAnswer(a ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sends = append(s.sends, a...)
}

// SetSendAnswers replaces the queued sendmessage answers.
func (s *Server) SetSendAnswers(a ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sends = append([]Answer(nil), a...)
}

// Text is a user's text message.
func Text(id any, from, text string) map[string]any {
	return map[string]any{"message_id": id, "from_user_id": from, "to_user_id": "bot", "message_type": 1,
		"context_token": "ctx-" + fmt.Sprint(id), "item_list": []any{map[string]any{"type": 1, "text_item": map[string]any{"text": text}}},
		"create_time_ms": 1700000000000}
}

// GroupText is a user's text message in a group.
func GroupText(id any, group, from, text string) map[string]any {
	m := Text(id, from, text)
	m["group_id"] = group
	return m
}

// Requests returns every request so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Sent returns every sendmessage request so far (retries included).
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// SentCount is the number of sendmessage requests so far (Sent without
// the copy, for waiting on a flood).
func (s *Server) SentCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// Cursors returns the get_updates_buf of every getupdates so far.
func (s *Server) Cursors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cursors...)
}

// PendingPolls is the number of queued getupdates answers not yet served.
func (s *Server) PendingPolls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.polls)
}

// WaitFor polls cond until it holds or limit passes; false on timeout.
func (s *Server) WaitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(20 * time.Millisecond):
		}
	}
	return cond()
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw, At: time.Now()}
	_ = json.Unmarshal(raw, &req.Body)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.notify()
	s.mu.Unlock()
	switch r.URL.Path {
	case "/ilink/bot/get_bot_qrcode":
		s.qrcode(w)
	case "/ilink/bot/get_qrcode_status":
		s.qrStatus(w, r.URL.Query().Get("qrcode"))
	case "/ilink/bot/getupdates":
		s.getUpdates(r.Context(), w, req)
	case "/ilink/bot/sendmessage":
		s.sendMessage(w, req)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) qrcode(w http.ResponseWriter) {
	s.mu.Lock()
	n := s.codeN
	s.codeN++
	s.mu.Unlock()
	code := "qr-" + strconv.Itoa(n)
	write(w, Answer{JSON: map[string]any{"qrcode": code, "qrcode_img_content": "https://liteapp.weixin.qq.com/q/" + code + "?bot_type=3"}})
}

func (s *Server) qrStatus(w http.ResponseWriter, code string) {
	s.mu.Lock()
	var n int
	if _, err := fmt.Sscanf(code, "qr-%d", &n); err != nil || n >= len(s.codes) || len(s.codes[n]) == 0 {
		s.mu.Unlock()
		write(w, Answer{Status: 404, JSON: map[string]any{"ret": -1, "errmsg": "unknown qrcode"}})
		return
	}
	list := s.codes[n]
	i := min(s.statusN[code], len(list)-1)
	s.statusN[code]++
	a := list[i]
	s.mu.Unlock()
	write(w, a)
}

func (s *Server) getUpdates(ctx context.Context, w http.ResponseWriter, req Request) {
	cursor, _ := req.Body["get_updates_buf"].(string)
	pos := 0
	if n, err := strconv.Atoi(strings.TrimPrefix(cursor, "pos-")); err == nil && strings.HasPrefix(cursor, "pos-") {
		pos = n
	}
	s.mu.Lock()
	s.cursors = append(s.cursors, cursor)
	deadline := time.After(s.idleHold)
	for len(s.polls) == 0 && len(s.posted) <= pos && !s.closed {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-deadline:
			write(w, Answer{JSON: map[string]any{"msgs": []any{}, "get_updates_buf": cursor}})
			return
		}
		s.mu.Lock()
	}
	if s.closed {
		s.mu.Unlock()
		return
	}
	if len(s.polls) == 0 {
		end := len(s.posted)
		if s.maxBatch > 0 {
			end = min(end, pos+s.maxBatch)
		}
		msgs := append([]any(nil), s.posted[pos:end]...)
		next := "pos-" + strconv.Itoa(end)
		s.mu.Unlock()
		write(w, Answer{JSON: map[string]any{"msgs": msgs, "get_updates_buf": next}})
		return
	}
	a := s.polls[0]
	s.polls = s.polls[1:]
	s.notify()
	s.mu.Unlock()
	write(w, a)
}

func (s *Server) sendMessage(w http.ResponseWriter, req Request) {
	msg, _ := req.Body["msg"].(map[string]any)
	str := func(k string) string { v, _ := msg[k].(string); return v }
	text := ""
	if items, ok := msg["item_list"].([]any); ok && len(items) > 0 {
		if it, ok := items[0].(map[string]any); ok {
			if ti, ok := it["text_item"].(map[string]any); ok {
				text, _ = ti["text"].(string)
			}
		}
	}
	s.mu.Lock()
	s.sent = append(s.sent, Sent{To: str("to_user_id"), ClientID: str("client_id"), ContextToken: str("context_token"), Text: text, Header: req.Header, Body: req.Body})
	a := Answer{JSON: map[string]any{"ret": 0}}
	if len(s.sends) > 0 {
		a, s.sends = s.sends[0], s.sends[1:]
	}
	s.notify()
	s.mu.Unlock()
	write(w, a)
}

func write(w http.ResponseWriter, a Answer) {
	if a.Hold > 0 {
		time.Sleep(a.Hold)
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	if a.Raw != "" || a.JSON == nil {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, a.Raw)
		return
	}
	b, _ := json.Marshal(a.JSON)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
