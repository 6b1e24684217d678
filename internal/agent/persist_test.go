package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
)

func msg(role model.Role, text string) model.Message { return model.Message{Role: role, Content: text} }

// apply is the store's rule: (base ++ appended)[drop:].
func apply(base, appended []json.RawMessage, drop int) []json.RawMessage {
	return append(append([]json.RawMessage{}, base...), appended...)[drop:]
}

// TestHistoryChange: whatever a turn did to the history — append, trim
// old groups, trim even its own messages — the change HistoryChange
// reports, applied to the history before the turn, gives the history
// after it, and LoadHistory restores it exactly.
func TestHistoryChange(t *testing.T) {
	tests := []struct {
		name string
		turn func(s *Session)
	}{
		{"append", func(s *Session) {
			s.hist.append(msg(model.User, "q2"), true)
			s.hist.append(msg(model.Assistant, "a2"), true)
		}},
		{"append and trim old", func(s *Session) {
			s.hist.append(msg(model.User, "q2"), true)
			s.hist.append(model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "c", Name: "read", Arguments: "{}"}}}, true)
			s.hist.append(model.Message{Role: model.ToolRole, ToolCallID: "c", Name: "read", Content: "out"}, false)
			s.hist.dropFront(2)
		}},
		{"trim into the turn's own messages", func(s *Session) {
			s.hist.append(msg(model.User, "q2"), true)
			s.hist.append(msg(model.Assistant, "a2"), true)
			s.hist.dropFront(3)
		}},
		{"nothing", func(*Session) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{})
			s.hist.append(msg(model.User, "q1"), true)
			s.hist.append(msg(model.Assistant, "a1"), true)
			before, err := s.History()
			if err != nil {
				t.Fatal(err)
			}
			m := s.Mark()
			tt.turn(s)
			appended, drop, err := s.HistoryChange(m)
			if err != nil {
				t.Fatal(err)
			}
			after, _ := s.History()
			if d := cmp.Diff(after, apply(before, appended, drop)); d != "" {
				t.Errorf("applying the change does not give the history (-want +got):\n%s", d)
			}
			r := New(Options{})
			if err := r.LoadHistory(after); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(s.hist.msgs, r.hist.msgs); d != "" || len(r.hist.meta) != len(s.hist.meta) || r.hist.bytes != s.hist.bytes {
				t.Errorf("LoadHistory gives another history (-want +got):\n%s", d)
			}
			for i := range s.hist.meta {
				if s.hist.meta[i] != r.hist.meta[i] {
					t.Errorf("message %d: meta %+v, want %+v", i, r.hist.meta[i], s.hist.meta[i])
				}
			}
			s.Rewind(m)
			if back, _ := s.History(); !cmp.Equal(back, before) {
				t.Errorf("Rewind did not restore the history: %s", back)
			}
		})
	}
}

func TestLoadHistoryRefusesBadMessages(t *testing.T) {
	for _, raw := range []string{`[`, `{"role":"system","content":"x"}`, `"text"`} {
		if err := New(Options{}).LoadHistory([]json.RawMessage{json.RawMessage(raw)}); err == nil {
			t.Errorf("LoadHistory(%s) succeeded", raw)
		}
	}
}
