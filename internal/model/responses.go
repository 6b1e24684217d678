package model

import (
	"context"
	"encoding/json"
	"fmt"
)

// responsesClient speaks POST {base}/responses (runtime.md §6).
type responsesClient struct{ *core }

func (c *responsesClient) Stream(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	body, err := json.Marshal(c.responsesBody(req))
	if err != nil {
		return Response{}, c.newError(CodeProvider, "encode request: "+err.Error(), err)
	}
	p := &responsesParser{col: newCollector(c.limits, onDelta), items: map[string]*callAcc{}}
	if err := c.post(ctx, "/responses", body, p); err != nil {
		return Response{}, err
	}
	r, err := p.col.finish()
	if err != nil {
		return Response{}, c.redact(err)
	}
	return r, nil
}

func (c *core) redact(err error) error {
	if e, ok := err.(*Error); ok {
		e.Message = cleanMessage(e.Message, c.secrets)
	}
	return err
}

type jsonObject = map[string]any

func (c *core) responsesBody(req Request) jsonObject {
	input := make([]jsonObject, 0, len(req.Messages))
	for _, m := range req.Messages {
		switch m.Role {
		case ToolRole:
			input = append(input, jsonObject{"type": "function_call_output", "call_id": m.ToolCallID, "output": m.Content})
		case Assistant:
			if m.Content != "" {
				input = append(input, jsonObject{"type": "message", "role": "assistant", "content": m.Content})
			}
			for _, tc := range m.ToolCalls {
				input = append(input, jsonObject{"type": "function_call", "call_id": tc.ID, "name": tc.Name, "arguments": argsOrEmpty(tc.Arguments)})
			}
		default:
			input = append(input, jsonObject{"type": "message", "role": string(m.Role), "content": m.Content})
		}
	}
	body := jsonObject{
		"model":  firstNonEmpty(req.Model, c.opts.Model),
		"input":  input,
		"stream": true,
		"store":  false,
	}
	if req.Instructions != "" {
		body["instructions"] = req.Instructions
	}
	tools := make([]jsonObject, 0, len(req.Tools)+1)
	for _, t := range req.Tools {
		tools = append(tools, jsonObject{"type": "function", "name": t.Name, "description": t.Description, "parameters": schemaOrEmpty(t.Parameters), "strict": false})
	}
	if req.HostedWebSearch {
		tools = append(tools, jsonObject{"type": "web_search"})
	}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	if e := firstNonEmpty(req.ReasoningEffort, c.opts.ReasoningEffort); e != "" {
		body["reasoning"] = jsonObject{"effort": e}
	}
	return body
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func argsOrEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

// responsesParser folds Responses stream events into a collector.
type responsesParser struct {
	col     *collector
	items   map[string]*callAcc // function_call items by item id
	sawText bool
}

type respItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type        string         `json:"type"`
		Text        string         `json:"text"`
		Annotations []respAnnotate `json:"annotations"`
	} `json:"content"`
}

type respAnnotate struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type respError struct {
	Code    any    `json:"code"`
	Message string `json:"message"`
}

type respEvent struct {
	Type       string       `json:"type"`
	Delta      string       `json:"delta"`
	ItemID     string       `json:"item_id"`
	Arguments  string       `json:"arguments"`
	Item       respItem     `json:"item"`
	Annotation respAnnotate `json:"annotation"`
	Message    string       `json:"message"`
	Error      *respError   `json:"error"`
	Response   struct {
		Status            string     `json:"status"`
		Error             *respError `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Output []respItem `json:"output"`
		Usage  *struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			TotalTokens  int64 `json:"total_tokens"`
		} `json:"usage"`
	} `json:"response"`
}

func (p *responsesParser) event(name string, data []byte) (bool, error) {
	var ev respEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, &Error{Code: CodeProvider, Message: fmt.Sprintf("malformed stream event %q: %v", name, err)}
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "response.output_text.delta":
		p.sawText = true
		return false, p.col.addText(ev.Delta)
	case "response.output_text.annotation.added":
		if ev.Annotation.Type == "url_citation" {
			p.col.cite(ev.Annotation.URL)
		}
	case "response.output_item.added":
		return false, p.itemAdded(ev.Item)
	case "response.function_call_arguments.delta":
		if c := p.items[ev.ItemID]; c != nil {
			return false, p.col.addArgs(c, ev.Delta)
		}
	case "response.function_call_arguments.done":
		if c := p.items[ev.ItemID]; c != nil {
			return false, p.col.setArgs(c, ev.Arguments)
		}
	case "response.output_item.done":
		return false, p.itemDone(ev.Item)
	case "response.completed":
		return true, p.completed(ev)
	case "response.failed":
		msg := "the provider reported the response failed"
		if e := ev.Response.Error; e != nil && e.Message != "" {
			msg = e.Message
		}
		return false, &Error{Code: CodeProvider, Message: msg}
	case "response.incomplete":
		reason := "unknown reason"
		if d := ev.Response.IncompleteDetails; d != nil && d.Reason != "" {
			reason = d.Reason
		}
		return false, &Error{Code: CodeProvider, Message: "the response is incomplete: " + reason}
	case "error":
		msg := ev.Message
		if msg == "" && ev.Error != nil {
			msg = ev.Error.Message
		}
		if msg == "" {
			msg = "the provider reported a stream error"
		}
		return false, &Error{Code: CodeProvider, Message: msg}
	}
	return false, nil
}

func (p *responsesParser) itemAdded(it respItem) error {
	if it.Type != "function_call" {
		return nil
	}
	if _, ok := p.items[it.ID]; ok {
		return nil
	}
	c, err := p.col.newCall(it.CallID, it.Name)
	if err != nil {
		return err
	}
	p.items[it.ID] = c
	return p.col.addArgs(c, it.Arguments)
}

func (p *responsesParser) itemDone(it respItem) error {
	switch it.Type {
	case "function_call":
		c := p.items[it.ID]
		if c == nil {
			if err := p.itemAdded(it); err != nil {
				return err
			}
			return nil
		}
		if it.CallID != "" {
			c.id = it.CallID
		}
		if it.Name != "" {
			c.name = it.Name
		}
		if it.Arguments != "" {
			return p.col.setArgs(c, it.Arguments)
		}
	case "message":
		p.citeContent(it)
	}
	return nil
}

func (p *responsesParser) citeContent(it respItem) {
	for _, part := range it.Content {
		for _, a := range part.Annotations {
			if a.Type == "url_citation" {
				p.col.cite(a.URL)
			}
		}
	}
}

// completed takes usage, and output the stream did not deliver as events
// (text without deltas, calls without item events).
func (p *responsesParser) completed(ev respEvent) error {
	if u := ev.Response.Usage; u != nil {
		p.col.usage = &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
		if p.col.usage.TotalTokens == 0 {
			p.col.usage.TotalTokens = u.InputTokens + u.OutputTokens
		}
	}
	for _, it := range ev.Response.Output {
		switch it.Type {
		case "message":
			p.citeContent(it)
			if p.sawText {
				continue
			}
			for _, part := range it.Content {
				if part.Type == "output_text" {
					if err := p.col.addText(part.Text); err != nil {
						return err
					}
				}
			}
		case "function_call":
			if _, ok := p.items[it.ID]; !ok || it.ID == "" {
				if err := p.itemDone(it); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
