package agent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/mention"
	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/proto"
)

// A turn's mentions are expanded when it starts: turn.started reports
// them, the model gets the prompt with the attachments after it, and a
// failed turn leaves no trace of them in the history.
func TestMentionsAttachedAtTurnStart(t *testing.T) {
	fm := &fakeModel{script: []step{text("ok"), failWith(model.CodeProvider)}}
	s := newSession(t, fm, testTools(t, nil), approval.AskOnRisk)
	var asked []string
	s.opts.Mentions = func(_ context.Context, prompt string, _ []int64) mention.Expansion {
		asked = append(asked, prompt)
		return mention.Expansion{Text: "\n\n<file path=\"a.go\">A</file>", Mentions: []proto.Mention{{Path: "a.go", Kind: proto.MentionFile, Bytes: 1}}}
	}
	var r recorder
	s.RunTurn(t.Context(), "t1", "look at @a.go", r.emit)
	started := only[*proto.TurnStarted](&r)
	if len(started) != 1 || !cmp.Equal(started[0].Mentions, []proto.Mention{{Path: "a.go", Kind: proto.MentionFile, Bytes: 1}}) {
		t.Fatalf("turn.started = %+v", started)
	}
	msgs := fm.requests[0].Messages
	if got := msgs[len(msgs)-1].Content; got != "look at @a.go\n\n<file path=\"a.go\">A</file>" {
		t.Errorf("the model got the user message %q", got)
	}
	if d := cmp.Diff([]string{"look at @a.go"}, asked); d != "" {
		t.Errorf("expanded prompts (-want +got):\n%s", d)
	}
	n := s.HistoryLen()
	var r2 recorder
	s.RunTurn(t.Context(), "t2", "again @a.go", r2.emit)
	if r2.failed() == nil || s.HistoryLen() != n {
		t.Errorf("a failed turn kept %d messages (had %d)", s.HistoryLen(), n)
	}
}
