package clawbot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// This file is the bridge's only contact with SCV's protocol: it opens
// sessions and runs turns on the daemon's own server, like any client.

// Daemon opens sessions on the daemon.
type Daemon interface {
	Open(ctx context.Context, spec SessionSpec) (Session, error)
}

// SessionSpec says what session a conversation needs.
type SessionSpec struct {
	Workspace string
	NoTools   bool
	// Resume is the id of a session to resume; "" starts a new one. A
	// session that cannot be resumed (unknown to the daemon, busy, or a
	// daemon without session.resume) is replaced by a new one.
	Resume string
}

// Session is an open session of one conversation. Its turns run one at a
// time.
type Session interface {
	ID() string
	// Resumed says Open resumed SessionSpec.Resume.
	Resumed() bool
	// Run runs one turn and waits for its end; grant answers every
	// approval request. When ctx ends the turn is cancelled and Run waits
	// (boundedly) for the cancellation. An error means the session's
	// connection failed; a turn that ended, however, is an Outcome.
	Run(ctx context.Context, prompt string, grant bool) (Outcome, error)
	Close()
}

// Turn outcomes.
const (
	TurnCompleted = "completed"
	TurnFailed    = "failed"
	TurnCancelled = "cancelled"
)

// Outcome is how a turn ended.
type Outcome struct {
	State string
	// Code is turn.failed's code.
	Code string
	// Answer is the text of the turn's final assistant message.
	Answer string
}

// ServeFunc serves one protocol connection (server.Server.Serve).
type ServeFunc = client.ServeFunc

// ProtocolDaemon is a Daemon that serves each conversation's connection
// in this process: one in-memory connection per session.
type ProtocolDaemon struct {
	// Serve serves a connection until the client closes it or ctx ends.
	Serve   ServeFunc
	Version string
}

// cancelWait bounds how long Run waits for a cancelled turn to end.
const cancelWait = client.DefaultCancelWait

// Open implements Daemon.
func (d ProtocolDaemon) Open(ctx context.Context, spec SessionSpec) (Session, error) {
	// The connection lives until Close, or until ctx (the bridge's life)
	// ends.
	s := &protoSession{conn: client.ServeInProcess(ctx, d.Serve)}
	fail := func(err error) (Session, error) {
		s.Close()
		return nil, err
	}
	if _, err := s.conn.Initialize(ctx, "scv-clawbot", d.Version); err != nil {
		return fail(err)
	}
	if spec.Resume != "" {
		ok, err := s.resume(ctx, spec)
		if err != nil {
			return fail(err)
		}
		if ok {
			return s, nil
		}
	}
	ev, err := s.conn.StartSession(ctx, proto.SessionStart{Cwd: spec.Workspace, NoTools: spec.NoTools, Origin: proto.OriginClawbot})
	if err != nil {
		return fail(err)
	}
	s.id = ev.SessionID
	return s, nil
}

type protoSession struct {
	conn    *client.InProcess
	id      string
	resumed bool
}

// resume asks the daemon to resume spec.Resume, without tools when the
// conversation is tool-free (no_tools is not stored with a session, so it
// is said again). It reports false (start a new session) when the daemon
// cannot: it does not know this session, or the session is open
// elsewhere. (The daemon is this process's own server, so it always
// knows session.resume.)
func (s *protoSession) resume(ctx context.Context, spec SessionSpec) (bool, error) {
	ev, err := s.conn.Call(ctx, &proto.SessionResume{SessionID: spec.Resume, NoTools: spec.NoTools, MaxTurns: 1})
	var re *client.RequestError
	if errors.As(err, &re) {
		switch re.Code {
		case proto.ErrUnsupported, proto.ErrSessionNotFound, proto.ErrSessionBusy:
			return false, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("resume session %s: %w", spec.Resume, err)
	}
	r, ok := ev.(*proto.SessionResumed)
	if !ok {
		return false, fmt.Errorf("resume session %s: the daemon answered %s, not session.resumed", spec.Resume, ev.EventType())
	}
	// A resumed session must still have the authority it was recorded
	// with; a tool-free conversation never continues in a session with
	// tools (a daemon that ignored no_tools).
	if spec.NoTools && len(r.Tools) > 0 {
		s.closeSession(ctx, r.SessionID)
		return false, nil
	}
	s.id, s.resumed = r.SessionID, true
	if s.id == "" {
		s.id = spec.Resume
	}
	return true, nil
}

func (s *protoSession) closeSession(ctx context.Context, id string) {
	_, _ = s.conn.Call(ctx, &proto.SessionClose{SessionID: id})
}

func (s *protoSession) ID() string    { return s.id }
func (s *protoSession) Resumed() bool { return s.resumed }

// Close ends the session's connection (the server closes the session with
// it) and waits for the connection to be served out.
func (s *protoSession) Close() { s.conn.Close() }

// Run implements Session.
func (s *protoSession) Run(ctx context.Context, prompt string, grant bool) (Outcome, error) {
	var out Outcome
	end, err := client.RunTurn(ctx, s.conn.Conn, client.Turn{
		Start:      proto.TurnStart{SessionID: s.id, Prompt: prompt},
		CancelWait: cancelWait,
		On: func(ev proto.Event) {
			switch ev := ev.(type) {
			case *proto.ApprovalRequested:
				_ = s.conn.Send(&proto.ApprovalResolve{SessionID: s.id, ApprovalID: ev.ApprovalID, Approved: grant})
			case *proto.AssistantCompleted:
				out.Answer = ev.Content
			}
		},
	})
	switch ev := end.(type) {
	case *proto.TurnCompleted:
		out.State = TurnCompleted
		return out, nil
	case *proto.TurnFailed:
		return Outcome{State: TurnFailed, Code: ev.Code}, nil
	case *proto.TurnCancelled:
		return Outcome{State: TurnCancelled}, nil
	case *proto.Error:
		switch {
		case ev.Fatal:
			return out, fmt.Errorf("the daemon ended the session's connection: %s", ev.Code)
		case ev.Code == proto.ErrInvalidRequest:
			// The server refused the prompt itself (too long, ...).
			return Outcome{State: TurnFailed, Code: ev.Code}, nil
		}
		return Outcome{}, fmt.Errorf("start a turn: %w", &client.RequestError{Code: ev.Code, Message: ev.Message})
	}
	switch {
	case errors.Is(err, client.ErrCancelTimeout):
		return Outcome{State: TurnCancelled}, err
	case errors.Is(err, client.ErrNotStarted):
		return Outcome{}, fmt.Errorf("start a turn: %w", ctx.Err())
	}
	return out, fmt.Errorf("the session's connection ended: %w", err)
}

// ProtoStatus is the clawbot section of daemon.status.
func ProtoStatus(list []AccountStatus) []proto.ClawbotAccount {
	out := make([]proto.ClawbotAccount, 0, len(list))
	for _, a := range list {
		pa := proto.ClawbotAccount{Account: a.Account, BotID: a.BotID, OwnerUserID: a.OwnerUserID, Enabled: a.Enabled, Workspace: a.Workspace,
			RemoteTools: a.RemoteTools, State: a.State, Restarts: a.Restarts, LastError: a.LastError}
		if !a.LastPoll.IsZero() {
			pa.LastPoll = a.LastPoll.UTC().Format(time.RFC3339)
		}
		out = append(out, pa)
	}
	return out
}

// Request handles the daemon-socket requests of the bridge:
// daemon.reload, clawbot.settings and clawbot.logout. The caller answers
// with daemon.status.
func (s *Supervisor) Request(ctx context.Context, m proto.Message) error {
	switch m := m.(type) {
	case *proto.DaemonReload:
		return s.Reload(ctx)
	case *proto.ClawbotSettings:
		_, err := s.Configure(ctx, m.Account, Change{Enabled: m.Enabled, Workspace: m.Workspace, RemoteTools: m.RemoteTools})
		return err
	case *proto.ClawbotLogout:
		return s.Logout(ctx, m.Account)
	}
	return fmt.Errorf("%s is not a request of the WeChat bridge", m.MessageType())
}
