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
	start(out sse, usage *Tokens)
	text(out sse, frag string)
	reasoning(out sse, frags []string)
	cite(out sse, c Cite)
	call(out sse, c Call)
	streamError(out sse, msg string)
	failed(out sse, msg string)
	oversized(out sse, n int)
	finish(out sse, usage *Tokens, stop string)
}

func play(ctx context.Context, w http.ResponseWriter, enc encoder, steps []Step) {
	out := sse{w}
	var usage *Tokens
	stop := ""
	for _, s := range steps {
		if s.Usage != nil {
			usage = s.Usage
		}
		if s.StopReason != "" {
			stop = s.StopReason
		}
	}
	enc.start(out, usage)
	for _, s := range steps {
		switch {
		case s.Text != nil:
			for _, f := range s.Text {
				enc.text(out, f)
			}
		case s.Reasoning != nil:
			enc.reasoning(out, s.Reasoning)
		case s.ToolCall != nil:
			enc.call(out, *s.ToolCall)
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
	enc.finish(out, usage, stop)
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

func (e *responsesEncoder) start(out sse, _ *Tokens) {
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

func (e *responsesEncoder) reasoning(out sse, frags []string) {
	e.closeMessage(out)
	id, idx := fmt.Sprintf("rs_%d", len(e.output)), len(e.output)
	e.emit(out, "response.output_item.added", obj{"output_index": idx, "item": obj{"type": "reasoning", "id": id, "summary": []any{}}})
	e.emit(out, "response.reasoning_summary_part.added", obj{"item_id": id, "output_index": idx, "summary_index": 0, "part": obj{"type": "summary_text", "text": ""}})
	for _, f := range frags {
		e.emit(out, "response.reasoning_summary_text.delta", obj{"item_id": id, "output_index": idx, "summary_index": 0, "delta": f})
	}
	text := strings.Join(frags, "")
	e.emit(out, "response.reasoning_summary_text.done", obj{"item_id": id, "output_index": idx, "summary_index": 0, "text": text})
	item := obj{"type": "reasoning", "id": id, "summary": []any{obj{"type": "summary_text", "text": text}}}
	e.emit(out, "response.output_item.done", obj{"output_index": idx, "item": item})
	e.output = append(e.output, item)
}

func (e *responsesEncoder) finish(out sse, usage *Tokens, stop string) {
	e.closeMessage(out)
	status, typ := "completed", "response.completed"
	if stop != "" {
		status, typ = "incomplete", "response.incomplete"
	}
	r := e.response(status)
	if stop != "" {
		r["incomplete_details"] = obj{"reason": stop}
	}
	if usage != nil {
		in := usage.Input + usage.CacheRead + usage.CacheWrite
		r["usage"] = obj{"input_tokens": in, "output_tokens": usage.Output, "total_tokens": in + usage.Output,
			"input_tokens_details": obj{"cached_tokens": usage.CacheRead}}
	}
	e.emit(out, typ, obj{"response": r})
}

// chatEncoder emits chat.completion.chunk events.
type chatEncoder struct {
	calls int
}

func chunk(delta obj, finish any) obj {
	return obj{"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "model": "modeltest",
		"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
}

func (e *chatEncoder) start(out sse, _ *Tokens) {
	out.event("", chunk(obj{"role": "assistant", "content": ""}, nil))
}

func (e *chatEncoder) text(out sse, frag string) { out.event("", chunk(obj{"content": frag}, nil)) }

func (e *chatEncoder) cite(sse, Cite) {}

func (e *chatEncoder) reasoning(out sse, frags []string) {
	for _, f := range frags {
		out.event("", chunk(obj{"reasoning_content": f}, nil))
	}
}

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

func (e *chatEncoder) finish(out sse, usage *Tokens, stop string) {
	reason := "stop"
	if e.calls > 0 {
		reason = "tool_calls"
	}
	if stop != "" {
		reason = stop
	}
	out.event("", chunk(obj{}, reason))
	if usage != nil {
		in := usage.Input + usage.CacheRead + usage.CacheWrite
		u := obj{"prompt_tokens": in, "completion_tokens": usage.Output, "total_tokens": in + usage.Output}
		if usage.CacheRead > 0 {
			u["prompt_tokens_details"] = obj{"cached_tokens": usage.CacheRead}
		}
		out.event("", obj{"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "choices": []any{}, "usage": u})
	}
	out.raw("data: [DONE]\n\n")
}

// anthropicEncoder emits Anthropic Messages stream events.
type anthropicEncoder struct {
	index   int    // index of the next content block
	open    string // type of the open block, "" when none
	calls   int
	servers int
	// cites are the citations the next text block carries.
	cites []Cite
}

func (e *anthropicEncoder) emit(out sse, typ string, fields obj) {
	fields["type"] = typ
	out.event(typ, fields)
}

func (e *anthropicEncoder) start(out sse, usage *Tokens) {
	u := obj{"input_tokens": 0, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if usage != nil {
		u["input_tokens"], u["cache_read_input_tokens"], u["cache_creation_input_tokens"] = usage.Input, usage.CacheRead, usage.CacheWrite
	}
	e.emit(out, "message_start", obj{"message": obj{"id": "msg_modeltest", "type": "message", "role": "assistant", "model": "modeltest",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": u}})
}

// begin opens a content block, closing the open one.
func (e *anthropicEncoder) begin(out sse, block obj) {
	e.end(out)
	e.open = block["type"].(string)
	e.emit(out, "content_block_start", obj{"index": e.index, "content_block": block})
}

func (e *anthropicEncoder) end(out sse) {
	if e.open == "" {
		return
	}
	e.emit(out, "content_block_stop", obj{"index": e.index})
	e.index++
	e.open = ""
}

func (e *anthropicEncoder) delta(out sse, d obj) {
	e.emit(out, "content_block_delta", obj{"index": e.index, "delta": d})
}

func (e *anthropicEncoder) text(out sse, frag string) {
	if e.open != "text" {
		e.begin(out, obj{"type": "text", "text": ""})
		for _, c := range e.cites {
			e.delta(out, obj{"type": "citations_delta", "citation": obj{"type": "web_search_result_location", "url": c.URL, "title": c.Title,
				"cited_text": "…", "encrypted_index": "ZW5j"}})
		}
		e.cites = nil
	}
	e.delta(out, obj{"type": "text_delta", "text": frag})
}

func (e *anthropicEncoder) reasoning(out sse, frags []string) {
	e.begin(out, obj{"type": "thinking", "thinking": "", "signature": ""})
	for _, f := range frags {
		e.delta(out, obj{"type": "thinking_delta", "thinking": f})
	}
	e.delta(out, obj{"type": "signature_delta", "signature": fmt.Sprintf("sig-%d-%d", e.index, len(strings.Join(frags, "")))})
	e.end(out)
}

func (e *anthropicEncoder) cite(out sse, c Cite) {
	e.servers++
	id := fmt.Sprintf("srvtoolu_%d", e.servers)
	e.begin(out, obj{"type": "server_tool_use", "id": id, "name": "web_search", "input": obj{}})
	e.delta(out, obj{"type": "input_json_delta", "partial_json": `{"query":"` + c.Title + `"}`})
	e.begin(out, obj{"type": "web_search_tool_result", "tool_use_id": id,
		"content": []any{obj{"type": "web_search_result", "url": c.URL, "title": c.Title, "encrypted_content": "ZW5j", "page_age": nil}}})
	e.end(out)
	e.cites = append(e.cites, c)
}

func (e *anthropicEncoder) call(out sse, c Call) {
	e.calls++
	e.begin(out, obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}})
	for _, f := range c.Fragments {
		e.delta(out, obj{"type": "input_json_delta", "partial_json": f})
	}
	e.end(out)
}

func (e *anthropicEncoder) streamError(out sse, msg string) {
	e.emit(out, "error", obj{"error": obj{"type": "overloaded_error", "message": msg}})
}

func (e *anthropicEncoder) failed(out sse, msg string) {
	e.emit(out, "error", obj{"error": obj{"type": "api_error", "message": msg}})
}

func (e *anthropicEncoder) oversized(out sse, n int) {
	e.emit(out, "ping", obj{"padding": strings.Repeat("x", n)})
}

func (e *anthropicEncoder) finish(out sse, usage *Tokens, stop string) {
	e.end(out)
	if stop == "" {
		stop = "end_turn"
		if e.calls > 0 {
			stop = "tool_use"
		}
	}
	var output int64 = 1
	if usage != nil {
		output = usage.Output
	}
	e.emit(out, "message_delta", obj{"delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": output}})
	e.emit(out, "message_stop", obj{})
}
