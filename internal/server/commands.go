package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/scv-agent/scv/internal/agent"
	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/filechange"
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
	if m.Model == "" && m.ReasoningEffort == "" && m.ApprovalPolicy == "" && m.Provider == "" {
		invalid("give model, reasoning_effort, approval_policy, provider or several")
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
	s.mu.Lock()
	moving := m.Provider != "" && m.Provider != s.info.Provider
	s.mu.Unlock()
	if moving {
		c.sessionMove(s, m, policy)
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
			if !c.storeChange(m.RequestID, "the model was not changed", func(ctx context.Context) error { return st.SetModel(ctx, s.id, m.Model) }) {
				return
			}
		}
	}
	name, effort := s.agent.Configure(m.Model, m.ReasoningEffort)
	c.configured(s, m, policy, name, effort, "")
}

// configured updates what the session says of itself and answers
// session.configure; previous is the base URL a move left ("" for none).
func (c *conn) configured(s *session, m *proto.SessionConfigure, policy approval.Policy, name, effort, previous string) {
	window := s.agent.ContextWindow()
	if policy != "" {
		_ = s.agent.SetPolicy(policy) // checked by sessionConfigure
	}
	s.mu.Lock()
	s.info.Model, s.info.ContextMaxTokens = name, window
	ev := &proto.SessionConfigured{Model: name, ReasoningEffort: effort, ContextMaxTokens: window, ApprovalPolicy: string(policy),
		Provider: s.info.Provider, BaseURL: s.info.BaseURL, PreviousBaseURL: previous}
	s.mu.Unlock()
	c.reply(m.RequestID, ev, s)
}

// sessionMove moves the session to another provider profile
// (session.configure with provider): the factory builds the profile's
// client with the key for its endpoint, the store records the new
// endpoint, and the next turns go there. A running turn keeps its own.
func (c *conn) sessionMove(s *session, m *proto.SessionConfigure, policy approval.Policy) {
	if s.info.Switch == nil {
		c.reqError(m.RequestID, proto.ErrUnsupported, "session.configure: this server cannot move a session to another provider profile", false)
		return
	}
	sw, err := s.info.Switch(c.ctx, m.Provider, m.Model)
	if err != nil {
		c.reqError(m.RequestID, proto.ErrInvalidRequest, fmt.Sprintf("session.configure: the session was not moved to provider %s: %v", m.Provider, err), false)
		return
	}
	to := sw.Endpoint
	s.mu.Lock()
	if s.create != nil {
		s.create.Provider, s.create.Model, s.create.WireAPI, s.create.BaseURL = to.Provider, to.Model, to.WireAPI, to.BaseURL
	}
	stored := s.create == nil
	s.mu.Unlock()
	if st := c.srv.opts.Store; st != nil && stored {
		if !c.storeChange(m.RequestID, "the session was not moved", func(ctx context.Context) error { return st.SetEndpoint(ctx, s.id, store.Endpoint(to)) }) {
			return
		}
	}
	s.agent.SetEndpoint(sw.Client, to.Model, sw.Effort, sw.Describe)
	name, effort := s.agent.Configure("", m.ReasoningEffort)
	s.mu.Lock()
	previous := s.info.BaseURL
	s.info.Provider, s.info.WireAPI, s.info.BaseURL = to.Provider, to.WireAPI, to.BaseURL
	s.mu.Unlock()
	if previous == to.BaseURL {
		previous = ""
	} else {
		c.srv.opts.Logger.Info("session endpoint changed", "session", s.id, "from", previous, "to", to.BaseURL)
	}
	c.configured(s, m, policy, name, effort, previous)
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
// its 10 s bound) and answers with models.listed: the session's own
// provider, with the configured profiles, or the profile named.
func (c *conn) modelsList(s *session, m *proto.ModelsList) {
	s.mu.Lock()
	info := s.info
	s.mu.Unlock()
	other := m.Provider != "" && m.Provider != info.Provider
	if other && info.ListProfile == nil {
		c.reqError(m.RequestID, proto.ErrUnsupported, "models.list: this server cannot list another provider profile's models", false)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		var ids []string
		var err error
		if other {
			ids, err = info.ListProfile(c.ctx, m.Provider)
		} else {
			ids, err = s.agent.ListModels(c.ctx)
		}
		switch {
		case errors.Is(err, agent.ErrNoModelList):
			c.reqError(m.RequestID, proto.ErrUnsupported, "this session's provider cannot list its models; name one with /model NAME in the TUI, or --model", false)
		case err != nil:
			c.reqError(m.RequestID, proto.ErrInvalidRequest, strings.TrimPrefix(err.Error(), proto.FailProvider+": ")+"; name a model with /model NAME in the TUI, or --model", false)
		case other:
			c.reply(m.RequestID, &proto.ModelsListed{Current: s.agent.ModelName(), Models: ids, Provider: m.Provider}, s)
		default:
			ev := &proto.ModelsListed{Current: s.agent.ModelName(), Models: ids}
			if info.Profiles != nil {
				ev.Provider = info.Provider
				ev.Profiles = []proto.Profile{{Name: info.Provider, WireAPI: info.WireAPI, BaseURL: info.BaseURL, Model: ev.Current}}
				for _, p := range info.Profiles() {
					if p.Name != info.Provider {
						ev.Profiles = append(ev.Profiles, p)
					}
				}
			}
			c.reply(m.RequestID, ev, s)
		}
	}()
}

// undoTurn is a turn whose writes can be undone.
type undoTurn struct {
	turnID  string
	changes []filechange.Change
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
		last.turnID, last.changes = u.TurnID, u.Files
	case st == nil:
		refuse("nothing to undo: undo reads the turns' writes from the session database, and this server runs without one")
		return
	default:
		refuse("nothing to undo: no turn of this session wrote files with the write tool (changes made through bash or delegated agents are not tracked)")
		return
	}
	if s.info.Undo == nil {
		c.reqError(m.RequestID, proto.ErrInternal, "undo failed: "+errNoUndo.Error(), false)
		return
	}
	done, err := s.info.Undo(ctx, s.info.Cwd, last.changes, m.DryRun)
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
		note, err := s.agent.NoteUndo(done)
		if err == nil {
			err = st.MarkUndone(ctx, s.id, last.turnID, note)
		}
		if err != nil {
			s.agent.Rewind(mark)
			c.reqError(m.RequestID, proto.ErrStore, fmt.Sprintf("the files were restored, but the session database did not record it (a second undo would find them changed): %v", err), false)
			return
		}
	}
	c.reply(m.RequestID, &proto.SessionUndone{TurnID: last.turnID, DryRun: m.DryRun, Files: undoFiles(done), Note: proto.UndoNote}, s)
}

// errNoUndo says the session was built without a way to undo writes
// (SessionInfo.Undo).
var errNoUndo = errors.New("this session cannot undo file changes")

// undoFiles is the wire form of what an undo did (or would do): the one
// place a tool.FileUndo becomes a proto.UndoFile.
func undoFiles(done []tool.FileUndo) []proto.UndoFile {
	files := make([]proto.UndoFile, 0, len(done))
	for _, u := range done {
		f := proto.UndoFile{Path: u.Path, Action: proto.UndoRestore}
		if u.Remove {
			f.Action = proto.UndoRemove
		}
		if d := u.Diff; d != nil {
			f.Diff = &proto.Diff{Path: d.Path, Text: d.Text, Added: d.Added, Removed: d.Removed, Omitted: d.Omitted, Note: d.Note}
		}
		files = append(files, f)
	}
	return files
}
