package proto

// EventJobReported tells a session's client that a background job of the
// session (an agent_* call made with background: true) ended.
const EventJobReported = "job.reported"

// JobReported is a report turn's event: background job Job of Agent ended
// with Status (completed, failed, timeout or cancelled). Text is the
// system-authored message the session's history gained
// ("[scv] job-2 (codex) completed: …"); Reason, when set, says why the
// job ended so (cancelled by agent_cancel, SCV stopped). Turn is true when
// the server started a turn for it (agent.report_turns = "auto"; its
// turn.started follows); otherwise the model reads it with the next
// prompt.
type JobReported struct {
	SessionHeader
	Job    string `json:"job"`
	Agent  string `json:"agent"`
	Status string `json:"status"`
	Text   string `json:"text"`
	Reason string `json:"reason,omitempty"`
	Turn   bool   `json:"turn,omitempty"`
}

func (*JobReported) EventType() string { return EventJobReported }
