package clawbot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
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
type ServeFunc func(ctx context.Context, r io.Reader, w io.Writer) error

// ProtocolDaemon is a Daemon that serves each conversation's connection
// in this process: one in-memory connection per session.
type ProtocolDaemon struct {
	// Serve serves a connection until the client closes it or ctx ends.
	Serve   ServeFunc
	Version string
}

// cancelWait bounds how long Run waits for a cancelled turn to end.
const cancelWait = 10 * time.Second

// Open implements Daemon.
func (d ProtocolDaemon) Open(ctx context.Context, spec SessionSpec) (Session, error) {
	// The connection lives until Close, or until ctx (the bridge's life)
	// ends.
	sctx, cancel := context.WithCancel(ctx)
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = d.Serve(sctx, toServer, fromServer)
		fromServer.Close()
		toServer.Close()
	}()
	conn := client.NewConn(toClient, fromClient)
	s := &protoSession{conn: conn, cancel: cancel, served: served}
	fail := func(err error) (Session, error) {
		s.Close()
		return nil, err
	}
	if _, err := conn.Initialize(ctx, "scv-clawbot", d.Version); err != nil {
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
	ev, err := conn.StartSession(ctx, proto.SessionStart{Cwd: spec.Workspace, NoTools: spec.NoTools, Origin: proto.OriginClawbot})
	if err != nil {
		return fail(err)
	}
	s.id = ev.SessionID
	return s, nil
}

type protoSession struct {
	conn    *client.Conn
	id      string
	resumed bool
	cancel  context.CancelFunc
	served  chan struct{}
	once    sync.Once
}

// resume asks the daemon to resume spec.Resume, without tools when the
// conversation is tool-free (no_tools is not stored with a session, so it
// is said again). It reports false (start a new session) when the daemon
// cannot: it does not know session.resume (unsupported, or an unknown
// message type), not this session, or the session is open elsewhere.
func (s *protoSession) resume(ctx context.Context, spec SessionSpec) (bool, error) {
	ev, err := s.conn.Call(ctx, &proto.SessionResume{SessionID: spec.Resume, NoTools: spec.NoTools, MaxTurns: 1})
	var re *client.RequestError
	if errors.As(err, &re) {
		switch {
		case re.Code == proto.ErrUnsupported,
			re.Code == proto.ErrInvalidRequest && strings.Contains(re.Message, "unknown message type"),
			re.Code == proto.ErrSessionNotFound, re.Code == proto.ErrSessionBusy:
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
func (s *protoSession) Close() {
	s.once.Do(func() {
		s.conn.Close()
		select {
		case <-s.served:
		case <-time.After(cancelWait):
			s.cancel()
			<-s.served
		}
		s.cancel()
	})
}

// Run implements Session.
func (s *protoSession) Run(ctx context.Context, prompt string, grant bool) (Outcome, error) {
	start, err := s.conn.Call(ctx, &proto.TurnStart{SessionID: s.id, Prompt: prompt})
	if err != nil {
		var re *client.RequestError
		if errors.As(err, &re) && re.Code == proto.ErrInvalidRequest {
			// The server refused the prompt itself (too long, ...).
			return Outcome{State: TurnFailed, Code: re.Code}, nil
		}
		return Outcome{}, fmt.Errorf("start a turn: %w", err)
	}
	var turnID string
	switch ev := start.(type) {
	case *proto.TurnStarted:
		turnID = ev.TurnID
	case *proto.QueueEnqueued:
		turnID = ev.QueueID
	default:
		return Outcome{}, fmt.Errorf("start a turn: unexpected answer %q", start.EventType())
	}
	var out Outcome
	done, cancelled := ctx.Done(), false
	var deadline <-chan time.Time
	for {
		select {
		case ev, ok := <-s.conn.Events():
			if !ok {
				return out, fmt.Errorf("the session's connection ended: %v", s.conn.Err())
			}
			if te, ok := ev.(proto.TurnEvent); ok && te.Turn().TurnID != turnID {
				continue
			}
			switch ev := ev.(type) {
			case *proto.ApprovalRequested:
				_ = s.conn.Send(&proto.ApprovalResolve{SessionID: s.id, ApprovalID: ev.ApprovalID, Approved: grant})
			case *proto.AssistantCompleted:
				out.Answer = ev.Content
			case *proto.TurnCompleted:
				out.State = TurnCompleted
				return out, nil
			case *proto.TurnFailed:
				return Outcome{State: TurnFailed, Code: ev.Code}, nil
			case *proto.TurnCancelled:
				return Outcome{State: TurnCancelled}, nil
			case *proto.Error:
				if ev.Fatal {
					return out, fmt.Errorf("the daemon ended the session's connection: %s", ev.Code)
				}
			}
		case <-done:
			done = nil
			if !cancelled {
				cancelled = true
				_ = s.conn.Send(&proto.TurnCancel{SessionID: s.id, TurnID: turnID})
				deadline = time.After(cancelWait)
			}
		case <-deadline:
			return Outcome{State: TurnCancelled}, errors.New("the cancelled turn did not end in time")
		}
	}
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
