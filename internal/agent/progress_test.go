package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/redact"
)

// fakeProgressClock is a clock whose timers fire only when the test moves
// time past them.
type fakeProgressClock struct {
	t      time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeProgressClock) clock() progressClock {
	return progressClock{
		now: func() time.Time { return c.t },
		after: func(d time.Duration, f func()) func() bool {
			tm := &fakeTimer{at: c.t.Add(d), f: f}
			c.timers = append(c.timers, tm)
			return func() bool { was := !tm.stopped; tm.stopped = true; return was }
		},
	}
}

func (c *fakeProgressClock) advance(d time.Duration) {
	c.t = c.t.Add(d)
	for _, tm := range c.timers {
		if !tm.stopped && !tm.at.After(c.t) {
			tm.stopped = true
			tm.f()
		}
	}
}

func texts(rec *recorder) []string {
	var out []string
	for _, ev := range only[*proto.ToolProgress](rec) {
		out = append(out, ev.Text)
	}
	return out
}

// TestProgressRateLimit: at most one line per 500 ms per call, the last
// line of a burst sent when its interval ends, nothing after stop.
func TestProgressRateLimit(t *testing.T) {
	clk := &fakeProgressClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	rec := &recorder{}
	send, stop := newProgressWith("c1", rec.emit, redact.Values{}, clk.clock())
	send("$ ls") // t=0: at once
	clk.advance(100 * time.Millisecond)
	send("exit 0: ls") // waits
	clk.advance(100 * time.Millisecond)
	send("$ go test ./...") // replaces it
	if diff := cmp.Diff([]string{"$ ls"}, texts(rec)); diff != "" {
		t.Fatalf("before the interval ends (-want +got):\n%s", diff)
	}
	clk.advance(300 * time.Millisecond) // t=500ms: the latest goes out
	if diff := cmp.Diff([]string{"$ ls", "$ go test ./..."}, texts(rec)); diff != "" {
		t.Fatalf("at the interval's end (-want +got):\n%s", diff)
	}
	// A burst of 1000 lines over two seconds: at most 2 per second.
	for i := range 1000 {
		send(fmt.Sprintf("line %d", i))
		clk.advance(2 * time.Millisecond)
	}
	clk.advance(time.Second)
	got := texts(rec)
	if n := len(got) - 2; n < 4 || n > 5 {
		t.Errorf("%d lines for a 2 s burst, want 4 or 5: %q", n, got)
	}
	if got[len(got)-1] != "line 999" {
		t.Errorf("the burst's last line %q, want line 999", got[len(got)-1])
	}
	// A waiting line is dropped by stop: nothing follows tool.completed.
	send("a")
	clk.advance(10 * time.Millisecond)
	send("b")
	before := len(texts(rec))
	stop()
	clk.advance(time.Second)
	send("c")
	if n := len(texts(rec)); n != before {
		t.Errorf("%d lines after stop", n-before)
	}
}
