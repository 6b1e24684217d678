package model

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// chatClient speaks POST {base}/chat/completions (runtime.md §6).
type chatClient struct{ *core }

func (c *chatClient) Stream(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	body, err := json.Marshal(c.chatBody(req))
	if err != nil {
		return Response{}, c.newError(CodeProvider, "encode request: "+err.Error(), err)
	}
	p := &chatParser{col: newCollector(c.limits, onDelta), byIndex: map[int]*callAcc{}}
	if err := c.post(ctx, "/chat/completions", body, p); err != nil {
		return Response{}, err
	}
	p.order()
	r, err := p.col.finish()
	if err != nil {
		return Response{}, c.redact(err)
	}
	return r, nil
}

func (c *core) chatBody(req Request) jsonObject {
	msgs := make([]jsonObject, 0, len(req.Messages)+1)
	if req.Instructions != "" {
		msgs = append(msgs, jsonObject{"role": "system", "content": req.Instructions})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case ToolRole:
			msgs = append(msgs, jsonObject{"role": "tool", "tool_call_id": m.ToolCallID, "content": m.Content})
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
			msgs = append(msgs, am)
		default:
			msgs = append(msgs, jsonObject{"role": string(m.Role), "content": m.Content})
		}
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

// chatParser folds chat.completion.chunk events into a collector; tool
// calls are assembled by their index.
type chatParser struct {
	col      *collector
	byIndex  map[int]*callAcc
	finished bool
}

type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (p *chatParser) event(_ string, data []byte) (bool, error) {
	if string(data) == "[DONE]" {
		return true, nil
	}
	var ch chatChunk
	if err := json.Unmarshal(data, &ch); err != nil {
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
		p.col.usage = &Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: total}
	}
	for _, choice := range ch.Choices {
		if d := choice.Delta.Content; d != nil {
			if err := p.col.addText(*d); err != nil {
				return false, err
			}
		}
		if d := choice.Delta.Refusal; d != nil {
			if err := p.col.addText(*d); err != nil {
				return false, err
			}
		}
		for _, tc := range choice.Delta.ToolCalls {
			if err := p.toolDelta(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments); err != nil {
				return false, err
			}
		}
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			p.finished = true
		}
	}
	return false, nil
}

func (p *chatParser) toolDelta(index int, id, name, args string) error {
	c := p.byIndex[index]
	if c == nil {
		var err error
		if c, err = p.col.newCall(id, name); err != nil {
			return err
		}
		p.byIndex[index] = c
	}
	if c.id == "" {
		c.id = id
	}
	if c.name == "" {
		c.name = name
	}
	return p.col.addArgs(c, args)
}

// order sorts the calls by index, the order the model listed them in.
func (p *chatParser) order() {
	idx := make([]int, 0, len(p.byIndex))
	for i := range p.byIndex {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	p.col.calls = p.col.calls[:0]
	for _, i := range idx {
		p.col.calls = append(p.col.calls, p.byIndex[i])
	}
}

// completeAtEOF accepts a stream that ends without "[DONE]" once a choice
// has finished.
func (p *chatParser) completeAtEOF() bool { return p.finished }
