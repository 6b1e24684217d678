package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/diff"
	"github.com/scv-agent/scv/internal/proto"
)

func TestKindOf(t *testing.T) {
	for _, c := range []struct{ name, risk, want string }{
		{"read", "", KindRead},
		{"read_skill", "read_only", KindRead},
		{"write", "", KindEdit},
		{"bash", "", KindExecute},
		{"web_fetch", "read_only", KindFetch},
		{"web_search", "network", KindSearch},
		{"mcp__x__y", "", KindOther},
		{"mcp__x__y", "read_only", KindRead},
		{"mcp__x__y", "filesystem", KindEdit},
		{"mcp__x__y", "process", KindExecute},
		{"agent_codex", "delegate", KindExecute},
		{"mcp__x__y", "network", KindFetch},
	} {
		if got := kindOf(c.name, c.risk); got != c.want {
			t.Errorf("kindOf(%q, %q) = %q, want %q", c.name, c.risk, got, c.want)
		}
	}
}

func TestStopReason(t *testing.T) {
	for _, c := range []struct {
		ev   proto.Event
		want string
		code int
	}{
		{&proto.TurnCompleted{}, StopEndTurn, 0},
		{&proto.TurnCancelled{}, StopCancelled, 0},
		{&proto.TurnFailed{Code: proto.FailStep}, StopMaxTurnRequests, 0},
		{&proto.TurnFailed{Code: proto.FailContext}, StopRefusal, 0},
		{&proto.TurnFailed{Code: proto.FailHistory}, StopRefusal, 0},
		{&proto.TurnFailed{Code: proto.FailResponse}, StopRefusal, 0},
		{&proto.TurnFailed{Code: proto.FailTool}, StopRefusal, 0},
		{&proto.TurnFailed{Code: "provider_error", Message: "boom"}, "", CodeInternalError},
		{&proto.TurnFailed{Code: "store_error"}, "", CodeInternalError},
	} {
		got, err := stopReason(c.ev)
		code := 0
		if err != nil {
			code = err.Code
		}
		if got != c.want || code != c.code {
			t.Errorf("stopReason(%T %+v) = %q, %v; want %q, code %d", c.ev, c.ev, got, err, c.want, c.code)
		}
	}
}

// TestReverseDiff rebuilds a file's old text from SCV's bounded diff of a
// planned write and its new text, for changes anywhere in a file, with and
// without final newlines; a cut diff gives nothing rather than a wrong
// text.
func TestReverseDiff(t *testing.T) {
	long := strings.Repeat("line\n", 200)
	for _, c := range []struct{ name, old, new string }{
		{"middle", "one\ntwo\nthree\n", "one\nTWO\nthree\n"},
		{"start and end", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n"},
		{"added lines", "a\nb\n", "a\nx\ny\nb\nz\n"},
		{"removed lines", "a\nx\ny\nb\nz\n", "a\nb\n"},
		{"old without final newline", "a\nb", "a\nb\n"},
		{"new without final newline", "a\nb\n", "a\nc"},
		{"emptied", "a\nb\n", ""},
		{"from empty", "", "a\n"},
		{"long file, far apart", long + "x\n" + long, long + "y\n" + long},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := diff.Replace("f.txt", []byte(c.old), true, []byte(c.new), diff.Bounds{})
			d := &proto.Diff{Path: "f.txt", Text: r.Text, Omitted: r.Omitted, Note: r.Note}
			got, ok := reverseDiff(d, c.new)
			if !ok {
				t.Fatalf("reverseDiff failed on\n%s", r.Text)
			}
			if diff := cmp.Diff(c.old, got); diff != "" {
				t.Errorf("old text (-want +got):\n%s\ndiff:\n%s", diff, r.Text)
			}
		})
	}
	t.Run("cut", func(t *testing.T) {
		old, nw := strings.Repeat("a\n", 5000), strings.Repeat("b\n", 5000)
		r := diff.Replace("f.txt", []byte(old), true, []byte(nw), diff.Bounds{})
		if r.Omitted == 0 {
			t.Fatal("the diff was not cut: the case tests nothing")
		}
		if _, ok := reverseDiff(&proto.Diff{Text: r.Text, Omitted: r.Omitted}, nw); ok {
			t.Error("a cut diff gave an old text")
		}
	})
	t.Run("does not fit", func(t *testing.T) {
		r := diff.Replace("f.txt", []byte("a\nb\n"), true, []byte("a\nc\n"), diff.Bounds{})
		if _, ok := reverseDiff(&proto.Diff{Text: r.Text}, "x\ny\n"); ok {
			t.Error("a diff of another text gave an old text")
		}
	})
}

func TestPromptText(t *testing.T) {
	blocks := func(js string) []json.RawMessage {
		var b []json.RawMessage
		if err := json.Unmarshal([]byte(js), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	got, err := promptText(blocks(`[{"type":"text","text":"fix "},{"type":"text","text":"this:"},
		{"type":"resource","resource":{"uri":"file:///w/a.go","text":"package a\n"}},
		{"type":"text","text":"and see"},{"type":"resource_link","uri":"file:///w/sub/b.go","name":"b.go"},
		{"type":"resource_link","uri":"https://example.com/x","name":"x","title":"The X"}]`), "/w")
	if err != nil {
		t.Fatal(err)
	}
	want := "fix this:\n\n<resource uri=\"file:///w/a.go\">\npackage a\n</resource>\n\nand see\n\n" +
		"[The user links b.go: sub/b.go — read it with your tools if you need it.]\n\n" +
		"[The user links The X: https://example.com/x — read it with your tools if you need it.]"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prompt (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ blocks, wantErr string }{
		{`[{"type":"image","data":"AA==","mimeType":"image/png"}]`, `prompt[0]: content type "image" is not supported`},
		{`[{"type":"text","text":"a"},{"type":"audio","data":"AA=="}]`, `prompt[1]: content type "audio"`},
		{`[{"type":"resource","resource":{"uri":"file:///x","blob":"AA=="}}]`, `prompt[0]: a resource without text (a blob)`},
		{`[{"type":"resource_link","name":"x"}]`, `prompt[0].uri is required`},
		{`[{"text":"x"}]`, `prompt[0].type is required`},
		{`[]`, `prompt has no text`},
	} {
		if _, err := promptText(blocks(c.blocks), "/w"); err == nil || err.Code != CodeInvalidParams || !strings.Contains(err.Message, c.wantErr) {
			t.Errorf("promptText(%s) = %v, want -32602 with %q", c.blocks, err, c.wantErr)
		}
	}
}

// TestTranslate: each event of a live turn gives its updates.
func TestTranslate(t *testing.T) {
	tr := &turn{calls: map[string]*call{}}
	args := json.RawMessage(`{"path":"a.txt","content":"new\n","mode":"replace"}`)
	d := diff.Replace("a.txt", []byte("old\n"), true, []byte("new\n"), diff.Bounds{})
	pd := &proto.Diff{Path: "a.txt", Text: d.Text}
	old, nw := "old\n", "new\n"
	dc := toolCallContent{Type: "diff", Path: "/w/a.txt", OldText: &old, NewText: &nw}
	out := textBlock(`{"path":"a.txt"}`)
	for _, c := range []struct {
		ev   proto.Event
		want []any
	}{
		{&proto.AssistantDelta{Content: "hi"}, []any{chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock("hi")}}},
		{&proto.AssistantReasoning{Content: "hm"}, []any{chunkUpdate{SessionUpdate: "agent_thought_chunk", Content: textBlock("hm")}}},
		{&proto.AssistantCompleted{Content: "hi"}, nil},
		{&proto.ToolProposed{CallID: "c1", Name: "write", Arguments: args}, []any{toolCall{SessionUpdate: "tool_call", ToolCallID: "c1",
			Title: "write: a.txt", Kind: KindEdit, Status: StatusPending, Locations: []location{{Path: "/w/a.txt"}}, RawInput: args}}},
		{&proto.ApprovalRequested{CallID: "c1", Name: "write", Risk: "filesystem", Summary: "replace a.txt (4 bytes)", Diff: pd},
			[]any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: "c1", Title: "replace a.txt (4 bytes)", Kind: KindEdit}}},
		{&proto.ToolStarted{CallID: "c1", Name: "write", Summary: "replace a.txt (4 bytes)"},
			[]any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: "c1", Status: StatusInProgress, Title: "replace a.txt (4 bytes)", Content: []toolCallContent{dc}}}},
		{&proto.ToolCompleted{CallID: "c1", Name: "write", Success: true, Output: `{"path":"a.txt"}`},
			[]any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: "c1", Status: StatusCompleted, Content: []toolCallContent{dc, {Type: "content", Content: &out}}}}},
		{&proto.ToolCompleted{CallID: "c2", Name: "bash", Success: false, Output: "denied: no", Error: "denied"},
			[]any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: "c2", Status: StatusFailed, Content: []toolCallContent{{Type: "content", Content: ptr(textBlock("denied: no"))}}}}},
		{&proto.ToolProgress{CallID: "c2", Text: "building…"},
			[]any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: "c2", Content: []toolCallContent{{Type: "content", Content: ptr(textBlock("building…"))}}}}},
		{&proto.TurnCompleted{ContextTokens: 42}, []any{usageUpdate{SessionUpdate: "usage_update", Used: 42, Size: 1000}}},
		{&proto.TurnFailed{Code: proto.FailStep, Message: "stopped"}, []any{chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock("\n\n[scv: the turn stopped (step_limit): stopped]")}}},
		{&proto.TurnFailed{Code: "provider_error", Message: "x"}, nil},
		{&proto.TurnCancelled{}, nil},
	} {
		got := translate(tr, c.ev, "/w", 1000)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.ev.EventType(), diff)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestOutputText(t *testing.T) {
	if got := outputText("bash", `{"exit_code":2,"output":"oops\n"}`); got != "oops\n\n(exit status 2)" {
		t.Errorf("bash output = %q", got)
	}
	big := strings.Repeat("x", maxOutputBytes+10)
	if got := outputText("read", big); len(got) > maxOutputBytes+100 || !strings.HasSuffix(got, "(10 more bytes)") {
		t.Errorf("a large output is not bounded: %d bytes, ends %q", len(got), got[len(got)-20:])
	}
}
