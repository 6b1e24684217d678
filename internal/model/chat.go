package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// chatClient speaks POST {base}/chat/completions.
type chatClient struct{ *core }

func (c *chatClient) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	body, err := c.encodeChat(req)
	if err != nil {
		return Response{}, c.newError(CodeProvider, "encode request: "+err.Error(), err)
	}
	p, err := c.post(ctx, "/chat/completions", body, func() eventParser { return newChatParser(c.limits, onDelta) })
	if err != nil {
		return Response{}, c.imageHint(req, err)
	}
	if p.(*chatParser).length {
		return Response{}, c.newError(CodeProvider, `the answer was cut off at the model's output token limit (finish_reason "length"); ask for a shorter answer or raise the model's output limit`, nil)
	}
	return c.finish(p.collector())
}

func (c *core) chatBody(req Request, slots *imageSlots) jsonObject {
	msgs := make([]jsonObject, 0, len(req.Messages)+1)
	if req.Instructions != "" {
		msgs = append(msgs, jsonObject{"role": "system", "content": req.Instructions})
	}
	for _, m := range req.Messages {
		msgs = append(msgs, chatMessage(m, slots))
	}
	body := jsonObject{
		"model":          firstNonEmpty(req.Model, c.opts.Model),
		"messages":       msgs,
		"stream":         true,
		"stream_options": jsonObject{"include_usage": true},
	}
	if len(req.Tools) > 0 {
		tools := make([]jsonObject, 0, len(req.Tools))
		for _, t := range req.Tools {
			tools = append(tools, jsonObject{"type": "function", "function": jsonObject{"name": t.Name, "description": t.Description, "parameters": schemaOrEmpty(t.Parameters)}})
		}
		body["tools"] = tools
	}
	if e := firstNonEmpty(req.ReasoningEffort, c.opts.ReasoningEffort); e != "" {
		body["reasoning_effort"] = e
	}
	return body
}

// chatMessage is one history message on the Chat Completions wire.
func chatMessage(m Message, slots *imageSlots) jsonObject {
	switch m.Role {
	case ToolRole:
		return jsonObject{"role": "tool", "tool_call_id": m.ToolCallID, "content": m.Content}
	case Assistant:
		am := jsonObject{"role": "assistant", "content": m.Content}
		if len(m.ToolCalls) > 0 {
			if m.Content == "" {
				am["content"] = nil
			}
			calls := make([]jsonObject, 0, len(m.ToolCalls))
			for _, tc := range m.ToolCalls {
				calls = append(calls, jsonObject{"id": tc.ID, "type": "function", "function": jsonObject{"name": tc.Name, "arguments": argsOrEmpty(tc.Arguments)}})
			}
			am["tool_calls"] = calls
		}
		return am
	}
	return jsonObject{"role": string(m.Role), "content": chatUserContent(m, slots)}
}

// encodeChat is req's body, its history from req.Cache when it can.
func (c *core) encodeChat(req Request) (reqBody, error) {
	if !cacheable(req.Cache, req.Messages) {
		return c.encode(func(slots *imageSlots) jsonObject { return c.chatBody(req, slots) })
	}
	var system []byte
	if req.Instructions != "" {
		b, err := marshalJoined(jsonObject{"role": "system", "content": req.Instructions})
		if err != nil {
			return reqBody{}, err
		}
		system = b
	}
	list, err := req.Cache.items(WireChat, system, req.Messages, func(m Message) ([]byte, error) {
		return marshalJoined(chatMessage(m, nil))
	})
	if err != nil {
		return reqBody{}, err
	}
	bare := req
	bare.Messages, bare.Instructions = nil, ""
	return spliceList(c.chatBody(bare, nil), "messages", list...)
}

// chatUserContent is a user message's content: its text, or with images
// an array of a text part and image_url parts holding data: URLs.
func chatUserContent(m Message, slots *imageSlots) any {
	var parts []jsonObject
	for _, im := range m.Images {
		if im.sendable() {
			parts = append(parts, jsonObject{"type": "image_url", "image_url": jsonObject{"url": slots.dataURL(im)}})
		}
	}
	if len(parts) == 0 {
		return m.Content
	}
	if m.Content != "" {
		parts = append([]jsonObject{{"type": "text", "text": m.Content}}, parts...)
	}
	return parts
}

// chatParser folds chat.completion.chunk events into a collector. A tool
// call continues the call at its index (or, without an index, the last
// call) unless it brings a new id, which starts a new call.
type chatParser struct {
	col      *collector
	byIndex  map[int]*callAcc
	last     *callAcc
	finished bool
	length   bool
}

func newChatParser(l Limits, onDelta func(Delta)) *chatParser {
	return &chatParser{col: newCollector(l, onDelta), byIndex: map[int]*callAcc{}}
}

func (p *chatParser) collector() *collector { return p.col }

type chatChunk struct {
	Choices []struct {
		Index int       `json:"index"`
		Delta chatDelta `json:"delta"`
		// Message is what a few servers send instead of delta in a
		// single final chunk.
		Message      *chatDelta `json:"message"`
		FinishReason *string    `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
		Details          struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type chatDelta struct {
	Content          chatContent `json:"content"`
	Refusal          string      `json:"refusal"`
	ReasoningContent string      `json:"reasoning_content"`
	Reasoning        string      `json:"reasoning"`
	ToolCalls        []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string   `json:"name"`
			Arguments jsonText `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatContent is delta.content: a string, or an array of parts whose text
// parts are the answer and whose thinking parts are reasoning.
type chatContent struct {
	text, reasoning string
}

func (c *chatContent) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 1 && b[0] == '"':
		if in := b[1 : len(b)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
			c.text = string(in) // the common case, without a second decoder
			return nil
		}
		return json.Unmarshal(b, &c.text)
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			Thinking json.RawMessage `json:"thinking"`
		}
		if err := decode(b, &parts); err != nil {
			return err
		}
		var text, reason strings.Builder
		for _, p := range parts {
			switch p.Type {
			case "text", "output_text":
				text.WriteString(p.Text)
			case "thinking", "reasoning":
				reason.WriteString(p.Text)
				reason.WriteString(flatText(p.Thinking))
			}
		}
		c.text, c.reasoning = text.String(), reason.String()
	}
	return nil
}

// flatText is the text of a string, or of the "text" fields of an array of
// parts; anything else is empty.
func flatText(b json.RawMessage) string {
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if decode(b, &parts) != nil {
		return ""
	}
	var out strings.Builder
	for _, p := range parts {
		out.WriteString(p.Text)
	}
	return out.String()
}

func (p *chatParser) event(_ string, data []byte) (bool, error) {
	if string(data) == "[DONE]" {
		return true, nil
	}
	var ch chatChunk
	if err := decode(data, &ch); err != nil {
		return false, &Error{Code: CodeProvider, Message: fmt.Sprintf("malformed stream chunk: %v", err)}
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		msg := providerMessage(data)
		if msg == "" {
			msg = "the provider reported a stream error"
		}
		return false, &Error{Code: CodeProvider, Message: msg}
	}
	if u := ch.Usage; u != nil {
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.CompletionTokens
		}
		p.col.usage = &Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: total, CacheReadTokens: u.Details.CachedTokens}
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // only the first choice is the answer
		}
		d := &choice.Delta
		if choice.Message != nil {
			d = choice.Message
		}
		if err := p.delta(d); err != nil {
			return false, err
		}
		if r := choice.FinishReason; r != nil && *r != "" {
			p.finished = true
			p.length = *r == "length"
		}
	}
	return false, nil
}

func (p *chatParser) delta(d *chatDelta) error {
	for _, r := range []string{d.ReasoningContent, d.Reasoning, d.Content.reasoning} {
		if err := p.col.addReasoning(0, r); err != nil {
			return err
		}
	}
	for _, t := range []string{d.Content.text, d.Refusal} {
		if err := p.col.addText(0, t); err != nil {
			return err
		}
	}
	for _, tc := range d.ToolCalls {
		if err := p.toolDelta(tc.Index, tc.ID, tc.Function.Name, string(tc.Function.Arguments)); err != nil {
			return err
		}
	}
	return nil
}

func (p *chatParser) toolDelta(index *int, id, name, args string) error {
	c := p.last
	if index != nil {
		c = p.byIndex[*index]
	}
	if c == nil || (id != "" && c.id != "" && c.id != id) {
		var err error
		if c, err = p.col.newCall(id, name); err != nil {
			return err
		}
		if index != nil {
			c.order = *index<<16 + c.order
			p.byIndex[*index] = c
		}
	}
	p.last = c
	p.col.setID(c, id)
	if c.name == "" {
		c.name = name
	}
	return p.col.addArgs(c, args)
}

// completeAtEOF accepts a stream that ends without "[DONE]" once a choice
// has finished.
func (p *chatParser) completeAtEOF() bool { return p.finished }
