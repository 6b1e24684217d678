package tui

import (
	"strings"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// visibleEvent returns ev with every text field that a model, a tool, a
// repository or the server chose made safe for the terminal: escape
// sequences and other control characters are shown, never acted on (an
// ESC [8m in a command would otherwise hide what follows it from the
// approver). Multi-line fields keep their newlines; the others become one
// line. Identifiers are left alone (they are sent back to the server), and
// arguments stay raw JSON: argSummary makes their text visible.
func visibleEvent(ev proto.Event) proto.Event {
	// Progress lines are often columns; a tab there is only spacing.
	ev.Text = strings.ReplaceAll(ev.Text, "\t", " ")
	for _, f := range []*string{&ev.Name, &ev.Text, &ev.Risk, &ev.Cwd, &ev.Model, &ev.Code, &ev.Error} {
		*f = termtext.Line(*f)
	}
	ev.Message = termtext.Block(ev.Message)
	ev.Summary = termtext.Block(ev.Summary)
	if ev.Content != nil {
		ev.Content = proto.Ptr(termtext.Block(*ev.Content))
	}
	if ev.Output != nil {
		ev.Output = proto.Ptr(termtext.Block(*ev.Output))
	}
	if len(ev.Tools) > 0 {
		tools := make([]string, len(ev.Tools))
		for i, t := range ev.Tools {
			tools[i] = termtext.Line(t)
		}
		ev.Tools = tools
	}
	return ev
}
