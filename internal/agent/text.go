package agent

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/redact"
	"github.com/scv-agent/scv/internal/textcut"
	"github.com/scv-agent/scv/internal/tool"
)

// oneLine folds whitespace and bounds s to n bytes with an ellipsis.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return tool.TruncateUTF8(s, n-3) + "..."
}

// tail returns the last n bytes of s on a character boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + textcut.TrimStart(s[len(s)-n:])
}

// rawArgs returns the call's arguments as JSON for tool.proposed: valid JSON
// as is, anything else as a JSON string.
func rawArgs(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// progress throttles, bounds and redacts tool.progress lines of one call.
// At most one line goes out per ProgressIntervalMS; a line that comes
// sooner waits for the end of the interval, replaced by any later one, so
// the last line a call printed is always shown (a delegated agent's
// "$ go test" that runs for a minute is not lost behind the line before).
type progress struct {
	mu     sync.Mutex
	callID string
	ev     Emit
	keys   redact.Values
	clock  progressClock
	last   time.Time
	// pending waits for its turn; stopTimer cancels the wait.
	pending   string
	stopTimer func() bool
	closed    bool
}

// progressClock is the time a progress sink goes by (a fake in tests).
type progressClock struct {
	now   func() time.Time
	after func(d time.Duration, f func()) (stop func() bool)
}

func realProgressClock() progressClock {
	return progressClock{
		now:   time.Now,
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop },
	}
}

// newProgress returns the call's progress sink and a stop function after
// which nothing more is emitted (so no progress follows tool.completed).
func newProgress(callID string, ev Emit, keys redact.Values) (func(string), func()) {
	return newProgressWith(callID, ev, keys, realProgressClock())
}

func newProgressWith(callID string, ev Emit, keys redact.Values, clock progressClock) (func(string), func()) {
	p := &progress{callID: callID, ev: ev, keys: keys, clock: clock}
	return p.send, func() {
		p.mu.Lock()
		p.closed = true
		p.pending = ""
		if p.stopTimer != nil {
			p.stopTimer()
			p.stopTimer = nil
		}
		p.mu.Unlock()
	}
}

func (p *progress) send(text string) {
	line := strings.TrimSpace(text)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[i+1:])
	}
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	const interval = proto.ProgressIntervalMS * time.Millisecond
	now := p.clock.now()
	if wait := p.last.Add(interval).Sub(now); wait > 0 {
		// Kept as it came: a line replaced before its turn is never
		// worth redacting.
		p.pending = line
		if p.stopTimer == nil {
			p.stopTimer = p.clock.after(wait, p.flush)
		}
		return
	}
	p.emitLocked(line, now)
}

// clean makes a line safe to send: key values first (whole, then the ends
// a cut left), then key-shaped text, and only then the cut to the
// protocol's bound.
func (p *progress) clean(line string) string {
	return tool.TruncateUTF8(redact.Credentials(p.keys.Redact(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, line))), proto.MaxProgressBytes)
}

// flush sends the line that waited for the end of its interval.
func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopTimer = nil
	if p.closed || p.pending == "" {
		return
	}
	p.emitLocked(p.pending, p.clock.now())
}

func (p *progress) emitLocked(line string, now time.Time) {
	p.pending = ""
	if line = strings.TrimSpace(p.clean(line)); line == "" {
		return
	}
	p.last = now
	p.ev(&proto.ToolProgress{CallID: p.callID, Text: line})
}
