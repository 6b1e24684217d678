package tui

import (
	"strings"

	"github.com/scv-agent/scv/internal/proto"
)

// jobNoticeBytes bounds the report shown for a background job's end.
const jobNoticeBytes = 600

// jobNotice is the line a background job's report shows: the report the
// model got, bounded, and whether a turn was started for it.
func jobNotice(e *proto.JobReported) string {
	text := strings.TrimPrefix(e.Text, "[scv] ")
	if len(text) > jobNoticeBytes {
		text = strings.ToValidUTF8(text[:jobNoticeBytes], "") + "…"
	}
	next := " · the model reads it with your next prompt"
	if e.Turn {
		next = " · a turn starts for it"
	}
	return "background " + text + next
}
