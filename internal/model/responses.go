package model

import (
	"context"
	"encoding/json"
	"fmt"
)

// responsesClient speaks POST {base}/responses.
type responsesClient struct{ *core }

func (c *responsesClient) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	body, err := c.encodeResponses(req)
	if err != nil {
		return Response{}, c.newError(CodeProvider, "encode request: "+err.Error(), err)
	}
	p, err := c.post(ctx, "/responses", body, func() eventParser { return newResponsesParser(c.limits, onDelta) })
	if err != nil {
		return Response{}, c.imageHint(req, err)
	}
	return c.finish(p.collector())
}

// finish turns the collected stream into the Response, redacting errors.
func (c *core) finish(col *collector) (Response, error) {
	r, err := col.finish()
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

// encodeResponses is req's body, its history from req.Cache when it can.
func (c *core) encodeResponses(req Request) (reqBody, error) {
	if !cacheable(req.Cache, req.Messages) {
		return c.encode(func(slots *imageSlots) jsonObject { return c.responsesBody(req, slots) })
	}
	list, err := req.Cache.items(WireResponses, nil, req.Messages, func(m Message) ([]byte, error) {
		return marshalJoined(responsesItems(m, nil)...)
	})
	if err != nil {
		return reqBody{}, err
	}
	bare := req
	bare.Messages = nil
	return spliceList(c.responsesBody(bare, nil), "input", list...)
}

// encode marshals the body build makes and splices its images in.
func (c *core) encode(build func(*imageSlots) jsonObject) (reqBody, error) {
	slots := newImageSlots()
	body, err := json.Marshal(build(slots))
	if err == nil {
		body, err = slots.splice(body)
	}
	return newBody(body), err
}

func (c *core) responsesBody(req Request, slots *imageSlots) jsonObject {
	input := make([]jsonObject, 0, len(req.Messages))
	for _, m := range req.Messages {
		input = append(input, responsesItems(m, slots)...)
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

// responsesItems are the input items of one history message.
func responsesItems(m Message, slots *imageSlots) []jsonObject {
	switch m.Role {
	case ToolRole:
		return []jsonObject{{"type": "function_call_output", "call_id": m.ToolCallID, "output": m.Content}}
	case Assistant:
		var items []jsonObject
		if m.Content != "" {
			items = append(items, jsonObject{"type": "message", "role": "assistant", "content": m.Content})
		}
		for _, tc := range m.ToolCalls {
			items = append(items, jsonObject{"type": "function_call", "call_id": tc.ID, "name": tc.Name, "arguments": argsOrEmpty(tc.Arguments)})
		}
		return items
	}
	return []jsonObject{{"type": "message", "role": string(m.Role), "content": responsesUserContent(m, slots)}}
}

// responsesUserContent is a user message's content: its text, or with
// images a list of an input_text part and input_image parts whose
// image_url is a data: URL.
func responsesUserContent(m Message, slots *imageSlots) any {
	var parts []jsonObject
	for _, im := range m.Images {
		if im.sendable() {
			parts = append(parts, jsonObject{"type": "input_image", "image_url": slots.dataURL(im)})
		}
	}
	if len(parts) == 0 {
		return m.Content
	}
	if m.Content != "" {
		parts = append([]jsonObject{{"type": "input_text", "text": m.Content}}, parts...)
	}
	return parts
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

// responsesParser folds Responses stream events into a collector. Output
// items are keyed by output_index (some servers give every event of one
// item a new item id); events without an index fall back to the item id.
type responsesParser struct {
	col   *collector
	items map[int]*respState
	byID  map[string]*respState
	last  *respState
	// synthetic keys for items known only by id count down from -1.
	nextKey int
}

// respState is what the parser knows of one output item.
type respState struct {
	key  int
	kind string
	call *callAcc
	// text and reasoned say content arrived as deltas (or was recovered),
	// so final objects must not add it again.
	text, reasoned bool
}

func newResponsesParser(l Limits, onDelta func(Delta)) *responsesParser {
	return &responsesParser{col: newCollector(l, onDelta), items: map[int]*respState{}, byID: map[string]*respState{}, nextKey: -1}
}

func (p *responsesParser) collector() *collector { return p.col }

// respRef locates the item an event is about; OutputIndex is -1 when the
// event has none.
type respRef struct {
	OutputIndex int    `json:"output_index"`
	ItemID      string `json:"item_id"`
}

// respDelta is a delta event. The item id is decoded only when the event
// has no output_index (see deltaRef), which keeps the common case to one
// allocation: the delta text.
type respDelta struct {
	OutputIndex  int    `json:"output_index"`
	Delta        string `json:"delta"`
	SummaryIndex int    `json:"summary_index"`
	ContentIndex int    `json:"content_index"`
}

type respItemEvent struct {
	OutputIndex int      `json:"output_index"`
	Item        respItem `json:"item"`
}

type respItem struct {
	Type      string     `json:"type"`
	ID        string     `json:"id"`
	CallID    string     `json:"call_id"`
	Name      string     `json:"name"`
	Arguments jsonText   `json:"arguments"`
	Content   []respPart `json:"content"`
	Summary   []respPart `json:"summary"`
}

type respPart struct {
	Type        string           `json:"type"`
	Text        string           `json:"text"`
	Refusal     string           `json:"refusal"`
	Annotations []respAnnotation `json:"annotations"`
}

type respAnnotation struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type respError struct {
	Code    any    `json:"code"`
	Message string `json:"message"`
}

type respUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	Details      struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

type respFinal struct {
	Response struct {
		Error             *respError `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Output []respItem `json:"output"`
		Usage  *respUsage `json:"usage"`
	} `json:"response"`
	// error events
	Message string     `json:"message"`
	Error   *respError `json:"error"`
}

func (p *responsesParser) event(name string, data []byte) (bool, error) {
	typ, ok := typeOf(data)
	if !ok {
		if !json.Valid(data) {
			return false, &Error{Code: CodeProvider, Message: fmt.Sprintf("malformed stream event %q: not JSON", name)}
		}
		typ = []byte(name)
	}
	switch string(typ) {
	case "response.output_text.delta", "response.refusal.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.function_call_arguments.delta":
		return false, p.deltaEvent(typ, data)
	case "response.function_call_arguments.done":
		ev := struct {
			respRef
			Arguments jsonText `json:"arguments"`
		}{respRef: respRef{OutputIndex: -1}}
		if err := p.decode(typ, data, &ev); err != nil {
			return false, err
		}
		c, err := p.call(p.item(ev.respRef, "function_call"), "", "")
		if err != nil || ev.Arguments == "" {
			return false, err
		}
		return false, p.col.setArgs(c, string(ev.Arguments))
	case "response.output_text.annotation.added":
		var ev struct {
			Annotation respAnnotation `json:"annotation"`
		}
		if err := p.decode(typ, data, &ev); err != nil {
			return false, err
		}
		if ev.Annotation.Type == "url_citation" {
			p.col.cite(ev.Annotation.URL)
		}
	case "response.output_item.added", "response.output_item.done":
		ev := respItemEvent{OutputIndex: -1}
		if err := p.decode(typ, data, &ev); err != nil {
			return false, err
		}
		ref := respRef{OutputIndex: ev.OutputIndex, ItemID: ev.Item.ID}
		if string(typ) == "response.output_item.added" {
			return false, p.itemAdded(ref, ev.Item)
		}
		return false, p.itemDone(ref, ev.Item)
	case "response.completed", "response.failed", "response.incomplete", "error":
		var ev respFinal
		if err := p.decode(typ, data, &ev); err != nil {
			return false, err
		}
		return p.final(string(typ), ev)
	}
	return false, nil
}

// deltaEvent adds a text, reasoning or arguments delta to its item.
func (p *responsesParser) deltaEvent(typ, data []byte) error {
	ev, ref, err := p.delta(typ, data)
	if err != nil {
		return err
	}
	switch string(typ) {
	case "response.output_text.delta", "response.refusal.delta":
		it := p.item(ref, "message")
		it.text = true
		return p.col.addText(it.key, ev.Delta)
	case "response.function_call_arguments.delta":
		c, err := p.call(p.item(ref, "function_call"), "", "")
		if err != nil {
			return err
		}
		return p.col.addArgs(c, ev.Delta)
	}
	it := p.item(ref, "reasoning")
	it.reasoned = true
	return p.col.addReasoning(it.key<<16+ev.SummaryIndex+ev.ContentIndex, ev.Delta)
}

// delta decodes a delta event and where it belongs.
func (p *responsesParser) delta(typ, data []byte) (respDelta, respRef, error) {
	ev := respDelta{OutputIndex: -1}
	if err := p.decode(typ, data, &ev); err != nil {
		return ev, respRef{}, err
	}
	ref := respRef{OutputIndex: ev.OutputIndex}
	if ref.OutputIndex < 0 {
		var id struct {
			ItemID string `json:"item_id"`
		}
		_ = decode(data, &id)
		ref.ItemID = id.ItemID
	}
	return ev, ref, nil
}

// final handles the events that end a response.
func (p *responsesParser) final(typ string, ev respFinal) (bool, error) {
	switch typ {
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
	}
	msg := ev.Message
	if msg == "" && ev.Error != nil {
		msg = ev.Error.Message
	}
	if msg == "" {
		msg = "the provider reported a stream error"
	}
	return false, &Error{Code: CodeProvider, Message: msg}
}

func (p *responsesParser) decode(typ, data []byte, v any) error {
	if err := decode(data, v); err != nil {
		return &Error{Code: CodeProvider, Message: fmt.Sprintf("malformed stream event %q: %v", typ, err)}
	}
	return nil
}

// item finds or creates the state of the item ref points at.
func (p *responsesParser) item(ref respRef, kind string) *respState {
	var it *respState
	switch {
	case ref.OutputIndex >= 0:
		if it = p.items[ref.OutputIndex]; it == nil {
			it = &respState{key: ref.OutputIndex, kind: kind}
			p.items[it.key] = it
		}
	case ref.ItemID != "":
		if it = p.byID[ref.ItemID]; it == nil {
			it = &respState{key: p.nextKey, kind: kind}
			p.nextKey--
		}
	case p.last != nil && p.last.kind == kind:
		it = p.last
	default:
		it = &respState{key: p.nextKey, kind: kind}
		p.nextKey--
	}
	if ref.ItemID != "" && p.byID[ref.ItemID] != it {
		p.byID[ref.ItemID] = it
	}
	if it.kind == "" {
		it.kind = kind
	}
	p.last = it
	return it
}

// call returns the item's function call, starting it when needed; a call
// whose call_id was already seen is the same call.
func (p *responsesParser) call(it *respState, callID, name string) (*callAcc, error) {
	if it.call == nil {
		c, err := p.col.newCall(callID, name)
		if err != nil {
			return nil, err
		}
		it.call = c
	}
	p.col.setID(it.call, callID)
	if it.call.name == "" {
		it.call.name = name
	}
	return it.call, nil
}

// callItem takes a function_call item's id, name and arguments (when it
// carries them).
func (p *responsesParser) callItem(it *respState, item respItem) error {
	c, err := p.call(it, item.CallID, item.Name)
	if err != nil || item.Arguments == "" {
		return err
	}
	return p.col.setArgs(c, string(item.Arguments))
}

func (p *responsesParser) itemAdded(ref respRef, item respItem) error {
	it := p.item(ref, item.Type)
	it.kind = item.Type
	switch item.Type {
	case "function_call":
		return p.callItem(it, item)
	case "message", "reasoning", "web_search_call":
	default:
		p.col.unusedKind(item.Type)
	}
	return nil
}

// itemDone takes a finished item: final arguments of a call, and text or
// reasoning that no delta carried.
func (p *responsesParser) itemDone(ref respRef, item respItem) error {
	it := p.item(ref, item.Type)
	switch item.Type {
	case "function_call":
		return p.callItem(it, item)
	case "message":
		for _, part := range item.Content {
			for _, a := range part.Annotations {
				if a.Type == "url_citation" {
					p.col.cite(a.URL)
				}
			}
		}
		if it.text {
			return nil
		}
		it.text = true
		for _, part := range item.Content {
			if err := p.col.addText(it.key, part.Text+part.Refusal); err != nil {
				return err
			}
		}
	case "reasoning":
		if it.reasoned {
			return nil
		}
		it.reasoned = true
		for i, part := range append(item.Summary, item.Content...) {
			if err := p.col.addReasoning(it.key<<16+i, part.Text); err != nil {
				return err
			}
		}
	case "web_search_call":
	default:
		p.col.unusedKind(item.Type)
	}
	return nil
}

// completed takes usage, and output the stream did not deliver as events
// (servers that send only the final object).
func (p *responsesParser) completed(ev respFinal) error {
	if u := ev.Response.Usage; u != nil {
		p.col.usage = &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, CacheReadTokens: u.Details.CachedTokens}
		if p.col.usage.TotalTokens == 0 {
			p.col.usage.TotalTokens = u.InputTokens + u.OutputTokens
		}
	}
	for i, item := range ev.Response.Output {
		// An item the stream named by id is that item (its position may
		// differ when the stream left items out); otherwise the position
		// is its output_index (some servers rotate ids).
		ref := respRef{OutputIndex: -1, ItemID: item.ID}
		if item.ID == "" || p.byID[item.ID] == nil {
			ref.OutputIndex = i
		}
		if err := p.itemDone(ref, item); err != nil {
			return err
		}
	}
	return nil
}
