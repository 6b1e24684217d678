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
type progress struct {
	mu     sync.Mutex
	callID string
	ev     Emit
	keys   redact.Values
	last   time.Time
	closed bool
}

// newProgress returns the call's progress sink and a stop function after
// which nothing more is emitted (so no progress follows tool.completed).
func newProgress(callID string, ev Emit, keys redact.Values) (func(string), func()) {
	p := &progress{callID: callID, ev: ev, keys: keys}
	return p.send, func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
	}
}

func (p *progress) send(text string) {
	line := strings.TrimSpace(text)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[i+1:])
	}
	// Key values first (whole, then the ends a cut left), then key-shaped
	// text, and only then the cut to the protocol's bound.
	line = tool.TruncateUTF8(redact.Credentials(p.keys.Redact(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, line))), proto.MaxProgressBytes)
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.closed || now.Sub(p.last) < proto.ProgressIntervalMS*time.Millisecond {
		return
	}
	p.last = now
	p.ev(&proto.ToolProgress{CallID: p.callID, Text: line})
}
