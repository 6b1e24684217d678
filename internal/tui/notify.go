package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/scv-agent/scv/internal/proto"
)

// Notifications (docs/tui.md): when a turn ends or an approval waits, the
// TUI calls for attention if the terminal is unfocused (it asks for focus
// reports) or the wait was long (Config.NotifyAfter): a bell, or a
// desktop notification through OSC 9 or OSC 777.

// Values of Config.Notify.
const (
	NotifyBell   = "bell"
	NotifyOSC9   = "osc9"
	NotifyOSC777 = "osc777"
	NotifyOff    = "off"
)

// defaultNotifyAfter is Config.NotifyAfter when unset.
const defaultNotifyAfter = 10 * time.Second

// notifyState: blurred says the terminal reported losing focus;
// approvalSince is when the shown approval was first seen, and
// approvalRang that it was announced.
type notifyState struct {
	blurred       bool
	approvalID    string
	approvalSince time.Time
	approvalRang  bool
}

func (m *Model) notifyOn() bool { return m.cfg.Notify != NotifyOff }

func (m *Model) notifyAfter() time.Duration {
	if m.cfg.NotifyAfter > 0 {
		return m.cfg.NotifyAfter
	}
	return defaultNotifyAfter
}

// notifyFor is the notification a live event calls for, if any; started
// is when the turn began (for its length at its end).
func (m *Model) notifyFor(ev proto.Event, started time.Time) tea.Cmd {
	if !m.notifyOn() {
		return nil
	}
	long := !started.IsZero() && m.now().Sub(started) >= m.notifyAfter()
	switch e := ev.(type) {
	case *proto.TurnCompleted:
		if m.nt.blurred || long {
			return m.notify("turn finished")
		}
	case *proto.TurnFailed:
		if m.nt.blurred || long {
			return m.notify("turn failed: " + oneLine(e.Message))
		}
	case *proto.ApprovalRequested:
		if a := m.approval; a != nil && a.id == e.ApprovalID {
			m.nt.approvalID, m.nt.approvalSince, m.nt.approvalRang = a.id, m.now(), m.nt.blurred
			if m.nt.blurred {
				return m.notify("approval needed: " + oneLine(a.name))
			}
		}
	}
	return nil
}

// notifyWaiting announces an approval that has waited NotifyAfter in a
// focused terminal (once per approval); the turn's tick calls it.
func (m *Model) notifyWaiting() tea.Cmd {
	a := m.approval
	if !m.notifyOn() || a == nil || a.id != m.nt.approvalID || m.nt.approvalRang {
		return nil
	}
	if m.now().Sub(m.nt.approvalSince) < m.notifyAfter() {
		return nil
	}
	m.nt.approvalRang = true
	return m.notify("approval needed: " + oneLine(a.name))
}

// notify is the escape sequence Config.Notify names, with text (made
// printable: a notification is one line) for the desktop kinds.
func (m *Model) notify(text string) tea.Cmd {
	text = "scv: " + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == ';' {
			return ' '
		}
		return r
	}, text)
	if len(text) > 200 {
		text = strings.ToValidUTF8(text[:200], "")
	}
	switch m.cfg.Notify {
	case NotifyOSC9:
		return tea.Raw("\x1b]9;" + text + "\x07")
	case NotifyOSC777:
		return tea.Raw("\x1b]777;notify;scv;" + text + "\x07")
	}
	return tea.Raw("\a")
}

// copyCommand copies the last answer, or with "code" the last fenced
// code block in it, to the clipboard through OSC 52: the terminal sets
// its clipboard, over SSH too; no clipboard program runs.
func (m *Model) copyCommand(args []string) tea.Cmd {
	if len(args) > 1 || len(args) == 1 && args[0] != "code" {
		m.addItem(&item{kind: kindError, text: "usage: /copy copies the last answer; /copy code its last code block"})
		return nil
	}
	var answer string
	for i := len(m.tr.items) - 1; i >= 0; i-- {
		if it := m.tr.items[i]; it.kind == kindAssistant && !it.streaming && strings.TrimSpace(it.text) != "" {
			answer = it.text
			break
		}
	}
	what, text := "the last answer", answer
	if len(args) == 1 {
		what, text = "the last code block", lastCodeBlock(answer)
	}
	if strings.TrimSpace(text) == "" {
		m.addItem(&item{kind: kindNotice, text: "nothing to copy: no " + strings.TrimPrefix(what, "the ") + " in the transcript"})
		return nil
	}
	m.addItem(&item{kind: kindNotice, text: "copied " + what + " (" + byteSize(len(text)) + ") to the clipboard through the terminal (OSC 52; a terminal that does not allow it ignores it)"})
	return tea.SetClipboard(text)
}

// copySelected copies the selected item (y): an answer's Markdown or a
// tool row's output, through OSC 52.
func (m *Model) copySelected() tea.Cmd {
	it := m.tr.sel
	text := it.copyText()
	if strings.TrimSpace(text) == "" {
		m.addItem(&item{kind: kindNotice, text: "nothing to copy in the selected row"})
		return nil
	}
	what := "the selected answer"
	if it.kind == kindTool {
		what = "the output of " + oneLine(it.name)
		if it.diff != nil && it.diff.Text != "" {
			what = "the diff of " + oneLine(it.name)
		}
	}
	m.addItem(&item{kind: kindNotice, text: "copied " + what + " (" + byteSize(len(text)) + ") to the clipboard through the terminal (OSC 52)"})
	return tea.SetClipboard(text)
}

// lastCodeBlock is the content of the last fenced (``` or ~~~) block in
// a Markdown text; "" when there is none.
func lastCodeBlock(md string) string {
	var last, cur []string
	fence := ""
	for _, l := range strings.Split(md, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence, cur = t[:3], []string{}
		case fence != "" && strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "":
			fence, last = "", cur
		case fence != "":
			cur = append(cur, l)
		}
	}
	if fence != "" { // an unclosed block runs to the end
		last = cur
	}
	if last == nil {
		return ""
	}
	return strings.Join(last, "\n") + "\n"
}
