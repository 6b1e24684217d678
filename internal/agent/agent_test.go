package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/redact"
	"github.com/scv-agent/scv/internal/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeModel replays scripted responses and records requests.
type fakeModel struct {
	mu       sync.Mutex
	script   []step
	requests []model.Request
}

// step is one scripted model response.
type step = func(ctx context.Context, onDelta func(model.Delta)) (model.Response, error)

func (f *fakeModel) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta)) (model.Response, error) {
	f.mu.Lock()
	// The loop's history may change after the call (a finished turn drops
	// its thinking blocks): keep the messages as they were sent.
	req.Messages = slices.Clone(req.Messages)
	f.requests = append(f.requests, req)
	if len(f.script) == 0 {
		f.mu.Unlock()
		return model.Response{}, &model.Error{Code: model.CodeProvider, Message: "script exhausted"}
	}
	step := f.script[0]
	f.script = f.script[1:]
	f.mu.Unlock()
	return step(ctx, onDelta)
}

func text(parts ...string) step {
	return func(_ context.Context, on func(model.Delta)) (model.Response, error) {
		for _, p := range parts {
			on(model.Delta{Text: p})
		}
		return model.Response{Content: strings.Join(parts, ""), Usage: &model.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}}, nil
	}
}

func calls(cs ...model.ToolCall) step {
	return func(context.Context, func(model.Delta)) (model.Response, error) {
		return model.Response{ToolCalls: cs, Usage: &model.Usage{InputTokens: 5, OutputTokens: 1, TotalTokens: 6}}, nil
	}
}

func failWith(code string) step {
	return func(context.Context, func(model.Delta)) (model.Response, error) {
		return model.Response{}, &model.Error{Code: code, Message: "boom " + code}
	}
}

type echoParams struct {
	Text string `json:"text"`
	N    int    `json:"n,omitempty"`
}

// testTools: echo (read_only), touch (filesystem), block (read_only, waits
// for cancellation), order (records call order).
func testTools(t *testing.T, order *[]string) *tool.Registry {
	t.Helper()
	echo := tool.MustDefine("echo", "echo text", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.ReadOnly, Summary: "echo " + p.Text, Run: func(ctx context.Context) tool.Result {
			*order = append(*order, p.Text)
			return tool.Result{Success: true, Output: "echo:" + p.Text}
		}}, nil
	})
	touch := tool.MustDefine("touch", "touch", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.Filesystem, Summary: "touch " + p.Text, Run: func(ctx context.Context) tool.Result {
			*order = append(*order, "touch:"+p.Text)
			return tool.Result{Success: true, Output: "touched"}
		}}, nil
	})
	block := tool.MustDefine("block", "blocks until cancelled", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.ReadOnly, Summary: "block", Run: func(ctx context.Context) tool.Result {
			env.Progress("working")
			<-ctx.Done()
			return tool.Fail(tool.Cancelled, "cancelled")
		}}, nil
	})
	r, err := tool.NewRegistry(echo, touch, block)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newSession(t *testing.T, fm *fakeModel, reg *tool.Registry, policy approval.Policy) *Session {
	t.Helper()
	return New(Options{
		Model: fm, ModelName: "m", Registry: reg, Policy: policy, SystemPrompt: "sys",
		MaxSteps: 8, Workspace: "/ws", SessionID: "s1", OutputLimit: 4096,
		Context: ContextOptions{MaxTokens: 100000, ReserveOutputTokens: 100, SafetyMarginTokens: 10, BytesPerToken: 3, SummaryMaxChars: 600},
		History: HistoryOptions{MaxBytes: 1 << 20, MaxMessages: 1000},
	})
}

type recorder struct {
	mu  sync.Mutex
	evs []proto.TurnEvent
	// onApproval answers approval.requested.
	onApproval func(e *proto.ApprovalRequested)
}

func (r *recorder) emit(e proto.TurnEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
	if a, ok := e.(*proto.ApprovalRequested); ok && r.onApproval != nil {
		go r.onApproval(a)
	}
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.evs {
		s := e.EventType()
		switch e := e.(type) {
		case *proto.ToolCompleted:
			s += fmt.Sprintf("(%s,%v,%s)", e.Name, e.Success, e.Error)
		case *proto.TurnFailed:
			s += "(" + e.Code + ")"
		}
		out = append(out, s)
	}
	return out
}

func (r *recorder) last() proto.TurnEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.evs[len(r.evs)-1]
}

// failed is the turn.failed that ended the recorded turn, or a zero one
// (whose empty code matches no want) when it ended otherwise.
func (r *recorder) failed() *proto.TurnFailed {
	if f, ok := r.last().(*proto.TurnFailed); ok {
		return f
	}
	return &proto.TurnFailed{}
}

// only returns the recorded events of type T.
func only[T proto.TurnEvent](r *recorder) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, e := range r.evs {
		if t, ok := e.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

func call(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Arguments: args}
}

func TestToolLoopSerialOrder(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{
		calls(call("c1", "echo", `{"text":"a"}`), call("c2", "echo", `{"text":"b"}`), call("c3", "echo", `{"text":"c"}`)),
		calls(call("c4", "echo", `{"text":"d"}`)),
		text("do", "ne"),
	}}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	want := []string{
		"turn.started", "assistant.completed",
		"tool.proposed", "tool.started", "tool.completed(echo,true,)",
		"tool.proposed", "tool.started", "tool.completed(echo,true,)",
		"tool.proposed", "tool.started", "tool.completed(echo,true,)",
		"assistant.completed", "tool.proposed", "tool.started", "tool.completed(echo,true,)",
		"assistant.delta", "assistant.delta", "assistant.completed", "turn.completed",
	}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"a", "b", "c", "d"}, order); d != "" {
		t.Fatalf("order (-want +got):\n%s", d)
	}
	end := rec.last().(*proto.TurnCompleted)
	if end.Steps != 3 || end.Usage.TotalTokens != 24 {
		t.Fatalf("turn.completed steps=%d usage=%+v", end.Steps, end.Usage)
	}
	if end.ContextTokens != s.ContextTokens() || end.ContextTokens <= s.fixed {
		t.Fatalf("turn.completed context_tokens = %v, want the estimate %d", end.ContextTokens, s.ContextTokens())
	}
	// The third request replays the history: user, assistant(3 calls), 3 tool
	// results, assistant(1 call), 1 tool result.
	req := fm.requests[2]
	var roles []string
	for _, m := range req.Messages {
		roles = append(roles, string(m.Role))
	}
	if d := cmp.Diff([]string{"user", "assistant", "tool", "tool", "tool", "assistant", "tool"}, roles); d != "" {
		t.Fatalf("replayed roles (-want +got):\n%s", d)
	}
	if req.Messages[2].Content != "echo:a" || req.Messages[2].ToolCallID != "c1" {
		t.Fatalf("tool result = %+v", req.Messages[2])
	}
	if len(req.Tools) != 3 || req.Instructions != "sys" {
		t.Fatalf("tools=%d instructions=%q", len(req.Tools), req.Instructions)
	}
	if s.HistoryLen() != 8 {
		t.Fatalf("history len = %d, want 8", s.HistoryLen())
	}
}

func TestInvalidArgumentsBeforeApproval(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{
		calls(call("c1", "touch", `{"text":1}`), call("c2", "nope", `{}`), call("c3", "touch", `{"text":"x","extra":true}`)),
		text("ok"),
	}}
	s := newSession(t, fm, testTools(t, &order), approval.AskAlways)
	rec := &recorder{onApproval: func(e *proto.ApprovalRequested) { t.Errorf("approval asked for %s", e.CallID) }}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	want := []string{"turn.started", "assistant.completed",
		"tool.proposed", "tool.completed(touch,false,invalid_arguments)",
		"tool.proposed", "tool.completed(nope,false,unknown_tool)",
		"tool.proposed", "tool.completed(touch,false,invalid_arguments)",
		"assistant.delta", "assistant.completed", "turn.completed"}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	if len(order) != 0 {
		t.Fatalf("tools ran: %v", order)
	}
	if got := fm.requests[1].Messages[2].Content; !strings.Contains(got, "`text` has type integer") {
		t.Fatalf("model saw %q", got)
	}
}

func TestApprovalPolicies(t *testing.T) {
	tests := []struct {
		name    string
		policy  approval.Policy
		answer  *bool // nil: no approval expected
		want    string
		touched bool
	}{
		{"ask-on-risk approve", approval.AskOnRisk, new(true), "tool.completed(touch,true,)", true},
		{"ask-on-risk deny", approval.AskOnRisk, new(false), "tool.completed(touch,false,denied)", false},
		{"ask-always approve", approval.AskAlways, new(true), "tool.completed(touch,true,)", true},
		{"deny-on-risk denies without asking", approval.DenyOnRisk, nil, "tool.completed(touch,false,denied)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var order []string
			fm := &fakeModel{script: []step{
				calls(call("c1", "touch", `{"text":"f"}`)), text("ok"),
			}}
			s := newSession(t, fm, testTools(t, &order), tt.policy)
			asked := 0
			rec := &recorder{}
			rec.onApproval = func(e *proto.ApprovalRequested) {
				asked++
				if e.Risk != "filesystem" || e.Summary != "touch f" || e.Cwd != "/ws" || e.Name != "touch" {
					t.Errorf("approval.requested = %+v", e)
				}
				if s.Resolve(e.ApprovalID, approval.Answer{Approved: *tt.answer}) != nil {
					t.Errorf("resolve failed")
				}
			}
			s.RunTurn(t.Context(), "t1", "go", rec.emit)
			got := rec.types()
			if !slices.Contains(got, tt.want) {
				t.Fatalf("events %v lack %s", got, tt.want)
			}
			if (tt.answer != nil) != (asked == 1) {
				t.Fatalf("asked %d times", asked)
			}
			if (len(order) == 1) != tt.touched {
				t.Fatalf("ran = %v", order)
			}
			if !tt.touched && !strings.Contains(fm.requests[1].Messages[2].Content, "denied") {
				t.Fatalf("model was not told about the denial: %q", fm.requests[1].Messages[2].Content)
			}
			if tt.answer != nil && !*tt.answer && slices.Contains(got, "tool.started") {
				t.Fatal("denied call started")
			}
		})
	}
}

func TestFailuresRestoreHistory(t *testing.T) {
	codes := map[string]string{model.CodeProvider: "provider_error", model.CodeResponse: "response_limit", model.CodeTool: "tool_limit"}
	for mc, want := range codes {
		t.Run(want, func(t *testing.T) {
			var order []string
			fm := &fakeModel{script: []step{
				text("first"), calls(call("c1", "echo", `{"text":"a"}`)), failWith(mc),
			}}
			s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
			rec := &recorder{}
			s.RunTurn(t.Context(), "t1", "one", rec.emit)
			if s.HistoryLen() != 2 {
				t.Fatalf("history = %d after first turn", s.HistoryLen())
			}
			s.RunTurn(t.Context(), "t2", "two", rec.emit)
			last := rec.failed()
			if last.Code != want || !strings.Contains(last.Message, "boom") {
				t.Fatalf("last event = %+v", last)
			}
			if s.HistoryLen() != 2 {
				t.Fatalf("history = %d after failed turn, want 2", s.HistoryLen())
			}
		})
	}
}

func TestStepLimit(t *testing.T) {
	var order []string
	var script []step
	for i := 0; i < 10; i++ {
		script = append(script, calls(call(fmt.Sprint("c", i), "echo", `{"text":"x"}`)))
	}
	fm := &fakeModel{script: script}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	s.opts.MaxSteps = 3
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "loop", rec.emit)
	if last := rec.failed(); last.Code != proto.FailStep {
		t.Fatalf("last = %+v", last)
	}
	if len(fm.requests) != 3 {
		t.Fatalf("requests = %d, want 3 (no request after the limit)", len(fm.requests))
	}
	if s.HistoryLen() != 0 {
		t.Fatalf("history not restored: %d", s.HistoryLen())
	}
}

func TestCancelDuringToolAndApproval(t *testing.T) {
	t.Run("tool", func(t *testing.T) {
		var order []string
		fm := &fakeModel{script: []step{calls(call("c1", "block", `{"text":""}`))}}
		s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
		ctx, cancel := context.WithCancel(t.Context())
		rec := &recorder{}
		done := make(chan struct{})
		go func() { s.RunTurn(ctx, "t1", "go", rec.emit); close(done) }()
		waitFor(t, func() bool { return slices.Contains(rec.types(), "tool.progress") })
		cancel()
		<-done
		want := []string{"turn.started", "assistant.completed", "tool.proposed", "tool.started", "tool.progress", "tool.completed(block,false,cancelled)", "turn.cancelled"}
		if d := cmp.Diff(want, rec.types()); d != "" {
			t.Fatalf("events (-want +got):\n%s", d)
		}
		// The interrupted turn stays in the history: the prompt, the call
		// with what it reported, and the note.
		h, err := s.History()
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 4 || !strings.Contains(string(h[0]), `"content":"go"`) || !strings.Contains(string(h[1]), `"c1"`) ||
			!strings.Contains(string(h[2]), `"tool_call_id":"c1"`) ||
			!strings.Contains(string(h[3]), InterruptedNote) {
			t.Fatalf("history after a cancel during a call:\n%s", h)
		}
	})
	t.Run("approval", func(t *testing.T) {
		var order []string
		fm := &fakeModel{script: []step{calls(call("c1", "touch", `{"text":"x"}`))}}
		s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
		ctx, cancel := context.WithCancel(t.Context())
		rec := &recorder{onApproval: func(*proto.ApprovalRequested) { cancel() }}
		s.RunTurn(ctx, "t1", "go", rec.emit)
		got := rec.types()
		if !slices.Contains(got, "tool.completed(touch,false,cancelled)") || got[len(got)-1] != "turn.cancelled" || slices.Contains(got, "tool.started") {
			t.Fatalf("events = %v", got)
		}
		if len(order) != 0 {
			t.Fatal("tool ran after cancellation")
		}
	})
	t.Run("streaming", func(t *testing.T) {
		var order []string
		fm := &fakeModel{script: []step{
			func(ctx context.Context, on func(model.Delta)) (model.Response, error) {
				on(model.Delta{Text: "partial"})
				<-ctx.Done()
				return model.Response{}, &model.Error{Code: model.CodeProvider, Message: "context canceled"}
			},
		}}
		s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
		ctx, cancel := context.WithCancel(t.Context())
		rec := &recorder{}
		done := make(chan struct{})
		go func() { s.RunTurn(ctx, "t1", "go", rec.emit); close(done) }()
		waitFor(t, func() bool { return slices.Contains(rec.types(), "assistant.delta") })
		cancel()
		<-done
		if got := rec.types(); got[len(got)-1] != "turn.cancelled" {
			t.Fatalf("events = %v", got)
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestContextCompaction(t *testing.T) {
	var order []string
	var script []step
	for i := 0; i < 12; i++ {
		script = append(script, calls(call(fmt.Sprint("c", i), "echo", fmt.Sprintf(`{"text":"%s"}`, strings.Repeat("y", 90)))), text(strings.Repeat("answer ", 20)))
	}
	fm := &fakeModel{script: script}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	s.opts.Context.MaxTokens = s.fixed + 110 + 700 // room for a few turns only
	s.opts.Context.ReserveOutputTokens = 100
	s.opts.Context.SafetyMarginTokens = 10
	rec := &recorder{}
	for i := 0; i < 12; i++ {
		s.RunTurn(t.Context(), fmt.Sprint("t", i), fmt.Sprintf("prompt %d %s", i, strings.Repeat("p", 60)), rec.emit)
		if last := rec.last(); last.EventType() != proto.EventTurnCompleted {
			t.Fatalf("turn %d ended with %+v", i, last)
		}
	}
	compacted := only[*proto.ContextCompacted](rec)
	if len(compacted) == 0 {
		t.Fatal("no context.compacted event")
	}
	c := compacted[len(compacted)-1]
	if c.AfterTokens >= c.BeforeTokens || c.RemovedMessages <= 0 {
		t.Fatalf("compacted = before %d after %d removed %d", c.BeforeTokens, c.AfterTokens, c.RemovedMessages)
	}
	last := fm.requests[len(fm.requests)-1]
	note := last.Messages[0].Content
	if !strings.HasPrefix(note, "[context note]") || !strings.Contains(note, "- goal: prompt 0") && !strings.Contains(note, "- tool echo ok") {
		t.Fatalf("note = %q", note)
	}
	if len(note) > 600 {
		t.Fatalf("note is %d chars, above summary_max_chars", len(note))
	}
	// The newest user message is always in the request.
	found := false
	for _, m := range last.Messages {
		if strings.HasPrefix(m.Content, "prompt 11") {
			found = true
		}
	}
	if !found {
		t.Fatal("newest prompt missing from the request")
	}
	// Tool messages always follow their assistant call.
	for i, m := range last.Messages {
		if m.Role == model.ToolRole && (i == 0 || (last.Messages[i-1].Role != model.Assistant && last.Messages[i-1].Role != model.ToolRole)) {
			t.Fatalf("orphan tool message at %d", i)
		}
	}
	// Selection is deterministic.
	a, err := selectMessages(s.opts.Context, s.fixed, s.hist.msgs, s.hist.meta, s.hist.turnStart)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := selectMessages(s.opts.Context, s.fixed, s.hist.msgs, s.hist.meta, s.hist.turnStart)
	if d := cmp.Diff(a.msgs, b.msgs); d != "" {
		t.Fatal("selection not deterministic")
	}
}

func TestContextLimit(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{text("never")}}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	s.opts.Context.MaxTokens = s.fixed + 200
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", strings.Repeat("z", 3000), rec.emit)
	if last := rec.failed(); last.Code != proto.FailContext {
		t.Fatalf("last = %+v", last)
	}
	if len(fm.requests) != 0 {
		t.Fatal("request sent despite context_limit")
	}
}

// TestFinalAnswerOverHistoryBound: a final answer that takes the history
// over session.max_history_bytes trims it once the turn is complete, the
// finished turn included, and the turn still completes.
func TestFinalAnswerOverHistoryBound(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{text(strings.Repeat("a", 100)), text(strings.Repeat("z", 500))}}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	s.opts.History = HistoryOptions{MaxBytes: 400, MaxMessages: 100}
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "hello", rec.emit)
	s.RunTurn(t.Context(), "t2", "again", rec.emit)
	if last := rec.last(); last.EventType() != proto.EventTurnCompleted {
		t.Fatalf("last event %+v, want turn.completed", last)
	}
	var removed []int
	for _, e := range rec.evs {
		if e, ok := e.(*proto.SessionTrimmed); ok {
			removed = append(removed, e.RemovedMessages)
		}
	}
	if d := cmp.Diff([]int{4}, removed); d != "" {
		t.Errorf("messages removed per session.trimmed (-want +got):\n%s", d)
	}
	if s.HistoryLen() != 0 {
		t.Errorf("history holds %d messages, want 0", s.HistoryLen())
	}
}

func TestHistoryTrimAndLimit(t *testing.T) {
	var order []string
	var script []step
	for i := 0; i < 6; i++ {
		script = append(script, text(strings.Repeat("a", 100)))
	}
	fm := &fakeModel{script: script}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	s.opts.History = HistoryOptions{MaxBytes: 1000, MaxMessages: 5}
	rec := &recorder{}
	for i := 0; i < 4; i++ {
		s.RunTurn(t.Context(), fmt.Sprint("t", i), "hello", rec.emit)
	}
	trimmed := only[*proto.SessionTrimmed](rec)
	if len(trimmed) == 0 || s.HistoryLen() > 5 {
		t.Fatalf("trimmed=%d history=%d", len(trimmed), s.HistoryLen())
	}
	before := s.HistoryLen()
	s.RunTurn(t.Context(), "big", strings.Repeat("b", 2000), rec.emit)
	if last := rec.failed(); last.Code != proto.FailHistory {
		t.Fatalf("last = %+v", last)
	}
	if s.HistoryLen() != before {
		t.Fatalf("history %d, want restored %d", s.HistoryLen(), before)
	}
}

// Progress lines reach the client only: the model sees the tool's result.
func TestProgressNotInHistory(t *testing.T) {
	talk := tool.MustDefine("talk", "reports progress", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.ReadOnly, Summary: "talk", Run: func(context.Context) tool.Result {
			env.Progress("progress-line-secret-to-client")
			return tool.Result{Success: true, Output: "result"}
		}}, nil
	})
	reg, err := tool.NewRegistry(talk)
	if err != nil {
		t.Fatal(err)
	}
	fm := &fakeModel{script: []step{calls(call("c1", "talk", `{"text":""}`)), text("ok")}}
	s := newSession(t, fm, reg, approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	if !slices.Contains(rec.types(), "tool.progress") {
		t.Fatalf("no progress event: %v", rec.types())
	}
	for _, m := range fm.requests[1].Messages {
		if strings.Contains(m.Content, "progress-line") {
			t.Fatalf("progress reached the model: %+v", m)
		}
	}
	if got := fm.requests[1].Messages[2].Content; got != "result" {
		t.Fatalf("tool message = %q", got)
	}
}

func TestProgressBoundedAndRedacted(t *testing.T) {
	rec := &recorder{}
	send, stop := newProgress("c1", rec.emit, redact.Values{})
	send("line one\napi_key=sk-abcdefghijklmnop " + strings.Repeat("x", 400))
	send("too soon")
	stop()
	send("after stop")
	if len(rec.evs) != 1 {
		t.Fatalf("events = %d", len(rec.evs))
	}
	txt := rec.evs[0].(*proto.ToolProgress).Text
	if strings.Contains(txt, "sk-abc") || len(txt) > proto.MaxProgressBytes || strings.Contains(txt, "\n") {
		t.Fatalf("progress = %q", txt)
	}
}

func TestToolPanicFailsTurnInternal(t *testing.T) {
	boom := tool.MustDefine("boom", "panics", nil, func(env tool.Env, p echoParams) (tool.Plan, error) {
		return tool.Plan{Risk: tool.ReadOnly, Summary: "boom", Run: func(context.Context) tool.Result { panic("kaput") }}, nil
	})
	reg, err := tool.NewRegistry(boom)
	if err != nil {
		t.Fatal(err)
	}
	fm := &fakeModel{script: []step{calls(call("c1", "boom", `{"text":""}`))}}
	s := newSession(t, fm, reg, approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	got := rec.types()
	if !slices.Contains(got, "tool.completed(boom,false,failed)") || got[len(got)-1] != "turn.failed(internal_error)" {
		t.Fatalf("events = %v", got)
	}
	if !strings.Contains(rec.failed().Message, "kaput") || s.HistoryLen() != 0 {
		t.Fatalf("message %q, history %d", rec.failed().Message, s.HistoryLen())
	}
}

// TestToolsRefreshedPerRequest: with Options.Tools, every model request
// offers the registry of that moment, and calls are checked against it (a
// tool that appeared is callable, one that went away is unknown).
func TestToolsRefreshedPerRequest(t *testing.T) {
	var order []string
	full := testTools(t, &order)
	echo, _ := full.Get("echo")
	touch, _ := full.Get("touch")
	first, _ := tool.NewRegistry(echo)
	second, _ := tool.NewRegistry(touch)
	regs := []*tool.Registry{first, second, second}
	fm := &fakeModel{script: []step{
		calls(call("c1", "echo", `{"text":"a"}`)),
		calls(call("c2", "echo", `{"text":"b"}`), call("c3", "touch", `{"text":"c"}`)),
		text("done"),
	}}
	s := New(Options{
		Model: fm, ModelName: "m", Registry: first, Policy: approval.AskOnRisk, SystemPrompt: "sys",
		Tools: func(context.Context) *tool.Registry {
			r := regs[0]
			regs = regs[1:]
			return r
		},
		MaxSteps: 8, Workspace: "/ws", SessionID: "s1", OutputLimit: 4096,
		Context: ContextOptions{MaxTokens: 100000, ReserveOutputTokens: 100, SafetyMarginTokens: 10, BytesPerToken: 3, SummaryMaxChars: 600},
		History: HistoryOptions{MaxBytes: 1 << 20, MaxMessages: 1000},
	})
	rec := &recorder{onApproval: func(e *proto.ApprovalRequested) { s.Resolve(e.ApprovalID, approval.Answer{Approved: true}) }}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	var offered [][]string
	for _, r := range fm.requests {
		var names []string
		for _, ts := range r.Tools {
			names = append(names, ts.Name)
		}
		offered = append(offered, names)
	}
	if d := cmp.Diff([][]string{{"echo"}, {"touch"}, {"touch"}}, offered); d != "" {
		t.Errorf("tools offered per request (-want +got):\n%s", d)
	}
	want := []string{"turn.started", "assistant.completed", "tool.proposed", "tool.started", "tool.completed(echo,true,)",
		"assistant.completed", "tool.proposed", "tool.completed(echo,false,unknown_tool)",
		"tool.proposed", "approval.requested", "tool.started", "tool.completed(touch,true,)",
		"assistant.delta", "assistant.completed", "turn.completed"}
	if d := cmp.Diff(want, rec.types()); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// TestRequestsShareHistoryCache checks every step of a session's turns
// hands the model client one HistoryCache, so the history's encoding is
// kept between its requests.
func TestRequestsShareHistoryCache(t *testing.T) {
	var order []string
	fm := &fakeModel{script: []step{calls(call("c1", "echo", `{"text":"a"}`)), text("done"), text("again")}}
	s := newSession(t, fm, testTools(t, &order), approval.AskOnRisk)
	rec := &recorder{}
	s.RunTurn(t.Context(), "t1", "go", rec.emit)
	s.RunTurn(t.Context(), "t2", "more", rec.emit)
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if len(fm.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(fm.requests))
	}
	for i, r := range fm.requests {
		if r.Cache == nil || r.Cache != fm.requests[0].Cache {
			t.Fatalf("request %d: cache %p, want the session's one (%p)", i, r.Cache, fm.requests[0].Cache)
		}
	}
}
