package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
)

// redialer is a fake Config.Redial: it fails until up, then returns rec.
type redialer struct {
	up    bool
	calls int
	rec   *recorder
}

func (r *redialer) dial() (Sender, error) {
	r.calls++
	if !r.up {
		return nil, errors.New("connect: no such file or directory")
	}
	return r.rec, nil
}

// run runs cmd and every command its messages lead to, feeding the
// messages to the model, until nothing is left (ticks fire at once: the
// harness sets a zero delay).
func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	for i := 0; cmd != nil; i++ {
		if i > 100 {
			h.t.Fatal("command chain does not end")
		}
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			var next []tea.Cmd
			for _, c := range b {
				if c != nil {
					next = append(next, c)
				}
			}
			if len(next) == 0 {
				return
			}
			if len(next) > 1 {
				h.t.Fatalf("%d commands at once", len(next))
			}
			cmd = next[0]
			continue
		}
		if _, ok := msg.(tickMsg); ok {
			return
		}
		_, cmd = h.m.Update(msg)
	}
}

// TestReconnect: a lost connection is dialled again with backoff until it
// comes back; Enter then resumes the session shown, whose stored turns
// are redrawn; a prompt typed first is sent to it once it is open.
func TestReconnect(t *testing.T) {
	rd := &redialer{rec: &recorder{}}
	h := newHarness(t, func(c *Config) {
		c.Redial = rd.dial
		c.RedialDelay = func(int) time.Duration { return 0 }
	})
	h.prompt("hello", "t1")
	h.ev(&proto.TurnCompleted{TurnHeader: th("t1")})
	_, cmd := h.m.Update(DisconnectedMsg{Err: errors.New("EOF")})
	f := h.frame()
	if !strings.Contains(f, "reconnecting") || !strings.Contains(f, "daemon disconnected, reconnecting…") {
		t.Errorf("no reconnecting notice:\n%s", f)
	}
	h.run(cmd) // every attempt fails
	if rd.calls != maxRedials {
		t.Errorf("%d attempts, want %d", rd.calls, maxRedials)
	}
	if f := h.frame(); !strings.Contains(f, "did not come back. Start it with `scv start`") {
		t.Errorf("giving up does not say how to start the daemon:\n%s", f)
	}

	// The daemon is back: Enter on an empty composer tries again.
	rd.up = true
	h.run(h.keys(enter))
	if h.m.conn != connected || !h.m.rd.offer {
		t.Fatalf("not reconnected: conn=%v offer=%v", h.m.conn, h.m.rd.offer)
	}
	if !strings.Contains(h.frame(), "Enter continues this session") {
		t.Errorf("no offer to continue:\n%s", h.frame())
	}
	h.submit("and now?")
	want := []any{&proto.SessionResume{Envelope: proto.Envelope{RequestID: "tui-2"}, SessionID: "s1"}}
	if d := cmp.Diff(want, rd.rec.take()); d != "" {
		t.Errorf("Enter sent (-want +got):\n%s", d)
	}
	h.ev(req("tui-2", &proto.SessionResumed{SessionID: "s1", Cwd: "/home/ada/project", Model: "gpt-test", ContextMaxTokens: 128000,
		Turns: []proto.StoredTurn{{TurnID: "t1", Prompt: "hello", State: "completed"}}}))
	if d := cmp.Diff([]any{turnStart("tui-3", "and now?")}, rd.rec.take()); d != "" {
		t.Errorf("after the resume (-want +got):\n%s", d)
	}
	if f := h.frame(); !strings.Contains(f, "› hello") {
		t.Errorf("the resumed session is not redrawn:\n%s", f)
	}
	if got := h.rec.take(); len(got) != 1 { // the first turn.start only
		t.Errorf("the dead connection was written to: %v", got)
	}
}

// TestReconnectStopsOnEsc: Esc stops reconnecting; a late connection is
// not taken.
func TestReconnectStopsOnEsc(t *testing.T) {
	rd := &redialer{rec: &recorder{}, up: true}
	h := newHarness(t, func(c *Config) {
		c.Redial = rd.dial
		c.RedialDelay = func(int) time.Duration { return 0 }
	})
	_, cmd := h.m.Update(DisconnectedMsg{})
	h.keys(esc)
	h.run(cmd)
	if h.m.conn != disconnected || rd.calls != 0 {
		t.Errorf("after Esc: conn=%v, %d dials", h.m.conn, rd.calls)
	}
	if !strings.Contains(h.frame(), "stopped reconnecting") {
		t.Errorf("no notice:\n%s", h.frame())
	}
}

// TestStaleDisconnectIgnored: the end of a connection already replaced
// does not disconnect the new one.
func TestStaleDisconnectIgnored(t *testing.T) {
	h := newHarness(t, nil)
	h.m.Update(DisconnectedMsg{Conn: &recorder{}})
	if h.m.conn != connected {
		t.Error("the end of another connection disconnected the TUI")
	}
}

func TestRedialDelayBounded(t *testing.T) {
	var total time.Duration
	for n := range maxRedials {
		d := redialDelay(n)
		if d > 5*time.Second {
			t.Errorf("delay %d = %v, over 5 s", n, d)
		}
		total += d
	}
	if total > time.Minute {
		t.Errorf("a reconnection waits %v in all, over a minute", total)
	}
}
