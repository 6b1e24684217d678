package delegation

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/scv-agent/scv/internal/proc"
)

// Records of in-flight tool processes (the bash tool's commands). A call
// stops its own process group and tagged descendants when it ends; these
// records are for when the SCV process owning the call dies first (kill
// -9, a crash): the next Reconcile — the daemon's start and every 60 s, a
// stdio server's start — finds the record of a dead owner and stops the
// call's group and every process still carrying its tag, setsid escapees
// included, as it does for delegations.

// CallRecord is one running call, stored in run/calls/<id>.json.
type CallRecord struct {
	ID string `json:"id"`
	// Tag is the KEY=VALUE environment entry every process of the call
	// carries (e.g. SCV_BASH_CALL=<random>).
	Tag     string `json:"tag"`
	Session string `json:"session"`
	CallID  string `json:"call_id"`
	// PID and PIDStart identify the call's leader (its group); 0 until
	// the process has started.
	PID        int       `json:"pid"`
	PIDStart   uint64    `json:"pid_start"`
	OwnerPID   int       `json:"owner_pid"`
	OwnerStart uint64    `json:"owner_start"`
	StartedAt  time.Time `json:"started_at"`
}

// validCallTag says tag has the only form a record may name,
// SCV_[A-Z0-9_]+=<16 to 64 letters or digits>: a record file can be edited,
// and stopping every process whose environment holds, say, HOME=/home/me
// would stop the whole session of the user.
func validCallTag(tag string) bool {
	name, val, ok := strings.Cut(tag, "=")
	rest, scv := strings.CutPrefix(name, "SCV_")
	if !ok || !scv || rest == "" || len(val) < 16 || len(val) > 64 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	for i := 0; i < len(val); i++ {
		if c := val[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// validCallID says id is 16 lower-case hex digits, the form BeginCall gives.
func validCallID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (t *Tracker) callPath(id string) string { return filepath.Join(t.callDir, id+".json") }

// BeginCall records a call about to start whose processes carry tag; it
// is written before the process starts, so no process of the call exists
// unrecorded. started notes the leader's PID once it runs; done removes
// the record after the call has stopped its processes.
func (t *Tracker) BeginCall(tag, session, callID string) (started func(pid int), done func(), err error) {
	if !validCallTag(tag) {
		return nil, nil, fmt.Errorf("record call: tag %q is not of the form SCV_…=<random>", tag)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, nil, fmt.Errorf("record call: %w", err)
	}
	r := CallRecord{ID: hex.EncodeToString(b[:]), Tag: tag, Session: session, CallID: callID,
		OwnerPID: t.ownerPID, OwnerStart: t.ownerStart, StartedAt: time.Now().UTC()}
	if err := t.writeCall(r); err != nil {
		return nil, nil, err
	}
	started = func(pid int) {
		r.PID = pid
		if st, err := proc.StartTime(pid); err == nil {
			r.PIDStart = st
		}
		if err := t.writeCall(r); err != nil {
			t.log.Warn("cannot record the call's process", "call", callID, "err", err)
		}
	}
	done = func() { _ = os.Remove(t.callPath(r.ID)) }
	return started, done, nil
}

func (t *Tracker) writeCall(r CallRecord) error { return writeRecord(t.callPath(r.ID), r) }

// readCalls loads every call record; unreadable or malformed ones are
// returned by name for reporting.
func (t *Tracker) readCalls() ([]CallRecord, []string, error) {
	ids, err := recordNames(t.callDir, validCallID)
	if err != nil {
		return nil, nil, fmt.Errorf("list call records: %w", err)
	}
	var recs []CallRecord
	var bad []string
	for _, id := range ids {
		b, err := os.ReadFile(t.callPath(id))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		var r CallRecord
		if err != nil || json.Unmarshal(b, &r) != nil || r.ID != id || !validCallTag(r.Tag) {
			bad = append(bad, id+".json")
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, nil
}

// reconcileCalls stops the calls whose owning SCV process is gone and
// removes their records; it returns how many it stopped.
func (t *Tracker) reconcileCalls() (int, error) {
	recs, bad, err := t.readCalls()
	if err != nil {
		return 0, err
	}
	for _, b := range bad {
		t.log.Warn("unreadable call record", "file", b)
	}
	n := 0
	for _, r := range recs {
		if proc.Alive(r.OwnerPID, r.OwnerStart) {
			continue
		}
		t.log.Info("stopping the processes of a call whose SCV process died", "call", r.CallID, "session", r.Session, "owner_pid", r.OwnerPID)
		if r.PID > 1 && r.PIDStart != 0 && proc.Alive(r.PID, r.PIDStart) {
			_ = proc.SignalVerified(r.PID, r.PIDStart, syscall.SIGTERM)
			proc.StopGroup(r.PID, t.grace)
		}
		proc.StopTagged(r.Tag, t.grace)
		_ = os.Remove(t.callPath(r.ID))
		n++
	}
	return n, nil
}
