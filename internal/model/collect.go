package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// paragraph joins text from separate message items or separated text blocks.
const paragraph = "\n\n"

// collector assembles one response from stream events, whatever the wire,
// and enforces the content limits as data arrives.
type collector struct {
	limits  Limits
	onDelta func(Delta)
	// delivered is set once any fragment went to onDelta.
	delivered bool
	// content counts answer, reasoning and argument bytes against
	// max_response_bytes.
	content int

	text    strings.Builder
	textSeg int // segment of the last answer text; -1 before any
	// reasonSeg is the segment of the last reasoning fragment.
	reasonSeg int

	calls   []*callAcc
	callIDs map[string]*callAcc

	cited []string
	seen  map[string]bool
	usage *Usage

	thinking []Thinking
	// unused names the output kinds the wire produced that SCV does not
	// use (hosted tools it never offers), for the empty-answer message.
	unused []string
	// reasoned records that reasoning arrived, for the same message.
	reasoned bool
}

type callAcc struct {
	id, name string
	args     strings.Builder
	// order sorts calls (chat: by index; others: arrival).
	order int
}

func newCollector(l Limits, onDelta func(Delta)) *collector {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	return &collector{limits: l, onDelta: onDelta, textSeg: -1, reasonSeg: -1, callIDs: map[string]*callAcc{}, seen: map[string]bool{}}
}

// count adds n content bytes and fails once max_response_bytes is passed.
func (a *collector) count(n int) error {
	a.content += n
	if a.content > a.limits.MaxResponseBytes {
		return &Error{Code: CodeResponse, Message: fmt.Sprintf("the response content exceeded provider_limits.max_response_bytes (%d)", a.limits.MaxResponseBytes)}
	}
	return nil
}

// addText appends answer text of segment seg (a message item, or a run of
// text blocks); text of a new segment is set off by a blank line.
func (a *collector) addText(seg int, s string) error {
	if s == "" {
		return nil
	}
	if a.text.Len() > 0 && seg != a.textSeg {
		if err := a.writeText(paragraph); err != nil {
			return err
		}
	}
	a.textSeg = seg
	return a.writeText(s)
}

func (a *collector) writeText(s string) error {
	if a.text.Len()+len(s) > a.limits.MaxAssistantBytes {
		return &Error{Code: CodeResponse, Message: fmt.Sprintf("the assistant text exceeded provider_limits.max_assistant_bytes (%d)", a.limits.MaxAssistantBytes)}
	}
	if err := a.count(len(s)); err != nil {
		return err
	}
	a.text.WriteString(s)
	a.delivered = true
	a.onDelta(Delta{Kind: DeltaText, Text: s})
	return nil
}

// addReasoning streams reasoning text of segment seg; it is counted but not
// kept (the Anthropic parser keeps its thinking blocks itself).
func (a *collector) addReasoning(seg int, s string) error {
	if s == "" {
		return nil
	}
	if a.reasoned && seg != a.reasonSeg {
		s = paragraph + s
	}
	a.reasonSeg, a.reasoned = seg, true
	if err := a.count(len(s)); err != nil {
		return err
	}
	a.delivered = true
	a.onDelta(Delta{Kind: DeltaReasoning, Text: s})
	return nil
}

// newCall starts a function call. A call whose id was already seen is not
// added again: the existing one is returned.
func (a *collector) newCall(id, name string) (*callAcc, error) {
	if c := a.callIDs[id]; id != "" && c != nil {
		if c.name == "" {
			c.name = name
		}
		return c, nil
	}
	if len(a.calls) >= a.limits.MaxToolCalls {
		return nil, &Error{Code: CodeTool, Message: fmt.Sprintf("the model asked for more than provider_limits.max_tool_calls (%d) tool calls in one response", a.limits.MaxToolCalls)}
	}
	c := &callAcc{id: id, name: name, order: len(a.calls)}
	a.calls = append(a.calls, c)
	if id != "" {
		a.callIDs[id] = c
	}
	return c, nil
}

// setID records a call id learnt after the call started.
func (a *collector) setID(c *callAcc, id string) {
	if id == "" || c.id == id {
		return
	}
	if c.id == "" {
		c.id = id
		a.callIDs[id] = c
	}
}

func (a *collector) addArgs(c *callAcc, s string) error {
	if c.args.Len()+len(s) > a.limits.MaxToolArgumentsBytes {
		return a.argsTooLarge(c)
	}
	if err := a.count(len(s)); err != nil {
		return err
	}
	c.args.WriteString(s)
	return nil
}

// setArgs replaces the arguments with the provider's final text.
func (a *collector) setArgs(c *callAcc, s string) error {
	if len(s) > a.limits.MaxToolArgumentsBytes {
		return a.argsTooLarge(c)
	}
	if grow := len(s) - c.args.Len(); grow > 0 {
		if err := a.count(grow); err != nil {
			return err
		}
	}
	c.args.Reset()
	c.args.WriteString(s)
	return nil
}

func (a *collector) argsTooLarge(c *callAcc) error {
	return &Error{Code: CodeTool, Message: fmt.Sprintf("the arguments of tool call %q exceeded provider_limits.max_tool_arguments_bytes (%d)", c.name, a.limits.MaxToolArgumentsBytes)}
}

func (a *collector) cite(url string) {
	if url == "" || a.seen[url] {
		return
	}
	a.seen[url] = true
	a.cited = append(a.cited, url)
}

// unusedKind records an output kind SCV does not use.
func (a *collector) unusedKind(kind string) {
	if kind != "" && !slices.Contains(a.unused, kind) && len(a.unused) < 8 {
		a.unused = append(a.unused, kind)
	}
}

// finish validates the calls, appends the Sources list and refuses an
// empty answer.
func (a *collector) finish() (Response, error) {
	var r Response
	calls := slices.Clone(a.calls)
	slices.SortStableFunc(calls, func(x, y *callAcc) int { return x.order - y.order })
	for i, c := range calls {
		if c.name == "" {
			return Response{}, &Error{Code: CodeProvider, Message: "the model produced a tool call without a name"}
		}
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			return Response{}, &Error{Code: CodeProvider, Message: fmt.Sprintf("the model produced invalid JSON arguments for tool %q", c.name)}
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, Name: c.name, Arguments: args})
	}
	if src := a.sources(); src != "" {
		a.text.WriteString(src)
		a.onDelta(Delta{Kind: DeltaText, Text: src})
	}
	r.Content = a.text.String()
	r.Usage = a.usage
	r.Thinking = a.thinking
	if r.Content == "" && len(r.ToolCalls) == 0 {
		return Response{}, &Error{Code: CodeProvider, Message: a.emptyMessage()}
	}
	return r, nil
}

func (a *collector) emptyMessage() string {
	msg := "the model returned an empty answer"
	switch {
	case len(a.unused) > 0:
		msg += fmt.Sprintf(" (its only output was %s, which SCV does not offer or use)", strings.Join(a.unused, ", "))
	case a.reasoned:
		msg += " (it produced only reasoning)"
	}
	return msg
}

// sources is the "Sources:" list of cited URLs the text does not contain.
func (a *collector) sources() string {
	text := a.text.String()
	var b strings.Builder
	for _, u := range a.cited {
		if strings.Contains(text, u) {
			continue
		}
		if b.Len() == 0 {
			if text != "" {
				b.WriteString(paragraph)
			}
			b.WriteString("Sources:")
		}
		b.WriteString("\n- " + u)
	}
	return b.String()
}
