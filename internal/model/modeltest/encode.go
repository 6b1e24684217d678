package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// hangLimit bounds a Hang step so a forgotten client cannot keep a test
// server busy.
const hangLimit = 30 * time.Second

// sse writes events and flushes each so clients see them one by one.
type sse struct {
	w http.ResponseWriter
}

func (s sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		_, _ = fmt.Fprintf(s.w, "event: %s\n", name)
	}
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.flush()
}

func (s sse) raw(text string) {
	_, _ = io.WriteString(s.w, text)
	s.flush()
}

func (s sse) flush() {
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

type encoder interface {
	start(out sse)
	text(out sse, frag string)
	cite(out sse, c Cite)
	call(out sse, c Call)
	streamError(out sse, msg string)
	failed(out sse, msg string)
	oversized(out sse, n int)
	finish(out sse, usage *Tokens)
}

func play(ctx context.Context, w http.ResponseWriter, enc encoder, steps []Step) {
	out := sse{w}
	enc.start(out)
	var usage *Tokens
	for _, s := range steps {
		switch {
		case s.Text != nil:
			for _, f := range s.Text {
				enc.text(out, f)
			}
		case s.ToolCall != nil:
			enc.call(out, *s.ToolCall)
		case s.Usage != nil:
			usage = s.Usage
		case s.Citation != nil:
			enc.cite(out, *s.Citation)
		case s.StreamError != "":
			enc.streamError(out, s.StreamError)
			return
		case s.Failed != "":
			enc.failed(out, s.Failed)
			return
		case s.Cut:
			out.flush()
			panic(http.ErrAbortHandler)
		case s.Oversized > 0:
			enc.oversized(out, s.Oversized)
		case s.Raw != "":
			out.raw(s.Raw)
		case s.Hang:
			out.flush()
			select {
			case <-ctx.Done():
			case <-time.After(hangLimit):
			}
			panic(http.ErrAbortHandler)
		}
	}
	enc.finish(out, usage)
}

type obj = map[string]any

// responsesEncoder emits Responses API stream events.
type responsesEncoder struct {
	seq     int
	output  []obj
	msg     obj // the open output message, if any
	msgText strings.Builder
	notes   []obj
	calls   int
}

func (e *responsesEncoder) emit(out sse, typ string, fields obj) {
	fields["type"] = typ
	fields["sequence_number"] = e.seq
	e.seq++
	out.event(typ, fields)
}

func (e *responsesEncoder) response(status string) obj {
	return obj{"id": "resp_modeltest", "object": "response", "status": status, "model": "modeltest", "output": e.output}
}

func (e *responsesEncoder) start(out sse) {
	e.emit(out, "response.created", obj{"response": e.response("in_progress")})
}

func (e *responsesEncoder) openMessage(out sse) {
	if e.msg != nil {
		return
	}
	e.msg = obj{"type": "message", "id": fmt.Sprintf("msg_%d", len(e.output)), "role": "assistant", "status": "in_progress", "content": []any{}}
	e.msgText.Reset()
	e.notes = nil
	e.emit(out, "response.output_item.added", obj{"output_index": len(e.output), "item": e.msg})
	e.emit(out, "response.content_part.added", obj{"item_id": e.msg["id"], "output_index": len(e.output), "content_index": 0, "part": obj{"type": "output_text", "text": "", "annotations": []any{}}})
}

func (e *responsesEncoder) closeMessage(out sse) {
	if e.msg == nil {
		return
	}
	id, idx := e.msg["id"], len(e.output)
	part := obj{"type": "output_text", "text": e.msgText.String(), "annotations": append([]obj{}, e.notes...)}
	e.emit(out, "response.output_text.done", obj{"item_id": id, "output_index": idx, "content_index": 0, "text": e.msgText.String()})
	e.emit(out, "response.content_part.done", obj{"item_id": id, "output_index": idx, "content_index": 0, "part": part})
	done := obj{"type": "message", "id": id, "role": "assistant", "status": "completed", "content": []any{part}}
	e.emit(out, "response.output_item.done", obj{"output_index": idx, "item": done})
	e.output = append(e.output, done)
	e.msg = nil
}

func (e *responsesEncoder) text(out sse, frag string) {
	e.openMessage(out)
	e.msgText.WriteString(frag)
	e.emit(out, "response.output_text.delta", obj{"item_id": e.msg["id"], "output_index": len(e.output), "content_index": 0, "delta": frag})
}

func (e *responsesEncoder) cite(out sse, c Cite) {
	e.openMessage(out)
	n := e.msgText.Len()
	a := obj{"type": "url_citation", "url": c.URL, "title": c.Title, "start_index": n, "end_index": n}
	e.notes = append(e.notes, a)
	e.emit(out, "response.output_text.annotation.added", obj{"item_id": e.msg["id"], "output_index": len(e.output), "content_index": 0, "annotation_index": len(e.notes) - 1, "annotation": a})
}

func (e *responsesEncoder) call(out sse, c Call) {
	e.closeMessage(out)
	e.calls++
	id, idx := fmt.Sprintf("fc_%d", e.calls), len(e.output)
	e.emit(out, "response.output_item.added", obj{"output_index": idx, "item": obj{"type": "function_call", "id": id, "call_id": c.ID, "name": c.Name, "arguments": "", "status": "in_progress"}})
	args := strings.Join(c.Fragments, "")
	for _, f := range c.Fragments {
		e.emit(out, "response.function_call_arguments.delta", obj{"item_id": id, "output_index": idx, "delta": f})
	}
	e.emit(out, "response.function_call_arguments.done", obj{"item_id": id, "output_index": idx, "arguments": args})
	item := obj{"type": "function_call", "id": id, "call_id": c.ID, "name": c.Name, "arguments": args, "status": "completed"}
	e.emit(out, "response.output_item.done", obj{"output_index": idx, "item": item})
	e.output = append(e.output, item)
}

func (e *responsesEncoder) streamError(out sse, msg string) {
	e.emit(out, "error", obj{"code": "server_error", "message": msg, "param": nil})
}

func (e *responsesEncoder) failed(out sse, msg string) {
	r := e.response("failed")
	r["error"] = obj{"code": "server_error", "message": msg}
	e.emit(out, "response.failed", obj{"response": r})
}

func (e *responsesEncoder) oversized(out sse, n int) {
	e.emit(out, "response.in_progress", obj{"response": e.response("in_progress"), "padding": strings.Repeat("x", n)})
}

func (e *responsesEncoder) finish(out sse, usage *Tokens) {
	e.closeMessage(out)
	r := e.response("completed")
	if usage != nil {
		r["usage"] = obj{"input_tokens": usage.Input, "output_tokens": usage.Output, "total_tokens": usage.Input + usage.Output}
	}
	e.emit(out, "response.completed", obj{"response": r})
}

// chatEncoder emits chat.completion.chunk events.
type chatEncoder struct {
	calls int
}

func chunk(delta obj, finish any) obj {
	return obj{"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "model": "modeltest",
		"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
}

func (e *chatEncoder) start(out sse) {
	out.event("", chunk(obj{"role": "assistant", "content": ""}, nil))
}

func (e *chatEncoder) text(out sse, frag string) { out.event("", chunk(obj{"content": frag}, nil)) }

func (e *chatEncoder) cite(sse, Cite) {}

func (e *chatEncoder) call(out sse, c Call) {
	idx := e.calls
	e.calls++
	first := obj{"index": idx, "id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}
	out.event("", chunk(obj{"tool_calls": []any{first}}, nil))
	for _, f := range c.Fragments {
		out.event("", chunk(obj{"tool_calls": []any{obj{"index": idx, "function": obj{"arguments": f}}}}, nil))
	}
}

func (e *chatEncoder) streamError(out sse, msg string) {
	out.event("", obj{"error": obj{"message": msg, "type": "server_error"}})
}

func (e *chatEncoder) failed(out sse, msg string) { e.streamError(out, msg) }

func (e *chatEncoder) oversized(out sse, n int) {
	c := chunk(obj{}, nil)
	c["padding"] = strings.Repeat("x", n)
	out.event("", c)
}

func (e *chatEncoder) finish(out sse, usage *Tokens) {
	reason := "stop"
	if e.calls > 0 {
		reason = "tool_calls"
	}
	out.event("", chunk(obj{}, reason))
	if usage != nil {
		out.event("", obj{"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "choices": []any{},
			"usage": obj{"prompt_tokens": usage.Input, "completion_tokens": usage.Output, "total_tokens": usage.Input + usage.Output}})
	}
	out.raw("data: [DONE]\n\n")
}
