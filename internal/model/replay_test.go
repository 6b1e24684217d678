package model_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
)

// The recorded provider streams of testdata/provider-streams (see the
// README and MANIFEST files there for their origins) are replayed through
// the client, each in several framings. What the client must make of a
// stream comes from reader below, an independent reading of the stream
// written for this test: it never looks at the client's output.

const streamsDir = "testdata/provider-streams"

type recording struct {
	name, wire, kind, path string
}

// recordings lists every stream of both manifests and checks that the
// manifests and the directories agree.
func recordings(t *testing.T) []recording {
	t.Helper()
	var out []recording
	read := func(manifest, dir string, wireCol int) {
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if i == 0 {
				continue // header
			}
			f := strings.Split(line, "\t")
			r := recording{name: f[0], wire: model.WireAnthropic, kind: f[1], path: filepath.Join(dir, f[0]+".sse")}
			if wireCol >= 0 {
				r.wire, r.kind = f[wireCol], f[2]
			}
			out = append(out, r)
		}
	}
	read(filepath.Join(streamsDir, "MANIFEST.tsv"), streamsDir, 1)
	read(filepath.Join(streamsDir, "anthropic", "MANIFEST.tsv"), filepath.Join(streamsDir, "anthropic"), -1)
	files, _ := filepath.Glob(filepath.Join(streamsDir, "*.sse"))
	more, _ := filepath.Glob(filepath.Join(streamsDir, "anthropic", "*.sse"))
	files = append(files, more...)
	listed := map[string]bool{}
	for _, r := range out {
		listed[r.path] = true
		if _, err := os.Stat(r.path); err != nil {
			t.Errorf("manifest names %s: %v", r.path, err)
		}
	}
	for _, f := range files {
		if !listed[f] {
			t.Errorf("%s is in no manifest", f)
		}
	}
	if len(out) < 150 {
		t.Fatalf("only %d recorded streams", len(out))
	}
	return out
}

// outcome is what a correct client makes of a stream.
type outcome struct {
	Content string
	Calls   []model.ToolCall
	Usage   *model.Usage
	// Reasoning is the reasoning text with all white space removed (the
	// client may set reasoning parts apart; nothing else may change).
	Reasoning string
	// Err is a part of the provider_error message; "" means success.
	Err string
}

// framings rewrite a recorded body into an equivalent one.
var framings = []struct {
	name  string
	wire  string // "" for every wire
	chunk int    // deliver the body in reads of at most this many bytes
	edit  func([]byte) []byte
}{
	{name: "as recorded"},
	{name: "split every 7 bytes", chunk: 7},
	{name: "CRLF line ends", edit: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }},
	{name: "comment lines", edit: func(b []byte) []byte {
		return append([]byte(": keep-alive\n"), bytes.ReplaceAll(b, []byte("\n\n"), []byte("\n\n: ping\n:\n"))...)
	}},
	{name: "data: without a space", edit: func(b []byte) []byte { return noSpace.ReplaceAll(b, []byte("$1:")) }},
	{name: "without [DONE]", wire: model.WireChat, edit: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("data: [DONE]\n\n"), nil) }},
}

var noSpace = regexp.MustCompile(`(?m)^(data|event): `)

// replayTransport answers every request with body.
type replayTransport struct {
	body  []byte
	chunk int
}

func (rt replayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body io.Reader = bytes.NewReader(rt.body)
	if rt.chunk > 0 {
		body = &smallReads{r: body, n: rt.chunk}
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(body), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

type smallReads struct {
	r io.Reader
	n int
}

func (s *smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

func TestRecordedStreams(t *testing.T) {
	recs := recordings(t)
	failures, empties := 0, 0
	for _, rec := range recs {
		body, err := os.ReadFile(rec.path)
		if err != nil {
			t.Fatal(err)
		}
		want := reader(rec.wire, body)
		if want.Err != "" {
			failures++
		}
		if strings.Contains(want.Err, "empty answer") {
			empties++
		}
		t.Run(rec.name, func(t *testing.T) {
			t.Parallel()
			for _, fr := range framings {
				if fr.wire != "" && fr.wire != rec.wire {
					continue
				}
				t.Run(fr.name, func(t *testing.T) {
					b := body
					if fr.edit != nil {
						b = fr.edit(bytes.Clone(body))
					}
					hc := &http.Client{Transport: replayTransport{body: b, chunk: fr.chunk}}
					c, _ := newClient(t, rec.wire, "http://provider.invalid/v1", func(o *model.Options) { o.MaxRetries = 0; o.HTTPClient = hc })
					checkReplay(t, c, want)
				})
			}
			t.Run("over http", func(t *testing.T) {
				c, _ := newClient(t, rec.wire, rawServer(t, string(body)), func(o *model.Options) { o.MaxRetries = 0 })
				checkReplay(t, c, want)
			})
		})
	}
	// The corpus must keep exercising both outcomes.
	if failures < 8 || empties < 5 {
		t.Errorf("%d failing and %d empty streams in the corpus; want at least 8 and 5", failures, empties)
	}
}

func checkReplay(t *testing.T, c model.Client, want outcome) {
	t.Helper()
	r, text, reasoning, err := stream(t, c, hello)
	if want.Err != "" {
		var me *model.Error
		if !errors.As(err, &me) || me.Code != model.CodeProvider || !strings.Contains(me.Message, want.Err) {
			t.Fatalf("Stream = %+v, %v; want provider_error containing %q", r, err, want.Err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Stream: %v (want content %.80q)", err, want.Content)
	}
	got := outcome{Content: r.Content, Calls: r.ToolCalls, Usage: r.Usage, Reasoning: squeeze(reasoning)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	if text != r.Content {
		t.Errorf("answer deltas add up to %.80q, content is %.80q", text, r.Content)
	}
}

func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// ---- the independent reader ----

// events yields each data payload of an SSE body, decoded as generic JSON,
// with the event name in effect ("[DONE]" payloads as the string).
func events(body []byte) []jsonEvent {
	var out []jsonEvent
	name := ""
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			name = ""
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			payload := strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			var v map[string]any
			if payload == "[DONE]" || json.Unmarshal([]byte(payload), &v) != nil {
				out = append(out, jsonEvent{typ: payload})
				continue
			}
			typ, _ := v["type"].(string)
			if typ == "" {
				typ = name
			}
			out = append(out, jsonEvent{typ: typ, v: v})
		}
	}
	return out
}

type jsonEvent struct {
	typ string
	v   map[string]any
}

// get walks keys through nested objects; array indexes are ints.
func get(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func str(v any, keys ...any) string {
	s, _ := get(v, keys...).(string)
	return s
}

func list(v any, keys ...any) []any {
	a, _ := get(v, keys...).([]any)
	return a
}

func num(v any, keys ...any) (int64, bool) {
	f, ok := get(v, keys...).(float64)
	return int64(f), ok
}

// answer accumulates the result the way the rules in docs/model.md say.
type answer struct {
	text      strings.Builder
	lastPart  string
	reasoning strings.Builder
	calls     []*readCall
	byID      map[string]*readCall
	cited     []string
	usage     *model.Usage
	unused    bool
	done      bool
	err       string
}

type readCall struct {
	id, name      string
	deltas, final string
}

func (a *answer) addText(part, s string) {
	if s == "" {
		return
	}
	if a.text.Len() > 0 && part != a.lastPart {
		a.text.WriteString("\n\n")
	}
	a.lastPart = part
	a.text.WriteString(s)
}

func (a *answer) call(id, name string) *readCall {
	if c := a.byID[id]; id != "" && c != nil {
		return c
	}
	c := &readCall{id: id, name: name}
	a.calls = append(a.calls, c)
	if id != "" {
		a.byID[id] = c
	}
	return c
}

func (a *answer) cite(url string) {
	if url != "" && !slices.Contains(a.cited, url) {
		a.cited = append(a.cited, url)
	}
}

func (a *answer) outcome() outcome {
	o := outcome{Reasoning: squeeze(a.reasoning.String()), Usage: a.usage}
	switch {
	case a.err != "":
		o.Err = a.err
		return o
	case !a.done:
		o.Err = "stream ended before the response completed"
		return o
	}
	for i, c := range a.calls {
		args := strings.TrimSpace(c.deltas)
		if args == "" {
			args = strings.TrimSpace(c.final)
		}
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			o.Err = "invalid JSON arguments"
			return o
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		o.Calls = append(o.Calls, model.ToolCall{ID: id, Name: c.name, Arguments: args})
	}
	text := a.text.String()
	var src []string
	for _, u := range a.cited {
		if !strings.Contains(text, u) {
			src = append(src, "- "+u)
		}
	}
	if len(src) > 0 {
		if text != "" {
			text += "\n\n"
		}
		text += "Sources:\n" + strings.Join(src, "\n")
	}
	o.Content = text
	if text == "" && len(o.Calls) == 0 {
		o.Err = "the model returned an empty answer"
		if a.unused {
			o.Err += " (its only output was"
		}
	}
	return o
}

func reader(wire string, body []byte) outcome {
	a := &answer{byID: map[string]*readCall{}}
	evs := events(body)
	switch wire {
	case model.WireResponses:
		readResponses(a, evs)
	case model.WireChat:
		readChat(a, evs)
	case model.WireAnthropic:
		readAnthropic(a, evs)
	}
	return a.outcome()
}

func readResponses(a *answer, evs []jsonEvent) {
	ids := map[string]string{} // item id → key
	key := func(v any, id string) string {
		k := "id:" + id
		if i, ok := num(v, "output_index"); ok {
			k = fmt.Sprint("#", i)
		}
		if id != "" {
			ids[id] = k
		}
		return k
	}
	sawText := map[string]bool{}
	sawReason := map[string]bool{}
	calls := map[string]*readCall{}
	item := func(k string, it any) {
		switch str(it, "type") {
		case "function_call":
			c := calls[k]
			if c == nil {
				c = a.call(str(it, "call_id"), str(it, "name"))
				calls[k] = c
			}
			if c.name == "" {
				c.name = str(it, "name")
			}
			if args := str(it, "arguments"); args != "" {
				c.final = args
			}
		case "message":
			for _, p := range list(it, "content") {
				for _, an := range list(p, "annotations") {
					if str(an, "type") == "url_citation" {
						a.cite(str(an, "url"))
					}
				}
			}
			if !sawText[k] {
				sawText[k] = true
				for _, p := range list(it, "content") {
					a.addText(k, str(p, "text")+str(p, "refusal"))
				}
			}
		case "reasoning":
			if !sawReason[k] {
				sawReason[k] = true
				for _, p := range append(list(it, "summary"), list(it, "content")...) {
					a.reasoning.WriteString(str(p, "text"))
				}
			}
		case "web_search_call", "":
		default:
			a.unused = true
		}
	}
	for _, ev := range evs {
		v := ev.v
		switch ev.typ {
		case "response.output_text.delta", "response.refusal.delta":
			k := key(v, str(v, "item_id"))
			sawText[k] = true
			a.addText(k, str(v, "delta"))
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			sawReason[key(v, str(v, "item_id"))] = true
			a.reasoning.WriteString(str(v, "delta"))
		case "response.function_call_arguments.delta":
			k := key(v, str(v, "item_id"))
			if calls[k] == nil {
				calls[k] = a.call("", "")
			}
			calls[k].deltas += str(v, "delta")
		case "response.output_text.annotation.added":
			if str(v, "annotation", "type") == "url_citation" {
				a.cite(str(v, "annotation", "url"))
			}
		case "response.output_item.added", "response.output_item.done":
			item(key(v, str(v, "item", "id")), v["item"])
		case "response.completed":
			for i, it := range list(v, "response", "output") {
				k, ok := ids[str(it, "id")]
				if !ok {
					k = fmt.Sprint("#", i)
				}
				item(k, it)
			}
			if u := get(v, "response", "usage"); u != nil {
				in, _ := num(u, "input_tokens")
				out, _ := num(u, "output_tokens")
				total, _ := num(u, "total_tokens")
				cached, _ := num(u, "input_tokens_details", "cached_tokens")
				if total == 0 {
					total = in + out
				}
				a.usage = &model.Usage{InputTokens: in, OutputTokens: out, TotalTokens: total, CacheReadTokens: cached}
			}
			a.done = true
			return
		case "response.failed":
			a.err = str(v, "response", "error", "message")
			return
		case "response.incomplete":
			a.err = "the response is incomplete: " + str(v, "response", "incomplete_details", "reason")
			return
		case "error":
			a.err = str(v, "message")
			if a.err == "" {
				a.err = str(v, "error", "message")
			}
			return
		}
	}
}

func readChat(a *answer, evs []jsonEvent) {
	var last *readCall
	byIndex := map[int64]*readCall{}
	finish := ""
	for _, ev := range evs {
		if ev.typ == "[DONE]" {
			a.done = true
			break
		}
		v := ev.v
		if e := v["error"]; e != nil {
			a.err = str(e, "message")
			return
		}
		if u, ok := v["usage"].(map[string]any); ok {
			in, _ := num(u, "prompt_tokens")
			out, _ := num(u, "completion_tokens")
			total, _ := num(u, "total_tokens")
			cached, _ := num(u, "prompt_tokens_details", "cached_tokens")
			if total == 0 {
				total = in + out
			}
			a.usage = &model.Usage{InputTokens: in, OutputTokens: out, TotalTokens: total, CacheReadTokens: cached}
		}
		for _, ch := range list(v, "choices") {
			if i, _ := num(ch, "index"); i != 0 {
				continue
			}
			d := get(ch, "delta")
			a.reasoning.WriteString(str(d, "reasoning_content") + str(d, "reasoning"))
			switch c := get(d, "content").(type) {
			case string:
				a.addText("", c)
			case []any:
				for _, p := range c {
					if t := str(p, "type"); t == "text" {
						a.addText("", str(p, "text"))
					}
				}
			}
			a.addText("", str(d, "refusal"))
			for _, tc := range list(d, "tool_calls") {
				id := str(tc, "id")
				c := last
				idx, hasIdx := num(tc, "index")
				if hasIdx {
					c = byIndex[idx]
				}
				if c == nil || (id != "" && c.id != "" && c.id != id) {
					c = a.call(id, "")
					if hasIdx {
						byIndex[idx] = c
					}
				}
				if c.id == "" {
					c.id = id
				}
				if c.name == "" {
					c.name = str(tc, "function", "name")
				}
				c.deltas += str(tc, "function", "arguments")
				last = c
			}
			if f := str(ch, "finish_reason"); f != "" {
				finish = f
			}
		}
	}
	if finish != "" {
		a.done = true
	}
	if finish == "length" {
		a.err = `finish_reason "length"`
	}
}

func readAnthropic(a *answer, evs []jsonEvent) {
	type block struct {
		kind    string
		call    *readCall
		input   string
		partial bool
	}
	blocks := map[int64]*block{}
	usage := map[string]int64{}
	stop, explanation := "", ""
	run := 0 // counts non-text blocks: text of a new run is a new part
	start := func(i int64, cb any) {
		b := &block{kind: str(cb, "type")}
		blocks[i] = b
		switch b.kind {
		case "text":
			for _, c := range list(cb, "citations") {
				a.cite(str(c, "url"))
			}
			a.addText(fmt.Sprint(run), str(cb, "text"))
			return
		case "tool_use":
			b.call = a.call(str(cb, "id"), str(cb, "name"))
			in, _ := json.Marshal(get(cb, "input"))
			b.input = string(in)
		case "thinking":
			a.reasoning.WriteString(str(cb, "thinking"))
		case "server_tool_use":
			if str(cb, "name") != "web_search" {
				a.unused = true
			}
		case "web_search_tool_result", "redacted_thinking":
		default:
			a.unused = true
		}
		run++
	}
	takeUsage := func(u any) {
		for _, f := range []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
			if n, ok := num(u, f); ok {
				usage[f] = n
			}
		}
	}
	for _, ev := range evs {
		v := ev.v
		switch ev.typ {
		case "message_start":
			takeUsage(get(v, "message", "usage"))
			if s := str(v, "message", "stop_reason"); s != "" {
				stop = s
			}
			for i, cb := range list(v, "message", "content") {
				start(int64(-1-i), cb)
			}
		case "content_block_start":
			i, _ := num(v, "index")
			start(i, v["content_block"])
		case "content_block_delta":
			i, _ := num(v, "index")
			b := blocks[i]
			if b == nil {
				continue
			}
			switch str(v, "delta", "type") {
			case "text_delta":
				if b.kind == "text" {
					a.addText(fmt.Sprint(run), str(v, "delta", "text"))
				}
			case "input_json_delta":
				if b.call != nil {
					b.partial = true
					b.call.deltas += str(v, "delta", "partial_json")
				}
			case "thinking_delta":
				a.reasoning.WriteString(str(v, "delta", "thinking"))
			case "citations_delta":
				a.cite(str(v, "delta", "citation", "url"))
			}
		case "message_delta":
			takeUsage(v["usage"])
			if s := str(v, "delta", "stop_reason"); s != "" {
				stop = s
			}
			explanation = str(v, "delta", "stop_details", "explanation")
		case "error":
			a.err = str(v, "error", "message")
			return
		case "message_stop":
			a.done = true
		}
		if a.done {
			break
		}
	}
	for _, b := range blocks {
		if b.call != nil && !b.partial {
			b.call.final = b.input
		}
	}
	_, hasIn := usage["input_tokens"]
	_, hasOut := usage["output_tokens"]
	if hasIn || hasOut {
		u := &model.Usage{OutputTokens: usage["output_tokens"], CacheReadTokens: usage["cache_read_input_tokens"], CacheWriteTokens: usage["cache_creation_input_tokens"]}
		u.InputTokens = usage["input_tokens"] + u.CacheReadTokens + u.CacheWriteTokens
		u.TotalTokens = u.InputTokens + u.OutputTokens
		a.usage = u
	}
	switch stop {
	case "max_tokens":
		a.err = `stop_reason "max_tokens"`
	case "model_context_window_exceeded":
		a.err = `stop_reason "model_context_window_exceeded"`
	case "refusal":
		a.calls = nil
		if a.text.Len() == 0 {
			a.err = "declined to answer"
			if explanation != "" {
				a.err += ` (stop_reason "refusal"): ` + explanation
			}
		}
	}
}
