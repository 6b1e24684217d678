package modeltest

import (
	"encoding/json"
	"fmt"
	"os"
)

// Step is one part of a scripted response. Build steps with the helpers
// (Text, ToolCall, Usage, …); the struct is also the JSON script format.
type Step struct {
	Text        []string    `json:"text,omitempty"`
	Reasoning   []string    `json:"reasoning,omitempty"`
	ToolCall    *Call       `json:"tool_call,omitempty"`
	Usage       *Tokens     `json:"usage,omitempty"`
	Citation    *Cite       `json:"citation,omitempty"`
	HTTPError   *HTTPStatus `json:"http_error,omitempty"`
	StreamError string      `json:"stream_error,omitempty"`
	Failed      string      `json:"failed,omitempty"`
	Cut         bool        `json:"cut,omitempty"`
	Oversized   int         `json:"oversized,omitempty"`
	Raw         string      `json:"raw,omitempty"`
	Hang        bool        `json:"hang,omitempty"`
	StopReason  string      `json:"stop_reason,omitempty"`
}

// Call is a scripted tool call whose arguments arrive in Fragments.
type Call struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Fragments []string `json:"arguments"`
}

// Tokens is scripted usage. Input counts the prompt tokens that were not
// cached; CacheRead and CacheWrite are reported beside it.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// Cite is a web search citation: a url_citation annotation (Responses), or
// a web_search server-tool block with its result, cited by the next text
// block (Anthropic); ignored on the chat wire.
type Cite struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}

// HTTPStatus answers the request with a status instead of a stream.
type HTTPStatus struct {
	Status     int    `json:"status"`
	Body       string `json:"body"`
	RetryAfter string `json:"retry_after,omitempty"`
}

// Text streams assistant text, one delta per fragment.
func Text(fragments ...string) Step { return Step{Text: fragments} }

// ToolCall streams a function call whose arguments arrive in fragments.
// Several ToolCall steps make several calls in one response.
func ToolCall(id, name string, argFragments ...string) Step {
	return Step{ToolCall: &Call{ID: id, Name: name, Fragments: argFragments}}
}

// Usage reports token usage with the completion.
func Usage(in, out int64) Step { return Step{Usage: &Tokens{Input: in, Output: out}} }

// CachedUsage reports usage with prompt-cache reads and writes.
func CachedUsage(in, out, cacheRead, cacheWrite int64) Step {
	return Step{Usage: &Tokens{Input: in, Output: out, CacheRead: cacheRead, CacheWrite: cacheWrite}}
}

// Reasoning streams reasoning text: a reasoning summary (Responses),
// reasoning_content deltas (chat) or a thinking block with a signature
// (Anthropic).
func Reasoning(fragments ...string) Step { return Step{Reasoning: fragments} }

// StopReason ends the response with reason instead of the normal end:
// Anthropic's stop_reason (e.g. "max_tokens", "refusal"), chat's
// finish_reason (e.g. "length"), or a response.incomplete with that reason
// (Responses).
func StopReason(reason string) Step { return Step{StopReason: reason} }

// Citation adds a web search citation to the text (Responses and
// Anthropic; ignored on the chat wire).
func Citation(url, title string) Step { return Step{Citation: &Cite{URL: url, Title: title}} }

// HTTPError answers with an HTTP status, a body and an optional
// Retry-After; the response's other steps are ignored.
func HTTPError(status int, body, retryAfter string) Step {
	return Step{HTTPError: &HTTPStatus{Status: status, Body: body, RetryAfter: retryAfter}}
}

// StreamError sends an `error` event (Responses; Anthropic with type
// overloaded_error) or an {"error":…} chunk (chat) and ends the stream.
func StreamError(msg string) Step { return Step{StreamError: msg} }

// Failed sends `response.failed` with msg (Responses; chat: like
// StreamError; Anthropic: an `error` event of type api_error).
func Failed(msg string) Step { return Step{Failed: msg} }

// Cut aborts the connection at this point, before the completion.
func Cut() Step { return Step{Cut: true} }

// Oversized sends one harmless event whose data is about n bytes.
func Oversized(n int) Step { return Step{Oversized: n} }

// Hang stops sending at this point and keeps the stream open until the
// client goes away (or 30 s pass): for cancellation tests.
func Hang() Step { return Step{Hang: true} }

// Raw writes s to the stream verbatim (e.g. "data: {...}\n\n").
func Raw(s string) Step { return Step{Raw: s} }

// LoadScript reads a JSON script file: an array of responses, each an array
// of steps, e.g. [[{"text":["Hi"]}],[{"tool_call":{"id":"c1","name":"bash","arguments":["{}"]}}]].
func LoadScript(path string) ([][]Step, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model script: %w", err)
	}
	var s [][]Step
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parse model script %s: %w", path, err)
	}
	return s, nil
}
