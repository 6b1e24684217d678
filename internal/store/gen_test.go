package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The transcript generator: turns shaped like a coding agent's. A prompt
// of one to four lines; zero to six tool steps (reads, bash runs, writes)
// whose outputs are a few KB of source or command output; a final answer of
// a few hundred to two thousand bytes streamed in deltas. Events are the
// protocol's lines (same fields and order as the server sends), history
// messages the agent's canonical form. Deterministic for a seed.

type genTurn struct {
	ID      string
	Prompt  string
	Answer  string
	Events  []Event // without seq assigned yet: Seq is 1-based within the turn
	History []json.RawMessage
	Usage   Usage
}

type gen struct {
	r    *rand.Rand
	zipf *rand.Zipf
	seq  uint64
}

func newGen(seed uint64) *gen {
	r := rand.New(rand.NewPCG(seed, 0x5c5))
	return &gen{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(genVocab)-1))}
}

// genVocab is the prose vocabulary, most frequent first: the base words,
// then 5,000 made-up ones ("kovantel"), drawn with a Zipf law as words of
// real text are, so a search for a common word matches most turns and one
// for a rare word a handful.
var genVocab = func() []string {
	r := rand.New(rand.NewPCG(42, 42))
	syl := strings.Fields("ka ro vin tel pa mu sor den li qua bes tor fi gan lo mer zu pex nal dro")
	v := append([]string(nil), genWords...)
	seen := map[string]bool{}
	for _, w := range v {
		seen[w] = true
	}
	for len(v) < len(genWords)+5000 {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			v = append(v, w)
		}
	}
	return v
}()

var (
	genWords = strings.Fields(`the a to of and in is for that with this it on be as function error file test build
		run parser token config session server client handler request response value return type struct string
		slice map loop index update check missing failing panic nil pointer context timeout retry cache
		please can you why does should fix add remove rename refactor explain make sure also then`)
	genIdents = strings.Fields(`ctx err opts req resp buf n i s t cfg path data line out conn sess turn event seq
		Open Close Read Write Parse Load Store Append Flush Run Start Stop Handle Serve Send Next`)
	genFiles = strings.Fields(`internal/server/server.go internal/agent/agent.go cmd/scv/main.go README.md go.mod
		internal/tools/fs/read.go internal/model/chat.go docs/protocol.md internal/store/store.go`)
)

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// sentence is English-ish text of about n bytes.
func (g *gen) sentence(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if g.r.IntN(6) == 0 {
			b.WriteString("`" + g.pick(genIdents) + "`")
		} else {
			b.WriteString(genVocab[g.zipf.Uint64()])
		}
	}
	return b.String() + "."
}

// code is Go-like source of about n bytes.
func (g *gen) code(n int) string {
	var b strings.Builder
	depth := 1
	for b.Len() < n {
		b.WriteString(strings.Repeat("\t", depth))
		switch g.r.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "if err := %s.%s(%s); err != nil {\n", g.pick(genIdents), g.pick(genIdents), g.pick(genIdents))
			depth = min(depth+1, 4)
		case 1:
			if depth > 1 {
				depth--
			}
			b.WriteString("}\n")
		case 2:
			fmt.Fprintf(&b, "// %s\n", g.sentence(40))
		default:
			fmt.Fprintf(&b, "%s := %s.%s(%s, %d)\n", g.pick(genIdents), g.pick(genIdents), g.pick(genIdents), g.pick(genIdents), g.r.IntN(1000))
		}
	}
	return b.String()
}

func jsonLine(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type genEvent struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Seq       uint64          `json:"seq"`
	TurnID    string          `json:"turn_id"`
	Content   *string         `json:"content,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Success   *bool           `json:"success,omitempty"`
	Output    *string         `json:"output,omitempty"`
	Truncated *bool           `json:"truncated,omitempty"`
	Steps     *int            `json:"steps,omitempty"`
	Usage     *Usage          `json:"usage,omitempty"`
}

type genToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type genMessage struct {
	Role       string        `json:"role"`
	Content    string        `json:"content,omitempty"`
	ToolCalls  []genToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
	Name       string        `json:"name,omitempty"`
}

// turn makes turn number n of session sid. deltas includes the
// assistant.delta events (as sent live); without them a stored transcript
// still has every answer whole in assistant.completed.
func (g *gen) turn(sid string, n int, deltas bool) genTurn {
	t := genTurn{ID: fmt.Sprintf("%s-turn-%d", sid, n)}
	var lines []string
	for range 1 + g.r.IntN(4) {
		lines = append(lines, g.sentence(30+g.r.IntN(150)))
	}
	t.Prompt = strings.Join(lines, "\n")
	t.History = append(t.History, jsonLine(genMessage{Role: "user", Content: t.Prompt}))
	e := func(ge genEvent) {
		ge.SessionID, ge.TurnID = sid, t.ID
		g.seq++
		ge.Seq = g.seq
		t.Events = append(t.Events, Event{Seq: g.seq, Data: jsonLine(ge)})
	}
	str := func(s string) *string { return &s }
	yes := true
	no := false
	e(genEvent{Type: "turn.started"})
	steps := g.r.IntN(7)
	for step := range steps {
		call := genToolCall{ID: fmt.Sprintf("call_%d_%d", n, step)}
		var output string
		switch g.r.IntN(3) {
		case 0:
			call.Name, call.Arguments = "read", string(jsonLine(map[string]string{"path": g.pick(genFiles)}))
			output = string(jsonLine(map[string]any{"content": g.code(1000 + g.r.IntN(7000)), "truncated": false}))
		case 1:
			call.Name, call.Arguments = "bash", string(jsonLine(map[string]string{"command": "go test ./" + g.pick(genFiles)}))
			output = string(jsonLine(map[string]any{"exit_code": g.r.IntN(2), "timed_out": false, "output": g.code(500 + g.r.IntN(4000)), "truncated": false}))
		default:
			call.Name, call.Arguments = "write", string(jsonLine(map[string]string{"path": g.pick(genFiles), "content": g.code(500 + g.r.IntN(3000))}))
			output = `{"written":true}`
		}
		lead := ""
		if g.r.IntN(2) == 0 {
			lead = g.sentence(40 + g.r.IntN(120))
		}
		e(genEvent{Type: "assistant.completed", Content: str(lead)})
		e(genEvent{Type: "tool.proposed", CallID: call.ID, Name: call.Name, Arguments: json.RawMessage(call.Arguments)})
		e(genEvent{Type: "tool.started", CallID: call.ID, Name: call.Name})
		e(genEvent{Type: "tool.completed", CallID: call.ID, Name: call.Name, Success: &yes, Output: str(output), Truncated: &no})
		t.History = append(t.History,
			jsonLine(genMessage{Role: "assistant", Content: lead, ToolCalls: []genToolCall{call}}),
			jsonLine(genMessage{Role: "tool", ToolCallID: call.ID, Name: call.Name, Content: output}))
	}
	var paras []string
	for range 1 + g.r.IntN(4) {
		paras = append(paras, g.sentence(100+g.r.IntN(400)))
	}
	t.Answer = strings.Join(paras, "\n\n")
	if deltas {
		for rest := t.Answer; rest != ""; {
			k := min(len(rest), 8+g.r.IntN(40))
			e(genEvent{Type: "assistant.delta", Content: str(rest[:k])})
			rest = rest[k:]
		}
	}
	e(genEvent{Type: "assistant.completed", Content: str(t.Answer)})
	t.Usage = Usage{InputTokens: int64(2000 + g.r.IntN(30000)), OutputTokens: int64(100 + g.r.IntN(2000))}
	t.Usage.TotalTokens = t.Usage.InputTokens + t.Usage.OutputTokens
	s := steps + 1
	e(genEvent{Type: "turn.completed", Steps: &s, Usage: &t.Usage})
	t.History = append(t.History, jsonLine(genMessage{Role: "assistant", Content: t.Answer}))
	return t
}
