package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/termtext"
)

// Rendering stored turns from their events, for `scv sessions show` (a
// terminal: every text made visible) and `scv sessions export --format
// markdown` (a file: text kept, code fenced).

// turnEvents decodes a stored turn's event lines; a line that does not
// decode is skipped (it was written by this program, so it does not
// happen short of a damaged file).
func turnEvents(t store.Turn) []proto.Event {
	out := make([]proto.Event, 0, len(t.Events))
	for _, e := range t.Events {
		if ev, err := proto.DecodeEvent(e.Data); err == nil {
			out = append(out, ev)
		}
	}
	return out
}

// turnOutcome says how a turn ended, in words.
func turnOutcome(t store.Turn) string {
	switch t.State {
	case store.TurnFailed:
		return fmt.Sprintf("failed (%s): %s", t.ErrorCode, t.ErrorMessage)
	case store.TurnInterrupted:
		return "interrupted: " + t.ErrorMessage
	}
	return string(t.State)
}

// writeTranscriptTurn prints one turn for a terminal.
func writeTranscriptTurn(w io.Writer, t store.Turn) {
	head := fmt.Sprintf("── turn %d · %s · %s", t.N, termtext.Line(turnOutcome(t)), t.Started.Format(time.DateTime))
	if t.Usage.TotalTokens > 0 {
		head += fmt.Sprintf(" · %d tokens", t.Usage.TotalTokens)
	}
	fmt.Fprintln(w, head)
	for _, l := range strings.Split(termtext.Block(t.Prompt), "\n") {
		fmt.Fprintf(w, "> %s\n", l)
	}
	for _, ev := range turnEvents(t) {
		switch e := ev.(type) {
		case *proto.AssistantCompleted:
			if e.Content != "" {
				fmt.Fprintln(w, strings.TrimRight(termtext.Block(e.Content), "\n"))
			}
		case *proto.ToolProposed:
			fmt.Fprintf(w, "⚙ %s %s\n", termtext.Line(e.Name), termtext.Line(clip(string(e.Arguments), 200)))
		case *proto.ToolCompleted:
			status := "done"
			if !e.Success {
				status = termtext.Line(e.Error)
			}
			fmt.Fprintf(w, "  → %s\n", status)
			lines := strings.Split(strings.TrimRight(termtext.Block(e.Output), "\n"), "\n")
			for i, l := range lines {
				if i == 6 {
					fmt.Fprintf(w, "    … %d more lines\n", len(lines)-6)
					break
				}
				fmt.Fprintf(w, "    %s\n", l)
			}
		case *proto.ContextCompacted:
			fmt.Fprintf(w, "· context compacted: %d earlier messages summarised\n", e.RemovedMessages)
		case *proto.SessionTrimmed:
			fmt.Fprintf(w, "· history trimmed: %d oldest messages dropped\n", e.RemovedMessages)
		}
	}
	if t.State != store.TurnCompleted {
		fmt.Fprintf(w, "✗ turn %s\n", termtext.Line(turnOutcome(t)))
	}
}

// exportMarkdown writes a whole session as a Markdown document.
func exportMarkdown(w io.Writer, x store.Session, turns []store.Turn) error {
	var b bytes.Buffer
	title := x.Title
	if title == "" {
		title = "Session " + x.ID
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLineMD(title))
	fmt.Fprintf(&b, "- session: `%s`\n- workspace: `%s`\n- model: %s / %s\n- origin: %s\n- created: %s\n- updated: %s\n- turns: %d\n",
		x.ID, x.Workspace, x.Provider, x.Model, x.Origin, x.Created.Format(time.RFC3339), x.Updated.Format(time.RFC3339), x.Turns)
	if x.ForkedFrom != "" {
		fmt.Fprintf(&b, "- forked from: `%s` at turn `%s`\n", x.ForkedFrom, x.ForkedAt)
	}
	for _, t := range turns {
		fmt.Fprintf(&b, "\n## Turn %d · %s\n\n", t.N, oneLineMD(turnOutcome(t)))
		fmt.Fprintf(&b, "**Prompt** (%s)\n\n%s\n", t.Started.Format(time.RFC3339), quote(t.Prompt))
		var reasoning strings.Builder // fragments of one reasoning run
		for _, ev := range turnEvents(t) {
			if r, ok := ev.(*proto.AssistantReasoning); ok {
				reasoning.WriteString(r.Content)
				continue
			}
			if strings.TrimSpace(reasoning.String()) != "" {
				fmt.Fprintf(&b, "\n*Reasoning*\n\n%s", quote(reasoning.String()))
			}
			reasoning.Reset()
			switch e := ev.(type) {
			case *proto.AssistantCompleted:
				if e.Content != "" {
					fmt.Fprintf(&b, "\n**Answer**\n\n%s\n", strings.TrimRight(e.Content, "\n"))
				}
			case *proto.ToolProposed:
				fmt.Fprintf(&b, "\n**Tool call** `%s` (call `%s`)\n\n%s", e.Name, e.CallID, fenced("json", prettyJSON(e.Arguments)))
			case *proto.ApprovalRequested:
				fmt.Fprintf(&b, "\n*Approval asked* (risk %s):\n\n%s", e.Risk, fenced("", e.Summary))
			case *proto.ToolCompleted:
				status := "succeeded"
				if !e.Success {
					status = "failed: " + e.Error
				}
				fmt.Fprintf(&b, "\n**Result** of `%s`, %s\n\n%s", e.Name, status, fenced("", e.Output))
			case *proto.ContextCompacted:
				fmt.Fprintf(&b, "\n*Context compacted: %d earlier messages summarised.*\n", e.RemovedMessages)
			case *proto.SessionTrimmed:
				fmt.Fprintf(&b, "\n*History trimmed: %d oldest messages dropped.*\n", e.RemovedMessages)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// quote makes text a Markdown block quote.
func quote(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("> ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// fenced puts text in a code fence longer than any backtick run inside it.
func fenced(lang, text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}

func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// oneLineMD is text on one line, for a heading or a list item.
func oneLineMD(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
