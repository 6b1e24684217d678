package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// collector assembles one response from stream events, enforcing the
// assistant and tool limits as data arrives.
type collector struct {
	limits  Limits
	onDelta func(string)
	text    strings.Builder
	calls   []*callAcc
	cited   []string
	seen    map[string]bool
	usage   *Usage
}

type callAcc struct {
	id, name string
	args     strings.Builder
}

func newCollector(l Limits, onDelta func(string)) *collector {
	if onDelta == nil {
		onDelta = func(string) {}
	}
	return &collector{limits: l, onDelta: onDelta, seen: map[string]bool{}}
}

func (a *collector) addText(s string) error {
	if s == "" {
		return nil
	}
	if a.text.Len()+len(s) > a.limits.MaxAssistantBytes {
		return &Error{Code: CodeResponse, Message: fmt.Sprintf("the assistant text exceeded provider_limits.max_assistant_bytes (%d)", a.limits.MaxAssistantBytes)}
	}
	a.text.WriteString(s)
	a.onDelta(s)
	return nil
}

func (a *collector) newCall(id, name string) (*callAcc, error) {
	if len(a.calls) >= a.limits.MaxToolCalls {
		return nil, &Error{Code: CodeTool, Message: fmt.Sprintf("the model asked for more than provider_limits.max_tool_calls (%d) tool calls in one response", a.limits.MaxToolCalls)}
	}
	c := &callAcc{id: id, name: name}
	a.calls = append(a.calls, c)
	return c, nil
}

func (a *collector) addArgs(c *callAcc, s string) error {
	if c.args.Len()+len(s) > a.limits.MaxToolArgumentsBytes {
		return a.argsTooLarge(c)
	}
	c.args.WriteString(s)
	return nil
}

// setArgs replaces the arguments with the provider's final text.
func (a *collector) setArgs(c *callAcc, s string) error {
	if len(s) > a.limits.MaxToolArgumentsBytes {
		return a.argsTooLarge(c)
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

// finish validates the calls, appends the Sources list and refuses an
// empty answer.
func (a *collector) finish() (Response, error) {
	var r Response
	for i, c := range a.calls {
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
		a.onDelta(src)
	}
	r.Content = a.text.String()
	r.Usage = a.usage
	if r.Content == "" && len(r.ToolCalls) == 0 {
		return Response{}, &Error{Code: CodeProvider, Message: "the model returned an empty answer"}
	}
	return r, nil
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
				b.WriteString("\n\n")
			}
			b.WriteString("Sources:")
		}
		b.WriteString("\n- " + u)
	}
	return b.String()
}
