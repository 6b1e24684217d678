package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/model/modeltest"
)

var wires = []string{model.WireResponses, model.WireChat, model.WireAnthropic}

const testKey = "sk-test-SECRET-1234567890"

// sleeps records retry waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func newClient(t *testing.T, wire, baseURL string, edit func(*model.Options)) (model.Client, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	opts := model.Options{WireAPI: wire, BaseURL: baseURL, APIKey: testKey, Model: "m1", MaxRetries: 2, Sleep: sl.sleep}
	if edit != nil {
		edit(&opts)
	}
	c, err := model.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

// run streams req and returns the response, the answer deltas and the
// error.
func run(t *testing.T, c model.Client, req model.Request) (model.Response, []string, error) {
	t.Helper()
	var deltas []string
	r, err := c.Stream(t.Context(), req, func(d model.Delta) {
		if d.Kind == model.DeltaText {
			deltas = append(deltas, d.Text)
		}
	})
	return r, deltas, err
}

var hello = model.Request{Messages: []model.Message{{Role: model.User, Content: "hi"}}}

func TestTextInFragmentsWithUsage(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Text("hel", "lo", " world"), modeltest.Usage(3, 5))
			c, _ := newClient(t, wire, srv.URL(), nil)
			r, deltas, err := run(t, c, hello)
			if err != nil {
				t.Fatal(err)
			}
			want := model.Response{Content: "hello world", Usage: &model.Usage{InputTokens: 3, OutputTokens: 5, TotalTokens: 8}}
			if d := cmp.Diff(want, r); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"hel", "lo", " world"}, deltas); d != "" {
				t.Errorf("deltas (-want +got):\n%s", d)
			}
		})
	}
}

func TestToolCallsAcrossChunks(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(
				modeltest.Text("Let me look."),
				modeltest.ToolCall("call_a", "read", `{"pa`, `th":`, ` "a.`, `txt"`, `}`),
				modeltest.ToolCall("call_b", "bash", `{"command":`, `"ls -l`, `a"}`),
				modeltest.ToolCall("call_c", "list"),
				modeltest.Usage(10, 20),
			)
			c, _ := newClient(t, wire, srv.URL(), nil)
			r, _, err := run(t, c, hello)
			if err != nil {
				t.Fatal(err)
			}
			want := model.Response{
				Content: "Let me look.",
				ToolCalls: []model.ToolCall{
					{ID: "call_a", Name: "read", Arguments: `{"path": "a.txt"}`},
					{ID: "call_b", Name: "bash", Arguments: `{"command":"ls -la"}`},
					{ID: "call_c", Name: "list", Arguments: `{}`},
				},
				Usage: &model.Usage{InputTokens: 10, OutputTokens: 20, TotalTokens: 30},
			}
			if d := cmp.Diff(want, r); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
		})
	}
}

func TestInvalidToolArguments(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.ToolCall("c1", "write", `{"path":`, `"x"`))
			c, _ := newClient(t, wire, srv.URL(), nil)
			r, _, err := run(t, c, hello)
			wantErr(t, err, model.CodeProvider, `invalid JSON arguments for tool "write"`)
			if d := cmp.Diff(model.Response{}, r); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
		})
	}
}

func TestEmptyAnswerIsAnError(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Usage(1, 0))
			c, _ := newClient(t, wire, srv.URL(), nil)
			_, _, err := run(t, c, hello)
			wantErr(t, err, model.CodeProvider, "empty answer")
		})
	}
}

// wantErr checks err is a one-line *model.Error with code, containing sub,
// at most 300 bytes and free of the key.
// wantResponse checks a stream's outcome: a provider_error containing
// wantErrText when it is set, else no error and exactly want. It reports
// whether the stream succeeded as wanted, for checks that follow.
func wantResponse(t *testing.T, r model.Response, err error, want model.Response, wantErrText string) bool {
	t.Helper()
	if wantErrText != "" {
		wantErr(t, err, model.CodeProvider, wantErrText)
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	return true
}

func wantErr(t *testing.T, err error, code, sub string) *model.Error {
	t.Helper()
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("error = %v (%T), want *model.Error", err, err)
	}
	if me.Code != code || !strings.Contains(me.Message, sub) {
		t.Errorf("error = %q, want code %s containing %q", me.Error(), code, sub)
	}
	if me.Message == "" || len(me.Message) > 300 || strings.ContainsAny(me.Message, "\r\n") {
		t.Errorf("message %q is not one non-empty line of at most 300 bytes", me.Message)
	}
	if strings.Contains(me.Error(), testKey) {
		t.Errorf("message %q contains the key", me.Message)
	}
	return me
}

func TestStreamErrorEvents(t *testing.T) {
	cases := []struct {
		name string
		step modeltest.Step
	}{
		{"error event", modeltest.StreamError("the server had an error processing your request")},
		{"response.failed", modeltest.Failed("the server had an error processing your request")},
	}
	for _, wire := range wires {
		for _, tc := range cases {
			t.Run(wire+"/"+tc.name, func(t *testing.T) {
				srv := modeltest.New(t)
				srv.Script(modeltest.Text("partial "), tc.step)
				c, _ := newClient(t, wire, srv.URL(), nil)
				_, _, err := run(t, c, hello)
				wantErr(t, err, model.CodeProvider, "the server had an error processing your request")
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("requests = %d, want 1 (no retry after streaming)", n)
				}
			})
		}
	}
}

func TestCutStreamIsNotRetried(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Text("par"), modeltest.ToolCall("c1", "bash", `{"com`), modeltest.Cut())
			srv.Script(modeltest.Text("never used"))
			c, sl := newClient(t, wire, srv.URL(), nil)
			r, _, err := run(t, c, hello)
			wantErr(t, err, model.CodeProvider, "stream ended before the response completed")
			if len(r.ToolCalls) != 0 {
				t.Errorf("tool calls returned from a cut stream: %v", r.ToolCalls)
			}
			if n := len(srv.Requests()); n != 1 || len(sl.got()) != 0 {
				t.Errorf("requests = %d, sleeps = %v; want 1 request and no retry", n, sl.got())
			}
		})
	}
}

func TestHTTPErrorsAndRetries(t *testing.T) {
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name     string
		script   [][]modeltest.Step
		retries  int
		wantErr  string // "" means success
		wantReqs int
		// wantSleeps are exact; a negative entry means "a backoff ≈ -d".
		wantSleeps []time.Duration
	}{
		{"429 retry-after seconds then ok", [][]modeltest.Step{{modeltest.HTTPError(429, `{"error":{"message":"Rate limit reached"}}`, "2")}, {modeltest.Text("ok")}}, 2, "", 2, []time.Duration{2 * time.Second}},
		{"retry-after capped at 60s", [][]modeltest.Step{{modeltest.HTTPError(429, `{}`, "120")}, {modeltest.Text("ok")}}, 2, "", 2, []time.Duration{60 * time.Second}},
		{"500 backoff then ok", [][]modeltest.Step{{modeltest.HTTPError(500, `oops`, "")}, {modeltest.HTTPError(503, `busy`, "")}, {modeltest.Text("ok")}}, 2, "", 3, []time.Duration{-time.Second, -2 * time.Second}},
		{"500 exhausts retries", [][]modeltest.Step{{modeltest.HTTPError(500, `{"error":{"message":"boom"}}`, "")}, {modeltest.HTTPError(502, `{"error":{"message":"boom"}}`, "")}, {modeltest.HTTPError(500, `{"error":{"message":"boom"}}`, "")}}, 2, "HTTP 500 Internal Server Error: boom (after 3 attempts)", 3, []time.Duration{-time.Second, -2 * time.Second}},
		{"no retries configured", [][]modeltest.Step{{modeltest.HTTPError(500, `{"error":{"message":"boom"}}`, "")}}, 0, "HTTP 500 Internal Server Error: boom", 1, nil},
		{"400 is not retried", [][]modeltest.Step{{modeltest.HTTPError(400, `{"error":{"message":"Invalid model"}}`, "")}}, 2, "HTTP 400 Bad Request: Invalid model", 1, nil},
		{"401 is not retried", [][]modeltest.Step{{modeltest.HTTPError(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`"}}`, "")}}, 2, "(the provider said: Incorrect API key provided: [redacted])", 1, nil},
	}
	for _, wire := range wires {
		for _, tc := range cases {
			t.Run(wire+"/"+tc.name, func(t *testing.T) {
				srv := modeltest.New(t)
				for _, s := range tc.script {
					srv.Script(s...)
				}
				c, sl := newClient(t, wire, srv.URL(), func(o *model.Options) { o.MaxRetries = tc.retries })
				r, _, err := run(t, c, hello)
				if tc.wantErr == "" {
					if err != nil || r.Content != "ok" {
						t.Fatalf("Stream = %q, %v; want ok", r.Content, err)
					}
				} else {
					me := wantErr(t, err, model.CodeProvider, tc.wantErr)
					if me.HTTPStatus == 0 {
						t.Errorf("HTTPStatus not set")
					}
				}
				if n := len(srv.Requests()); n != tc.wantReqs {
					t.Errorf("requests = %d, want %d", n, tc.wantReqs)
				}
				checkSleeps(t, sl.got(), tc.wantSleeps)
			})
		}
	}
	t.Run("retry-after http date", func(t *testing.T) {
		srv := modeltest.New(t)
		srv.Script(modeltest.HTTPError(503, `{}`, date))
		srv.Script(modeltest.Text("ok"))
		c, sl := newClient(t, model.WireResponses, srv.URL(), nil)
		if _, _, err := run(t, c, hello); err != nil {
			t.Fatal(err)
		}
		got := sl.got()
		if len(got) != 1 || got[0] < 25*time.Second || got[0] > 30*time.Second {
			t.Errorf("sleeps = %v, want one of about 30s", got)
		}
	})
}

func checkSleeps(t *testing.T, got, want []time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("sleeps = %v, want %v", got, want)
	}
	for i, w := range want {
		if w >= 0 && got[i] != w {
			t.Errorf("sleep %d = %v, want %v", i, got[i], w)
		}
		if w < 0 && (got[i] < -w*8/10 || got[i] > -w*12/10) {
			t.Errorf("sleep %d = %v, want %v ±20%%", i, got[i], -w)
		}
	}
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, sl := newClient(t, model.WireResponses, "http://"+addr+"/v1", func(o *model.Options) { o.MaxRetries = 3 })
	_, _, err = run(t, c, hello)
	wantErr(t, err, model.CodeProvider, "connect to model provider")
	wantErr(t, err, model.CodeProvider, "(after 4 attempts)")
	if n := len(sl.got()); n != 3 {
		t.Errorf("sleeps = %d, want 3", n)
	}
}

func TestRetryWhenStreamClosesBeforeAnyByte(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("ok"))
	// The first attempt closes before any byte of the body: a bare handler,
	// since every script starts with an event.
	var n int
	var mu sync.Mutex
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	c, sl := newClient(t, model.WireResponses, hs.URL, nil)
	r, _, err := run(t, c, hello)
	if err != nil || r.Content != "ok" {
		t.Fatalf("Stream = %q, %v; want ok after one retry", r.Content, err)
	}
	if len(sl.got()) != 1 {
		t.Errorf("sleeps = %v, want 1", sl.got())
	}
}

func TestLimits(t *testing.T) {
	small := model.Limits{MaxSSEEventBytes: 4096, MaxResponseBytes: 64 << 10, MaxAssistantBytes: 1000, MaxToolCalls: 2, MaxToolArgumentsBytes: 100}
	big := strings.Repeat("y", 300)
	cases := []struct {
		name   string
		limits model.Limits
		steps  []modeltest.Step
		code   string
		sub    string
	}{
		{"oversized event", small, []modeltest.Step{modeltest.ToolCall("c1", "bash", `{}`), modeltest.Oversized(5000)}, model.CodeResponse, "max_sse_event_bytes (4096)"},
		{"response bytes", model.Limits{MaxResponseBytes: 20000}, []modeltest.Step{modeltest.ToolCall("c1", "bash", `{}`), modeltest.Text(strings.Split(strings.Repeat(big+"|", 80), "|")...)}, model.CodeResponse, "max_response_bytes (20000)"},
		{"assistant bytes", small, []modeltest.Step{modeltest.ToolCall("c1", "bash", `{}`), modeltest.Text(big, big, big, big)}, model.CodeResponse, "max_assistant_bytes (1000)"},
		{"tool calls", small, []modeltest.Step{modeltest.ToolCall("c1", "a", `{}`), modeltest.ToolCall("c2", "b", `{}`), modeltest.ToolCall("c3", "c", `{}`)}, model.CodeTool, "max_tool_calls (2)"},
		{"argument bytes", small, []modeltest.Step{modeltest.ToolCall("c1", "write", `{"content":"`, big, `"}`)}, model.CodeTool, `"write" exceeded provider_limits.max_tool_arguments_bytes (100)`},
	}
	for _, wire := range wires {
		for _, tc := range cases {
			t.Run(wire+"/"+tc.name, func(t *testing.T) {
				srv := modeltest.New(t)
				srv.Script(tc.steps...)
				c, sl := newClient(t, wire, srv.URL(), func(o *model.Options) { o.Limits = tc.limits })
				r, _, err := run(t, c, hello)
				wantErr(t, err, tc.code, tc.sub)
				if d := cmp.Diff(model.Response{}, r); d != "" {
					t.Errorf("response (-want +got):\n%s", d)
				}
				if len(srv.Requests()) != 1 || len(sl.got()) != 0 {
					t.Errorf("a limit failure was retried")
				}
			})
		}
	}
}

func TestAssistantLimitStopsDeltas(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("12345", "67890", "abcde"))
	c, _ := newClient(t, model.WireChat, srv.URL(), func(o *model.Options) { o.Limits.MaxAssistantBytes = 12 })
	_, deltas, err := run(t, c, hello)
	wantErr(t, err, model.CodeResponse, "max_assistant_bytes")
	if d := cmp.Diff([]string{"12345", "67890"}, deltas); d != "" {
		t.Errorf("deltas (-want +got):\n%s", d)
	}
}

func TestKeyAndHeadersSent(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Text("ok"))
			c, _ := newClient(t, wire, srv.URL()+"/v1/", func(o *model.Options) {
				o.Headers = map[string]string{"X-Org": "org-secret-42", "X-Plain": "v"}
			})
			if _, _, err := run(t, c, hello); err != nil {
				t.Fatal(err)
			}
			rec := srv.Requests()[0]
			path := map[string]string{model.WireResponses: "/v1/responses", model.WireChat: "/v1/chat/completions", model.WireAnthropic: "/v1/messages"}[wire]
			got := []string{rec.Method, rec.Path, rec.Header.Get("Authorization"), rec.Header.Get("X-Api-Key"), rec.Header.Get("Anthropic-Version"),
				rec.Header.Get("X-Org"), rec.Header.Get("X-Plain"), rec.Header.Get("Accept")}
			want := []string{"POST", path, "Bearer " + testKey, "", "", "org-secret-42", "v", "text/event-stream"}
			if wire == model.WireAnthropic {
				want[2], want[3], want[4] = "", testKey, "2023-06-01"
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("request (-want +got):\n%s", d)
			}
		})
	}
}

func TestSecretsRedacted(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			body := `{"error":{"message":"bad key ` + testKey + ` with header org-secret-42\nsecond line ` + strings.Repeat("z", 400) + `"}}`
			srv.Script(modeltest.HTTPError(403, body, ""))
			c, _ := newClient(t, wire, srv.URL(), func(o *model.Options) {
				o.Headers = map[string]string{"X-Org": "org-secret-42"}
			})
			_, _, err := run(t, c, hello)
			me := wantErr(t, err, model.CodeProvider, "(the provider said: bad key [redacted] with header [redacted] second line zzz")
			if strings.Contains(me.Message, "org-secret-42") || !strings.HasSuffix(me.Message, "…") {
				t.Errorf("message %q: header secret present or not truncated", me.Message)
			}
		})
	}
}

func TestStreamErrorRedacted(t *testing.T) {
	srv := modeltest.New(t)
	srv.Script(modeltest.StreamError("key " + testKey + " revoked"))
	c, _ := newClient(t, model.WireResponses, srv.URL(), nil)
	_, _, err := run(t, c, hello)
	wantErr(t, err, model.CodeProvider, "key [redacted] revoked")
}

func TestRedirectsRefused(t *testing.T) {
	other := modeltest.New(t)
	other.Script(modeltest.Text("stolen"))
	for _, target := range []string{
		strings.Replace(other.URL(), "127.0.0.1", "localhost", 1), // another host
		other.URL(), // same host, other port
	} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		t.Cleanup(redirector.Close)
		c, sl := newClient(t, model.WireResponses, redirector.URL, nil)
		_, _, err := run(t, c, hello)
		wantErr(t, err, model.CodeProvider, "redirect")
		if len(sl.got()) != 0 {
			t.Errorf("redirect was retried")
		}
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("redirect target got %d requests, want 0", n)
	}
}

// TestEnvironmentIgnored must not run in parallel: it sets OPENAI_* vars.
func TestEnvironmentIgnored(t *testing.T) {
	decoy := modeltest.New(t)
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", decoy.URL())
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env: leaked")
	srv := modeltest.New(t)
	srv.Script(modeltest.Text("ok"))
	c, _ := newClient(t, model.WireResponses, srv.URL(), func(o *model.Options) { o.APIKey = "" })
	if _, _, err := run(t, c, hello); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	for _, k := range []string{"Authorization", "Openai-Organization", "Openai-Project", "X-Env"} {
		if v := h.Get(k); v != "" {
			t.Errorf("header %s = %q, want none", k, v)
		}
	}
	if n := len(decoy.Requests()); n != 0 {
		t.Errorf("OPENAI_BASE_URL got %d requests", n)
	}
}

func TestCancel(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Text("a", "b"))
			c, _ := newClient(t, wire, srv.URL(), nil)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, err := c.Stream(ctx, hello, nil)
			wantErr(t, err, model.CodeProvider, "cancelled")
			if !errors.Is(err, context.Canceled) || !model.IsCanceled(err) {
				t.Errorf("errors.Is(%v, context.Canceled) = false", err)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("data: {\"type\":\"response.created\"}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) })
	c, _ := newClient(t, model.WireResponses, hs.URL, func(o *model.Options) { o.Timeout = 200 * time.Millisecond })
	_, _, err := run(t, c, hello)
	wantErr(t, err, model.CodeProvider, "timed out after 200ms")
}

func TestUnscriptedRequest(t *testing.T) {
	srv := modeltest.New(t)
	c, _ := newClient(t, model.WireChat, srv.URL(), func(o *model.Options) { o.MaxRetries = 0 })
	_, _, err := run(t, c, hello)
	wantErr(t, err, model.CodeProvider, "has no script")
	recs := srv.Requests()
	if len(recs) != 1 || !recs[0].Unscripted {
		t.Errorf("requests = %+v, want one unscripted", recs)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []model.Options{
		{BaseURL: "http://x", WireAPI: "grpc"},
		{BaseURL: ""},
		{BaseURL: "ftp://x"},
		{BaseURL: "http://x", Headers: map[string]string{"X": "a\nb"}},
	} {
		if _, err := model.New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRetryLogRedacted(t *testing.T) {
	var buf bytes.Buffer
	srv := modeltest.New(t)
	srv.Script(modeltest.HTTPError(500, `{"error":{"message":"upstream rejected `+testKey+`"}}`, "1"))
	srv.Script(modeltest.Text("ok"))
	c, _ := newClient(t, model.WireResponses, srv.URL(), func(o *model.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	})
	if _, _, err := run(t, c, hello); err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	if !strings.Contains(log, "retrying") || !strings.Contains(log, "[redacted]") || strings.Contains(log, testKey) {
		t.Errorf("log = %q: want a redacted retry line", log)
	}
}

func TestCancelMidStream(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			srv := modeltest.New(t)
			srv.Script(modeltest.Text("partial"), modeltest.Hang())
			c, sl := newClient(t, wire, srv.URL(), nil)
			ctx, cancel := context.WithCancel(t.Context())
			_, err := c.Stream(ctx, hello, func(model.Delta) { cancel() })
			wantErr(t, err, model.CodeProvider, "cancelled")
			if !errors.Is(err, context.Canceled) || len(sl.got()) != 0 {
				t.Errorf("err = %v, sleeps = %v; want a cancellation and no retry", err, sl.got())
			}
		})
	}
}

func TestArgumentLimitIsPerCall(t *testing.T) {
	srv := modeltest.New(t)
	arg := `{"k":"` + strings.Repeat("v", 80) + `"}`
	srv.Script(modeltest.ToolCall("c1", "a", arg), modeltest.ToolCall("c2", "b", arg))
	c, _ := newClient(t, model.WireResponses, srv.URL(), func(o *model.Options) { o.Limits.MaxToolArgumentsBytes = 100 })
	r, _, err := run(t, c, hello)
	if err != nil || len(r.ToolCalls) != 2 {
		t.Errorf("Stream = %+v, %v; want two calls of 88 bytes under a 100-byte per-call limit", r, err)
	}
}
