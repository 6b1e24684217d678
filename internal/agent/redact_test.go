package agent

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/redact"
)

// TestProgressRedactsKeyValues: a progress line holding a configured key,
// whole or cut by the tool, is sent without it.
func TestProgressRedactsKeyValues(t *testing.T) {
	const key = "Zq9fakeKEYvalue1234"
	rec := &recorder{}
	send, stop := newProgress("c1", rec.emit, redact.NewValues([]string{key}))
	defer stop()
	send("downloading with " + strings.ToLower(key) + " now")
	progress := only[*proto.ToolProgress](rec)
	for _, ev := range progress {
		if strings.Contains(strings.ToLower(ev.Text), strings.ToLower(key[:6])) {
			t.Errorf("progress %q holds the key", ev.Text)
		}
	}
	if len(rec.evs) != 1 || len(progress) != 1 || progress[0].Text != "downloading with … now" {
		t.Errorf("events %+v", rec.evs)
	}
}
