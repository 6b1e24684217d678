package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// anthropicClient speaks the Anthropic Messages API: POST
// {base}/v1/messages with x-api-key and anthropic-version.
type anthropicClient struct{ *core }

// defaultMaxOutput is max_tokens when the request names no budget.
const defaultMaxOutput = 8192

// thinkingBudget maps reasoning_effort onto an extended-thinking budget in
// tokens; 0 means thinking is off.
func thinkingBudget(effort string) (int, error) {
	switch effort {
	case "", "none", "off":
		return 0, nil
	case "minimal":
		return 1024, nil
	case "low":
		return 4096, nil
	case "medium":
		return 8192, nil
	case "high":
		return 16384, nil
	case "xhigh", "max":
		return 32768, nil
	}
	return 0, fmt.Errorf("model: reasoning_effort %q has no thinking budget on the anthropic wire: use none, minimal, low, medium, high or xhigh", effort)
}

func (c *anthropicClient) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	budget, err := thinkingBudget(firstNonEmpty(req.ReasoningEffort, c.opts.ReasoningEffort))
	if err != nil {
		return Response{}, c.newError(CodeProvider, err.Error(), err)
	}
	body, err := c.encodeAnthropic(req, budget)
	if err != nil {
		return Response{}, c.newError(CodeProvider, "encode request: "+err.Error(), err)
	}
	path := "/v1/messages"
	if strings.HasSuffix(c.base.Path, "/v1") {
		path = "/messages"
	}
	p, err := c.post(ctx, path, body, func() eventParser { return newAnthropicParser(c.limits, onDelta) })
	if err != nil {
		return Response{}, c.imageHint(req, err)
	}
	if err := p.(*anthropicParser).stopped(); err != nil {
		return Response{}, c.redact(err)
	}
	return c.finish(p.collector())
}

// ephemeral is the cache_control of a prompt-cache breakpoint.
func ephemeral() jsonObject { return jsonObject{"type": "ephemeral"} }

// anthropicBody builds the request. Prompt caching marks the system prompt,
// the tool list and the last message.
func (c *core) anthropicBody(req Request, budget int, slots *imageSlots) jsonObject {
	msgs := anthropicMessages(req.Messages, budget > 0, slots)
	if n := len(msgs); n > 0 {
		blocks := msgs[n-1]["content"].([]jsonObject)
		blocks[len(blocks)-1]["cache_control"] = ephemeral()
	}
	maxOut := req.MaxOutputTokens
	if maxOut <= 0 {
		maxOut = defaultMaxOutput
	}
	body := jsonObject{
		"model":      firstNonEmpty(req.Model, c.opts.Model),
		"max_tokens": maxOut + budget,
		"stream":     true,
		"messages":   msgs,
	}
	if req.Instructions != "" {
		body["system"] = []jsonObject{{"type": "text", "text": req.Instructions, "cache_control": ephemeral()}}
	}
	var tools []jsonObject
	if req.HostedWebSearch {
		tools = append(tools, jsonObject{"type": "web_search_20250305", "name": "web_search"})
	}
	for _, t := range req.Tools {
		tools = append(tools, jsonObject{"name": t.Name, "description": t.Description, "input_schema": schemaOrEmpty(t.Parameters)})
	}
	if len(tools) > 0 {
		tools[len(tools)-1]["cache_control"] = ephemeral()
		body["tools"] = tools
	}
	if budget > 0 {
		body["thinking"] = jsonObject{"type": "enabled", "budget_tokens": budget}
	}
	return body
}

// anthropicMessages replays the history as content blocks, merging
// consecutive messages of one role and starting with a user message, as
// the API requires. Thinking blocks are replayed only when thinking is on,
// and only for the assistant messages of the current tool loop (after the
// last user prompt).
func anthropicMessages(history []Message, thinking bool, slots *imageSlots) []jsonObject {
	lastPrompt := -1
	for i, m := range history {
		if m.Role == User {
			lastPrompt = i
		}
	}
	var msgs []jsonObject
	add := func(role string, blocks ...jsonObject) {
		if len(blocks) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1]["role"] == role {
			msgs[n-1]["content"] = append(msgs[n-1]["content"].([]jsonObject), blocks...)
			return
		}
		msgs = append(msgs, jsonObject{"role": role, "content": blocks})
	}
	for i, m := range history {
		add(anthropicRole(m), anthropicBlocks(m, thinking && i > lastPrompt, slots)...)
	}
	if len(msgs) > 0 && msgs[0]["role"] != "user" {
		msgs = append([]jsonObject{{"role": "user", "content": []jsonObject{{"type": "text", "text": "(earlier conversation omitted)"}}}}, msgs...)
	}
	return msgs
}

// encodeAnthropic is req's body, each message's blocks from req.Cache when
// it can (a message whose thinking blocks are not replayed is looked up
// without them). The last message's blocks are encoded afresh: its last
// block carries the cache_control breakpoint.
func (c *core) encodeAnthropic(req Request, budget int) (reqBody, error) {
	if !cacheable(req.Cache, req.Messages) || len(req.Messages) == 0 {
		return c.encode(func(slots *imageSlots) jsonObject { return c.anthropicBody(req, budget, slots) })
	}
	lastPrompt := -1
	for i, m := range req.Messages {
		if m.Role == User {
			lastPrompt = i
		}
	}
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		if budget <= 0 || i <= lastPrompt {
			m.Thinking = nil
		}
		msgs[i] = m
	}
	encs, err := req.Cache.encoded(WireAnthropic, msgs, func(m Message) ([]byte, error) {
		return marshalJoined(anthropicBlocks(m, len(m.Thinking) > 0, nil)...)
	})
	if err != nil {
		return reqBody{}, err
	}
	last := -1
	for i, b := range encs {
		if len(b) > 0 {
			last = i
		}
	}
	if last < 0 {
		return c.encode(func(slots *imageSlots) jsonObject { return c.anthropicBody(req, budget, slots) })
	}
	blocks := anthropicBlocks(msgs[last], len(msgs[last].Thinking) > 0, nil)
	blocks[len(blocks)-1]["cache_control"] = ephemeral()
	if encs[last], err = marshalJoined(blocks...); err != nil {
		return reqBody{}, err
	}
	size := 64
	for _, b := range encs {
		size += len(b) + 32
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	role := ""
	for i, b := range encs {
		if len(b) == 0 {
			continue
		}
		r := anthropicRole(msgs[i])
		if r == role {
			out = append(out, ',')
			out = append(out, b...)
			continue
		}
		if role != "" {
			out = append(out, `],"role":"`+role+`"},`...)
		} else if r != "user" {
			out = append(out, `{"content":[{"text":"(earlier conversation omitted)","type":"text"}],"role":"user"},`...)
		}
		role = r
		out = append(out, `{"content":[`...)
		out = append(out, b...)
	}
	out = append(out, `],"role":"`+role+`"}]`...)
	bare := req
	bare.Messages = nil
	return spliceList(c.anthropicBody(bare, budget, nil), "messages", out)
}

// anthropicRole is the role m's blocks are sent under.
func anthropicRole(m Message) string {
	if m.Role == Assistant {
		return "assistant"
	}
	return "user"
}

// anthropicBlocks are m's content blocks, its thinking blocks first when
// withThinking.
func anthropicBlocks(m Message, withThinking bool, slots *imageSlots) []jsonObject {
	var blocks []jsonObject
	switch m.Role {
	case ToolRole:
		out := m.Content
		if out == "" {
			out = "(no output)"
		}
		return []jsonObject{{"type": "tool_result", "tool_use_id": m.ToolCallID, "content": out}}
	case Assistant:
		if withThinking {
			for _, t := range m.Thinking {
				if t.Redacted != "" {
					blocks = append(blocks, jsonObject{"type": "redacted_thinking", "data": t.Redacted})
				} else {
					blocks = append(blocks, jsonObject{"type": "thinking", "thinking": t.Text, "signature": t.Signature})
				}
			}
		}
		if m.Content != "" {
			blocks = append(blocks, jsonObject{"type": "text", "text": m.Content})
		}
		for _, tc := range m.ToolCalls {
			blocks = append(blocks, jsonObject{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": inputObject(tc.Arguments)})
		}
		return blocks
	}
	for _, im := range m.Images {
		if im.sendable() {
			blocks = append(blocks, jsonObject{"type": "image", "source": jsonObject{"type": "base64", "media_type": im.MediaType, "data": slots.base64(im)}})
		}
	}
	if m.Content != "" {
		blocks = append(blocks, jsonObject{"type": "text", "text": m.Content})
	}
	return blocks
}

// inputObject is a call's arguments as the JSON object tool_use needs.
func inputObject(args string) json.RawMessage {
	s := strings.TrimSpace(args)
	if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return json.RawMessage(`{}`)
}

// anthropicParser folds Messages stream events into a collector. Text
// blocks that follow each other are one run of text; any other block
// (thinking, tool use, server tools and their results) ends the run, and
// the next text is set off by a blank line.
type anthropicParser struct {
	col    *collector
	blocks map[int]*antBlock
	// seg numbers the runs of text blocks.
	seg        int
	stopReason string
	// stopDetail is the provider's explanation of the stop, if any.
	stopDetail string
	usage      antUsage
}

type antBlock struct {
	kind  string
	seg   int
	call  *callAcc
	think int // index in col.thinking, or -1
	// thinking and signature collect the deltas of a thinking block.
	thinking, signature strings.Builder
	// input is tool_use input given whole (no input_json_delta follows).
	input    json.RawMessage
	streamed bool
}

func newAnthropicParser(l Limits, onDelta func(Delta)) *anthropicParser {
	return &anthropicParser{col: newCollector(l, onDelta), blocks: map[int]*antBlock{}}
}

func (p *anthropicParser) collector() *collector { return p.col }

type antContent struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	Citations []antCitation   `json:"citations"`
}

type antCitation struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// antUsage keeps each field's presence: the final figure is the last
// message_delta value of each field, else message_start's.
type antUsage struct {
	InputTokens   *int64 `json:"input_tokens"`
	OutputTokens  *int64 `json:"output_tokens"`
	CacheCreation *int64 `json:"cache_creation_input_tokens"`
	CacheRead     *int64 `json:"cache_read_input_tokens"`
}

func (u *antUsage) merge(v *antUsage) {
	if v == nil {
		return
	}
	for _, f := range [][2]**int64{{&u.InputTokens, &v.InputTokens}, {&u.OutputTokens, &v.OutputTokens}, {&u.CacheCreation, &v.CacheCreation}, {&u.CacheRead, &v.CacheRead}} {
		if *f[1] != nil {
			*f[0] = *f[1]
		}
	}
}

func (u antUsage) usage() *Usage {
	if u.InputTokens == nil && u.OutputTokens == nil {
		return nil
	}
	v := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	r := &Usage{OutputTokens: v(u.OutputTokens), CacheReadTokens: v(u.CacheRead), CacheWriteTokens: v(u.CacheCreation)}
	r.InputTokens = v(u.InputTokens) + r.CacheReadTokens + r.CacheWriteTokens
	r.TotalTokens = r.InputTokens + r.OutputTokens
	return r
}

type antBlockEvent struct {
	Index        int        `json:"index"`
	ContentBlock antContent `json:"content_block"`
}

type antDeltaEvent struct {
	Index int `json:"index"`
	Delta struct {
		Type        string      `json:"type"`
		Text        string      `json:"text"`
		PartialJSON string      `json:"partial_json"`
		Thinking    string      `json:"thinking"`
		Signature   string      `json:"signature"`
		Citation    antCitation `json:"citation"`
	} `json:"delta"`
}

type antMessageEvent struct {
	// message_start
	Message struct {
		Content    []antContent `json:"content"`
		StopReason *string      `json:"stop_reason"`
		Usage      *antUsage    `json:"usage"`
	} `json:"message"`
	// message_delta
	Delta struct {
		StopReason  *string `json:"stop_reason"`
		StopDetails struct {
			Explanation string `json:"explanation"`
		} `json:"stop_details"`
	} `json:"delta"`
	Usage *antUsage `json:"usage"`
	// error
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// Anthropic event kinds the parser uses.
const (
	antOther = iota
	antMessageStart
	antBlockStart
	antBlockDelta
	antBlockStop
	antMessageDelta
	antMessageStop
	antError
)

func antKind(typ []byte) int {
	switch string(typ) {
	case "message_start":
		return antMessageStart
	case "content_block_start":
		return antBlockStart
	case "content_block_delta":
		return antBlockDelta
	case "content_block_stop":
		return antBlockStop
	case "message_delta":
		return antMessageDelta
	case "message_stop":
		return antMessageStop
	case "error":
		return antError
	}
	return antOther // ping and anything new
}

func (p *anthropicParser) event(name string, data []byte) (bool, error) {
	typ, ok := typeOf(data)
	if !ok {
		if !json.Valid(data) {
			return false, &Error{Code: CodeProvider, Message: fmt.Sprintf("malformed stream event %q: not JSON", name)}
		}
		typ = []byte(name)
	}
	kind := antKind(typ)
	switch kind {
	case antOther:
		return false, nil
	case antMessageStop:
		return true, p.closeAll()
	}
	switch kind {
	case antBlockDelta:
		var ev antDeltaEvent
		if err := p.decode(typ, data, &ev); err != nil {
			return false, err
		}
		return false, p.delta(&ev)
	case antBlockStart, antBlockStop:
		var ev antBlockEvent
		if err := p.decode(typ, data, &ev); err != nil {
			return false, err
		}
		if kind == antBlockStop {
			return false, p.close(ev.Index)
		}
		return false, p.start(ev.Index, ev.ContentBlock)
	}
	var ev antMessageEvent
	if err := p.decode(typ, data, &ev); err != nil {
		return false, err
	}
	switch kind {
	case antMessageStart:
		p.usage.merge(ev.Message.Usage)
		if r := ev.Message.StopReason; r != nil {
			p.stopReason = *r
		}
		for i, b := range ev.Message.Content {
			if err := p.start(-1-i, b); err != nil {
				return false, err
			}
		}
	case antMessageDelta:
		p.usage.merge(ev.Usage)
		if r := ev.Delta.StopReason; r != nil {
			p.stopReason = *r
		}
		if x := ev.Delta.StopDetails.Explanation; x != "" {
			p.stopDetail = x
		}
	case antError:
		return false, p.streamError(ev.Error.Type, ev.Error.Message)
	}
	return false, nil
}

func (p *anthropicParser) decode(typ, data []byte, v any) error {
	if err := decode(data, v); err != nil {
		return &Error{Code: CodeProvider, Message: fmt.Sprintf("malformed stream event %q: %v", typ, err)}
	}
	return nil
}

// streamError is an `error` event. Overload, rate-limit and internal
// errors may be retried while nothing reached the caller.
func (p *anthropicParser) streamError(typ, msg string) error {
	if msg == "" {
		msg = "the provider reported a stream error"
	}
	if typ != "" {
		msg = typ + ": " + msg
	}
	e := &Error{Code: CodeProvider, Message: msg}
	switch typ {
	case "overloaded_error", "rate_limit_error", "api_error":
		e.cause = errStreamRetryable
	}
	return e
}

func (p *anthropicParser) start(index int, b antContent) error {
	blk := &antBlock{kind: b.Type, think: -1}
	p.blocks[index] = blk
	if b.Type != "text" {
		p.seg++
	}
	blk.seg = p.seg
	switch b.Type {
	case "text":
		for _, c := range b.Citations {
			p.col.cite(c.URL)
		}
		return p.col.addText(blk.seg, b.Text)
	case "thinking", "redacted_thinking":
		blk.think = len(p.col.thinking)
		p.col.thinking = append(p.col.thinking, Thinking{Redacted: b.Data})
		blk.thinking.WriteString(b.Thinking)
		blk.signature.WriteString(b.Signature)
		if err := p.col.count(len(b.Signature) + len(b.Data)); err != nil {
			return err
		}
		return p.col.addReasoning(index, b.Thinking)
	case "tool_use":
		c, err := p.col.newCall(b.ID, b.Name)
		if err != nil {
			return err
		}
		blk.call, blk.input = c, b.Input
	case "server_tool_use":
		if b.Name != "web_search" {
			p.col.unusedKind(b.Name)
		}
	case "web_search_tool_result":
	default:
		p.col.unusedKind(b.Type)
	}
	return nil
}

func (p *anthropicParser) delta(ev *antDeltaEvent) error {
	blk := p.blocks[ev.Index]
	if blk == nil {
		return nil
	}
	d := &ev.Delta
	switch d.Type {
	case "text_delta":
		if blk.kind == "text" {
			return p.col.addText(blk.seg, d.Text)
		}
	case "citations_delta":
		p.col.cite(d.Citation.URL)
	case "input_json_delta":
		if blk.call != nil {
			blk.streamed = true
			return p.col.addArgs(blk.call, d.PartialJSON)
		}
	case "thinking_delta":
		if blk.think >= 0 {
			blk.thinking.WriteString(d.Thinking)
			return p.col.addReasoning(ev.Index, d.Thinking)
		}
	case "signature_delta":
		if blk.think >= 0 {
			blk.signature.WriteString(d.Signature)
			return p.col.count(len(d.Signature))
		}
	}
	return nil
}

// close settles a finished block: the text of a thinking block, and the
// arguments of a tool_use whose input came whole.
func (p *anthropicParser) close(index int) error {
	blk := p.blocks[index]
	if blk != nil && blk.think >= 0 {
		t := &p.col.thinking[blk.think]
		t.Text, t.Signature = blk.thinking.String(), blk.signature.String()
	}
	if blk == nil || blk.call == nil || blk.streamed {
		return nil
	}
	blk.streamed = true
	if in := strings.TrimSpace(string(blk.input)); in != "" && in != "null" {
		return p.col.setArgs(blk.call, in)
	}
	return nil
}

func (p *anthropicParser) closeAll() error {
	p.col.usage = p.usage.usage()
	for i := range p.blocks {
		if err := p.close(i); err != nil {
			return err
		}
	}
	return nil
}

// stopped turns the stop reason into a failure where the answer cannot be
// used: cut off at the token limit or the context window, or refused
// without a word.
func (p *anthropicParser) stopped() error {
	switch p.stopReason {
	case "max_tokens":
		return &Error{Code: CodeProvider, Message: `the answer was cut off at the output token limit (stop_reason "max_tokens"); ask for a shorter answer, or raise context.reserve_output_tokens`}
	case "model_context_window_exceeded":
		return &Error{Code: CodeProvider, Message: `the model's context window is full (stop_reason "model_context_window_exceeded"); clear the session or lower context.max_tokens`}
	case "refusal":
		// The text so far is the answer; calls of a refused answer never run.
		p.col.calls = nil
		if p.col.text.Len() == 0 {
			msg := `the model declined to answer (stop_reason "refusal")`
			if p.stopDetail != "" {
				msg += ": " + p.stopDetail
			}
			return &Error{Code: CodeProvider, Message: msg}
		}
	}
	return nil
}
