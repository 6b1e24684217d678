package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/tool"
)

// Session commands (docs/protocol.md): session.configure, models.list and
// session.undo.

// maxModelName bounds a model name given by a client.
const maxModelName = 200

// efforts lists the reasoning efforts session.configure accepts; every
// wire SCV speaks sends one (on the anthropic wire it is the thinking
// budget). A function, so nothing is built at start-up.
func efforts() []string { return []string{"none", "minimal", "low", "medium", "high"} }

func validModelName(m string) error {
	if len(m) > maxModelName {
		return fmt.Errorf("model is %d bytes, above the limit of %d", len(m), maxModelName)
	}
	for _, r := range m {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("model %q contains a space or a control character", m)
		}
	}
	return nil
}

func (c *conn) sessionConfigure(s *session, m *proto.SessionConfigure) {
	invalid := func(msg string) { c.reqError(m.RequestID, proto.ErrInvalidRequest, "session.configure: "+msg, false) }
	if m.Model == "" && m.ReasoningEffort == "" && m.ApprovalPolicy == "" {
		invalid("give model, reasoning_effort, approval_policy or several")
		return
	}
	var policy approval.Policy
	if m.ApprovalPolicy != "" {
		p, err := approval.Parse(m.ApprovalPolicy)
		if err == nil && approval.Rank(p) < approval.Rank(s.agent.MinPolicy()) {
			err = fmt.Errorf("approval_policy %s is weaker than %s, which the configuration sets for this session (ask-on-risk < ask-always < deny-on-risk)", p, s.agent.MinPolicy())
		}
		if err != nil {
			invalid(err.Error())
			return
		}
		policy = p
	}
	if err := validModelName(m.Model); err != nil {
		invalid(err.Error())
		return
	}
	if m.ReasoningEffort != "" && !contains(efforts(), m.ReasoningEffort) {
		invalid(fmt.Sprintf("reasoning_effort %q is not one of %s", m.ReasoningEffort, strings.Join(efforts(), ", ")))
		return
	}
	if m.Model != "" {
		s.mu.Lock()
		if s.create != nil {
			s.create.Model = m.Model
		}
		stored := s.create == nil
		s.mu.Unlock()
		if st := c.srv.opts.Store; st != nil && stored {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), storeTimeout)
			err := st.SetModel(ctx, s.id, m.Model)
			cancel()
			if err != nil {
				c.reqError(m.RequestID, storeErrorCode(err), fmt.Sprintf("the model was not changed: the session database refused the change: %v", err), false)
				return
			}
		}
	}
	name, effort := s.agent.Configure(m.Model, m.ReasoningEffort)
	ev := &proto.SessionConfigured{Model: name, ReasoningEffort: effort, ContextMaxTokens: s.info.ContextMaxTokens}
	if policy != "" {
		_ = s.agent.SetPolicy(policy) // checked above
		ev.ApprovalPolicy = string(policy)
	}
	s.mu.Lock()
	s.info.Model = name
	s.mu.Unlock()
	c.reply(m.RequestID, ev, s)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// modelsList asks the provider in a goroutine of its own (it may take up to
// its 10 s bound) and answers with models.listed.
func (c *conn) modelsList(s *session, m *proto.ModelsList) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ids, err := s.agent.ListModels(c.ctx)
		switch {
		case errors.Is(err, agent.ErrNoModelList):
			c.reqError(m.RequestID, proto.ErrUnsupported, "this session's provider cannot list its models; name one with /model NAME in the TUI, or --model", false)
		case err != nil:
			c.reqError(m.RequestID, proto.ErrInvalidRequest, strings.TrimPrefix(err.Error(), proto.FailProvider+": ")+"; name a model with /model NAME in the TUI, or --model", false)
		default:
			c.reply(m.RequestID, &proto.ModelsListed{Current: s.agent.ModelName(), Models: ids}, s)
		}
	}()
}

// undoTurn is a turn whose writes can be undone.
type undoTurn struct {
	turnID  string
	changes []tool.FileChange
}

// sessionUndo undoes the file writes of the session's last ended turn that
// wrote files and was not undone yet. It holds the session's lock
// throughout, so no turn starts meanwhile.
func (c *conn) sessionUndo(s *session, m *proto.SessionUndo) {
	refuse := func(msg string) { c.reqError(m.RequestID, proto.ErrUndoRefused, msg, false) }
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != "" || len(s.queue) > 0 {
		refuse("a turn is running or queued; wait for it to end (or cancel it) before undoing")
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), storeTimeout)
	defer cancel()
	st := c.srv.opts.Store
	var last undoTurn
	switch {
	case st != nil && s.create == nil:
		u, err := st.LastUndoable(ctx, s.id)
		if errors.Is(err, store.ErrNotFound) {
			refuse("nothing to undo: no turn of this session wrote files with the write tool (changes made through bash or delegated agents are not tracked)")
			return
		} else if err != nil {
			c.reqError(m.RequestID, storeErrorCode(err), fmt.Sprintf("nothing was undone: the session database could not be read: %v", err), false)
			return
		}
		last.turnID = u.TurnID
		for _, f := range u.Files {
			last.changes = append(last.changes, tool.FileChange{Path: f.Path, Existed: f.Existed, Before: f.Before, Unkept: f.Unkept, After: f.After})
		}
	case st == nil && len(s.undo) > 0:
		last = s.undo[len(s.undo)-1]
	default:
		refuse("nothing to undo: no turn of this session wrote files with the write tool (changes made through bash or delegated agents are not tracked)")
		return
	}
	files, err := s.agent.Undo(ctx, last.changes, m.DryRun)
	var conflict *tool.UndoConflict
	switch {
	case errors.As(err, &conflict):
		refuse(conflict.Reason)
		return
	case err != nil:
		c.reqError(m.RequestID, proto.ErrInternal, "undo failed: "+err.Error(), false)
		return
	}
	if !m.DryRun {
		mark := s.agent.Mark()
		note, err := s.agent.NoteUndo(files)
		if err == nil && st != nil {
			err = st.MarkUndone(ctx, s.id, last.turnID, note)
		}
		if err != nil {
			s.agent.Rewind(mark)
			c.reqError(m.RequestID, proto.ErrStore, fmt.Sprintf("the files were restored, but the session database did not record it (a second undo would find them changed): %v", err), false)
			return
		}
		if st == nil {
			s.undo = s.undo[:len(s.undo)-1]
		}
	}
	c.reply(m.RequestID, &proto.SessionUndone{TurnID: last.turnID, DryRun: m.DryRun, Files: files, Note: proto.UndoNote}, s)
}

// storeFiles converts a turn's changes for the store.
func storeFiles(cs []tool.FileChange) []store.TurnFile {
	if len(cs) == 0 {
		return nil
	}
	out := make([]store.TurnFile, len(cs))
	for i, f := range cs {
		out[i] = store.TurnFile{Path: f.Path, Existed: f.Existed, Before: f.Before, Unkept: f.Unkept, After: f.After}
	}
	return out
}
