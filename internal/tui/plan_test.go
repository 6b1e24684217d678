package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

var (
	shiftTab = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	ctrlT    = tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}
)

// modes are the modes the model asked the server for.
func modes(msgs []any) []string {
	var out []string
	for _, m := range msgs {
		if sm, ok := m.(*proto.SessionSetMode); ok {
			out = append(out, sm.Mode)
		}
	}
	return out
}

func todoList() []proto.TodoItem {
	return []proto.TodoItem{
		{Content: "read the parser", Status: proto.TodoCompleted},
		{Content: "fix the off-by-one in \x1b[8mscan", Status: proto.TodoInProgress},
		{Content: "add a regression test", Status: proto.TodoPending},
	}
}

// The checklist above the composer: ☑/◐/☐ per item with the count done,
// control characters made visible; Ctrl+T folds it to one line.
func TestTodoChecklistGolden(t *testing.T) {
	h := newHarness(t, nil)
	h.ev(&proto.TodoUpdated{TurnHeader: th("t1"), Items: todoList()})
	h.golden("todo_checklist")
	h.keys(ctrlT)
	h.golden("todo_checklist_folded")
	h.keys(ctrlT)
	if f := h.frame(); !strings.Contains(f, "☐ add a regression test") {
		t.Errorf("unfolded again:\n%s", f)
	}
	// session.clear's empty list removes it.
	h.ev(&proto.TodoUpdated{})
	if f := h.frame(); strings.Contains(f, "Todo ") {
		t.Errorf("the emptied list is still shown:\n%s", f)
	}
}

// A long list shows the rows around the item in progress, bounded.
func TestTodoChecklistBounded(t *testing.T) {
	h := newHarness(t, nil)
	var items []proto.TodoItem
	for i := range 20 {
		st := proto.TodoCompleted
		switch {
		case i == 12:
			st = proto.TodoInProgress
		case i > 12:
			st = proto.TodoPending
		}
		items = append(items, proto.TodoItem{Content: "step " + string(rune('a'+i)), Status: st})
	}
	h.ev(&proto.TodoUpdated{Items: items})
	lines := h.m.todoLines()
	if len(lines) != 1+1+maxTodoRows+1 {
		t.Fatalf("%d checklist lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	got := strings.Join(lines, "\n")
	assertContains(t, "checklist", got, "Todo 12/20", "… 5 earlier", "◐ step m", "… 7 more")
}

// Shift+Tab asks for plan mode; the status bar says it once the server
// answers; a plan-mode answer is offered on leaving: y switches to the
// default mode and sends the plan as the next prompt, n only leaves, esc
// keeps planning. /plan is the same key.
func TestPlanModeCycleAndAccept(t *testing.T) {
	h := newHarness(t, nil)
	h.keys(shiftTab)
	if got := modes(h.rec.take()); !cmp.Equal(got, []string{"plan"}) {
		t.Fatalf("Shift+Tab sent %v", got)
	}
	if strings.Contains(h.frame(), "plan mode") {
		t.Error("plan mode shown before the server answered")
	}
	h.ev(&proto.SessionMode{Mode: proto.ModePlan})
	if f := h.frame(); !strings.Contains(lastLine(f), "plan mode") {
		t.Errorf("status line lacks plan mode:\n%s", f)
	}
	plan := "## Plan\n\n1. change `a.txt`\n2. test it"
	h.ev(&proto.TurnStarted{TurnHeader: th("t1")},
		&proto.AssistantDelta{TurnHeader: th("t1"), Content: plan},
		&proto.AssistantCompleted{TurnHeader: th("t1"), Content: plan},
		&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 1})
	// The plan is shown as Markdown: the code span's backticks are gone.
	if f := h.frame(); !strings.Contains(f, "1. change a.txt") || strings.Contains(f, "`a.txt`") {
		t.Errorf("the plan is not rendered as Markdown:\n%s", f)
	}
	// Esc keeps planning.
	h.keys(shiftTab)
	h.golden("plan_accept_offer")
	h.keys(esc)
	if msgs := h.rec.take(); len(msgs) != 0 {
		t.Fatalf("esc sent %v", msgs)
	}
	// y carries it out.
	h.keys(shiftTab, tea.KeyPressMsg{Code: 'y', Text: "y"})
	msgs := h.rec.take()
	if len(msgs) != 2 {
		t.Fatalf("accept sent %d messages: %#v", len(msgs), msgs)
	}
	if sm, ok := msgs[0].(*proto.SessionSetMode); !ok || sm.Mode != proto.ModeDefault || sm.SessionID != "s1" {
		t.Errorf("first message %#v, want session.set_mode default", msgs[0])
	}
	if ts, ok := msgs[1].(*proto.TurnStart); !ok || ts.Prompt != acceptPrefix+plan {
		t.Errorf("second message %#v, want the plan as the prompt", msgs[1])
	}
	h.ev(&proto.SessionMode{Mode: proto.ModeDefault})
	if f := h.frame(); strings.Contains(lastLine(f), "plan mode") {
		t.Errorf("still plan mode in the status line:\n%s", f)
	}
	// /clear forgets a plan: leaving plan mode then needs no offer.
	h.ev(&proto.SessionMode{Mode: proto.ModePlan},
		&proto.TurnStarted{TurnHeader: th("t2")},
		&proto.AssistantCompleted{TurnHeader: th("t2"), Content: "another plan"},
		&proto.TurnCompleted{TurnHeader: th("t2")},
		&proto.SessionCleared{})
	h.rec.take()
	h.keys(shiftTab)
	if got := modes(h.rec.take()); !cmp.Equal(got, []string{"default"}) || h.m.pl.offer {
		t.Errorf("after /clear, leaving plan mode sent %v (offer %v)", got, h.m.pl.offer)
	}
	h.ev(&proto.SessionMode{Mode: proto.ModeDefault})
	// /plan enters again; leaving without a new plan needs no offer.
	h.submit("/plan")
	h.ev(&proto.SessionMode{Mode: proto.ModePlan})
	h.rec.take()
	h.keys(shiftTab)
	if got := modes(h.rec.take()); !cmp.Equal(got, []string{"default"}) {
		t.Errorf("leaving without a plan sent %v", got)
	}
}

// A resumed session starts in its stored mode with its todo list; its
// last replayed answer is the plan an accept sends.
func TestPlanModeResumed(t *testing.T) {
	line := func(ev proto.Event) json.RawMessage {
		b, err := proto.EncodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	turn := proto.StoredTurn{TurnID: "t1", N: 1, Prompt: "plan it", State: "completed", Events: []json.RawMessage{
		line(&proto.TurnStarted{TurnHeader: th("t1")}),
		line(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "the stored plan"}),
		line(&proto.TurnCompleted{TurnHeader: th("t1")}),
	}}
	h := newHarness(t, func(c *Config) {
		c.Resumed = &proto.SessionResumed{SessionID: "s1", Cwd: "/w", Model: "m", Mode: proto.ModePlan, Todos: todoList(), Turns: []proto.StoredTurn{turn}}
	})
	f := h.frame()
	if !strings.Contains(lastLine(f), "plan mode") || !strings.Contains(f, "◐ fix the off-by-one in ␛[8mscan") {
		t.Errorf("resumed frame:\n%s", f)
	}
	h.keys(shiftTab, tea.KeyPressMsg{Code: 'y', Text: "y"})
	msgs := h.rec.take()
	if len(msgs) != 2 || msgs[1].(*proto.TurnStart).Prompt != acceptPrefix+"the stored plan" {
		t.Errorf("accept after resume sent %#v", msgs)
	}
}

func lastLine(frame string) string {
	ls := strings.Split(strings.TrimRight(frame, "\n"), "\n")
	return ls[len(ls)-1]
}
