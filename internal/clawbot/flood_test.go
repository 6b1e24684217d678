package clawbot_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
)

// busyPrefix starts the reply to a message refused for a bound.
const busyPrefix = "Sorry, too many messages are waiting right now"

// gate holds the fake daemon's turns until it opens.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate  { return &gate{ch: make(chan struct{})} }
func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }
func (g *gate) reply(ctx context.Context, _ *fakeSession, prompt string, _ bool) (clawbot.Outcome, error) {
	select {
	case <-g.ch:
	case <-ctx.Done():
		return clawbot.Outcome{}, ctx.Err()
	}
	return clawbot.Outcome{State: clawbot.TurnCompleted, Answer: "echo: " + prompt}, nil
}

// A flood from 1,000 senders of 20 messages each, while the turns are
// held and then released: every message is answered exactly once (by its
// turn's answer or by the busy reply, to its own sender under its own
// context token), no message runs twice, and what the bridge holds never
// exceeds its bounds.
func TestFloodIsBoundedAndAnsweredOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 messages: skipped with -short")
	}
	const senders, each = 1000, 20
	const maxQueue, maxOpen, maxBytes = 3, 50, 1000
	h := newHarness(t)
	g := newGate()
	h.fd.reply = g.reply
	h.opts.Tuning.MaxQueue, h.opts.Tuning.MaxOpen, h.opts.Tuning.MaxQueuedBytes = maxQueue, maxOpen, maxBytes
	h.fake.SetMaxBatch(1000)
	h.fake.SetIdleHold(time.Minute)
	t.Cleanup(g.open)
	h.start()
	text := func(s, k int) string { return fmt.Sprintf("m%04d-%02d", s, k) } // 8 bytes each
	// Round k: every sender's k-th message, in an order that moves each
	// round, so new senders also come before the known ones.
	post := func(k int) {
		msgs := make([]any, 0, senders)
		for i := range senders {
			s := (i + k*337) % senders
			msgs = append(msgs, ilinktest.Text(k*senders+s, fmt.Sprint("sender-", s), text(s, k)))
		}
		h.fake.Post(msgs...)
	}
	// The first half arrives while every turn waits; each round of the
	// second half once the conversations have gone idle, so new senders
	// take the places of idle ones.
	for k := range each / 2 {
		post(k)
	}
	// Deadlines are generous: under -race on a loaded machine the flood
	// takes minutes; none of them is a speed target.
	if !h.fake.WaitFor(5*time.Minute, func() bool { return cursorAt(h.fake, senders*each/2) }) {
		t.Fatalf("the first half was not polled; cursors %v", lastCursors(h.fake))
	}
	g.open()
	for k := each / 2; k < each; k++ {
		idle := func() bool { l := h.status("default").Load; return l.Queued == 0 && l.QueuedBytes == 0 }
		if !h.fake.WaitFor(2*time.Minute, idle) {
			t.Fatalf("round %d: the conversations did not go idle; load %+v", k, h.status("default").Load)
		}
		post(k)
		if !h.fake.WaitFor(2*time.Minute, func() bool { return cursorAt(h.fake, senders*(k+1)) }) {
			t.Fatalf("round %d was not polled; cursors %v", k, lastCursors(h.fake))
		}
	}
	total := senders * each
	if !h.fake.WaitFor(8*time.Minute, func() bool { return h.fake.SentCount() >= total }) {
		t.Fatalf("%d of %d messages answered; status %+v", h.fake.SentCount(), total, h.status("default"))
	}
	h.waitIdle("default")
	time.Sleep(200 * time.Millisecond) // a duplicate would arrive by now
	sent := h.fake.Sent()
	if len(sent) != total {
		t.Errorf("%d sends for %d messages", len(sent), total)
	}
	perToken := map[string]int{}
	busy, echoed := 0, 0
	for _, s := range sent {
		perToken[s.ContextToken]++
		var id int
		if _, err := fmt.Sscanf(s.ContextToken, "ctx-%d", &id); err != nil {
			t.Fatalf("a send under context token %q", s.ContextToken)
		}
		sender, k := id%senders, id/senders
		if want := fmt.Sprint("sender-", sender); s.To != want {
			t.Errorf("the reply to message %d went to %s, not %s", id, s.To, want)
		}
		switch {
		case strings.HasPrefix(s.Text, busyPrefix):
			busy++
		case s.Text == "echo: "+text(sender, k):
			echoed++
		default:
			t.Errorf("message %d got %q", id, s.Text)
		}
	}
	for id := range total {
		if n := perToken[fmt.Sprint("ctx-", id)]; n != 1 {
			t.Errorf("message %d answered %d times", id, n)
		}
	}
	turns := h.fd.Turns()
	prompts := map[string]int{}
	for _, tr := range turns {
		prompts[tr.prompt]++
	}
	for p, n := range prompts {
		if n != 1 {
			t.Errorf("message %q ran %d turns", p, n)
		}
	}
	if len(turns) != echoed {
		t.Errorf("%d turns ran for %d answers", len(turns), echoed)
	}
	load := h.status("default").Load
	t.Logf("answered %d, busy %d; load %+v", echoed, busy, load)
	if busy == 0 || echoed == 0 || load.Busy != busy {
		t.Errorf("answers %d, busy replies %d, busy counted %d: a flood past the bounds has both", echoed, busy, load.Busy)
	}
	if load.PeakQueuedBytes > maxBytes || load.PeakQueue > maxQueue || load.PeakConversations > maxOpen {
		t.Errorf("the bridge held more than its bounds: %+v", load)
	}
	if load.PeakConversations != maxOpen || load.PeakQueuedBytes < maxBytes-8 {
		t.Errorf("the flood did not reach the bounds it tests: %+v", load)
	}
	if load.Queued != 0 || load.QueuedBytes != 0 || load.Conversations > maxOpen {
		t.Errorf("the settled bridge still holds messages: %+v", load)
	}
	// Conversations that went idle gave their places up: their sessions
	// were closed while the bridge ran.
	h.fd.mu.Lock()
	closed := len(h.fd.closed)
	h.fd.mu.Unlock()
	if closed == 0 {
		t.Error("no idle conversation made room for a new sender")
	}
}

// Each bound on its own, with every turn held: the queue of one sender,
// the number of conversations, the bytes held, and a message longer than
// the bytes bound. Nothing refused runs; everything held runs once the
// turns go on.
func TestFloodBounds(t *testing.T) {
	long := strings.Repeat("x", 101)
	cases := []struct {
		name           string
		queue, open, n int
		msgs           []any
		// busy are the ids answered busy, tooLong those too long to read.
		busy, tooLong []int
	}{
		{name: "queue per sender", queue: 2, open: 10, n: 100,
			msgs: []any{ilinktest.Text(1, "a", "1"), ilinktest.Text(2, "a", "2"), ilinktest.Text(3, "a", "3"), ilinktest.Text(4, "a", "4"), ilinktest.Text(5, "b", "5")},
			busy: []int{3, 4}},
		{name: "conversations", queue: 5, open: 2, n: 100,
			msgs: []any{ilinktest.Text(1, "a", "1"), ilinktest.Text(2, "b", "2"), ilinktest.Text(3, "c", "3"), ilinktest.GroupText(4, "g", "a", "4"), ilinktest.Text(5, "a", "5")},
			busy: []int{3, 4}},
		{name: "bytes", queue: 5, open: 10, n: 10,
			msgs: []any{ilinktest.Text(1, "a", "aaaa"), ilinktest.Text(2, "b", "bbbb"), ilinktest.Text(3, "c", "ccc"), ilinktest.Text(4, "d", "dd"), ilinktest.Text(5, "e", "e")},
			busy: []int{3, 5}},
		{name: "message longer than the bound", queue: 5, open: 10, n: 100,
			msgs:    []any{ilinktest.Text(1, "a", long), ilinktest.Text(2, "a", "short")},
			tooLong: []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			g := newGate()
			h.fd.reply = g.reply
			h.opts.Tuning.MaxQueue, h.opts.Tuning.MaxOpen, h.opts.Tuning.MaxQueuedBytes = tc.queue, tc.open, tc.n
			t.Cleanup(g.open)
			h.fake.Batch("c1", tc.msgs...)
			h.start()
			refused := len(tc.busy) + len(tc.tooLong)
			sent := h.waitSent(refused)
			got := map[string]string{}
			for _, s := range sent {
				got[s.ContextToken] = s.Text
			}
			for _, id := range tc.busy {
				if txt := got[fmt.Sprint("ctx-", id)]; !strings.HasPrefix(txt, busyPrefix) {
					t.Errorf("message %d got %q, want the busy reply", id, txt)
				}
			}
			for _, id := range tc.tooLong {
				if txt := got[fmt.Sprint("ctx-", id)]; !strings.Contains(txt, "too long") {
					t.Errorf("message %d got %q, want the too-long reply", id, txt)
				}
			}
			if len(sent) != refused {
				t.Errorf("%d replies while every turn waits, want %d: %v", len(sent), refused, texts(sent))
			}
			g.open()
			all := h.waitSent(len(tc.msgs))
			h.waitIdle("default")
			if len(h.fake.Sent()) != len(tc.msgs) || len(h.fd.Turns()) != len(tc.msgs)-refused {
				t.Errorf("%d replies and %d turns for %d messages, %d refused: %v", len(h.fake.Sent()), len(h.fd.Turns()), len(tc.msgs), refused, texts(all))
			}
		})
	}
}

func cursorAt(s *ilinktest.Server, n int) bool {
	want := fmt.Sprint("pos-", n)
	for _, c := range s.Cursors() {
		if c == want {
			return true
		}
	}
	return false
}

func lastCursors(s *ilinktest.Server) []string {
	c := s.Cursors()
	return c[max(0, len(c)-3):]
}
