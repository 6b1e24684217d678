package tui

import (
	"strings"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// visibleEvent makes every text field of ev that a model, a tool, a
// repository or the server chose safe for the terminal, in place, and
// returns ev: escape sequences and other control characters are shown,
// never acted on (an ESC [8m in a command would otherwise hide what follows
// it from the approver). Multi-line fields keep their newlines; the others
// become one line. Identifiers are left alone (they are sent back to the
// server), and arguments stay raw JSON: argSummary makes their text
// visible. Every event type has its case in one of the three switches
// below (turn, session, server); TestEveryTextFieldMadeVisible
// fails when a type or a text field is missing here.
func visibleEvent[T proto.Event](ev T) T {
	e := any(ev)
	if !visibleTurnEvent(e) && !visibleSessionEvent(e) {
		visibleServerEvent(e)
	}
	return ev
}

// asLine makes each field one visible line.
func asLine(fs ...*string) {
	for _, f := range fs {
		*f = termtext.Line(*f)
	}
}

// asBlock makes each field visible, keeping its newlines.
func asBlock(fs ...*string) {
	for _, f := range fs {
		*f = termtext.Block(*f)
	}
}

// visibleTurnEvent makes the events of a running turn visible; false for
// other events.
func visibleTurnEvent(ev any) bool {
	switch e := ev.(type) {
	case *proto.TurnStarted:
		for i := range e.Mentions {
			asLine(&e.Mentions[i].Path, &e.Mentions[i].Kind, &e.Mentions[i].Refused)
		}
	case *proto.QueueEnqueued, *proto.TurnCompleted, *proto.TurnCancelled:
		// identifiers and numbers only
	case *proto.AssistantReasoning:
		asBlock(&e.Content)
	case *proto.AssistantDelta:
		asBlock(&e.Content)
	case *proto.AssistantCompleted:
		asBlock(&e.Content)
	case *proto.TurnFailed:
		asLine(&e.Code)
		asBlock(&e.Message)
	case *proto.ToolProposed:
		asLine(&e.Name)
	case *proto.ApprovalRequested:
		asLine(&e.Cwd, &e.Name, &e.Risk, &e.Reason)
		asBlock(&e.Summary)
		visibleDiff(e.Diff)
		visibleGrant(e.Grant)
	case *proto.ToolStarted:
		asLine(&e.Name)
		asBlock(&e.Summary)
		visibleDiff(e.Diff)
		visibleGrant(e.Granted)
		visibleGrant(e.Rule)
	case *proto.ToolProgress:
		// Progress lines are often columns; a tab there is only spacing.
		e.Text = strings.ReplaceAll(e.Text, "\t", " ")
		asLine(&e.Text)
	case *proto.ToolCompleted:
		asLine(&e.Name, &e.Error)
		asBlock(&e.Output)
	case *proto.HookRan:
		asLine(&e.Hook, &e.Event, &e.Tool, &e.Outcome)
		asBlock(&e.Reason, &e.Stderr)
	case *proto.TodoUpdated:
		for i := range e.Items {
			asLine(&e.Items[i].Content, &e.Items[i].Status)
		}
	default:
		return false
	}
	return true
}

// visibleSessionEvent makes the events about the session itself (its
// start, listing, resume, settings, grants, commands, undo) visible;
// false for other events.
func visibleSessionEvent(ev any) bool {
	switch e := ev.(type) {
	case *proto.SessionStarted:
		asLine(&e.Cwd, &e.Model)
		for i := range e.Tools {
			asLine(&e.Tools[i])
		}
	case *proto.SessionCleared, *proto.SessionClosed, *proto.SessionCompacted,
		*proto.ContextCompacted, *proto.SessionTrimmed, *proto.SessionDeleted:
		// identifiers and numbers only
	case *proto.SessionMode:
		asLine(&e.Mode)
	case *proto.SessionListed:
		asLine(&e.Next) // a cursor, sent back, but never shown raw
		for i := range e.Sessions {
			s := &e.Sessions[i]
			asLine(&s.Title, &s.Cwd, &s.Provider, &s.Model, &s.Origin, &s.State, &s.Created, &s.Updated, &s.ForkedFrom, &s.ForkedAt, &s.LiveIn, &s.LastTurn, &s.FirstPrompt)
		}
	case *proto.SessionResumed:
		asLine(&e.Cwd, &e.Model, &e.Title, &e.Origin, &e.ForkedFrom, &e.ForkedAt, &e.BaseURL, &e.PreviousBaseURL, &e.Mode)
		for i := range e.Tools {
			asLine(&e.Tools[i])
		}
		for i := range e.Todos {
			asLine(&e.Todos[i].Content, &e.Todos[i].Status)
		}
		storedTurns(e.Turns)
	case *proto.SessionTurnsReply:
		storedTurns(e.Turns)
	case *proto.SessionRenamed:
		asLine(&e.Title)
	case *proto.SessionConfigured:
		asLine(&e.Model, &e.ReasoningEffort, &e.ApprovalPolicy, &e.Provider, &e.BaseURL, &e.PreviousBaseURL)
	case *proto.ModelsListed:
		asLine(&e.Current, &e.Provider)
		for i := range e.Models {
			asLine(&e.Models[i])
		}
		for i := range e.Profiles {
			p := &e.Profiles[i]
			asLine(&p.Name, &p.WireAPI, &p.BaseURL, &p.Model)
		}
	case *proto.SessionUndone:
		asLine(&e.TurnID)
		asBlock(&e.Note)
		for i := range e.Files {
			f := &e.Files[i]
			asLine(&f.Path, &f.Action)
			visibleDiff(f.Diff)
		}
	case *proto.ApprovalGrantsReply:
		for i := range e.Grants {
			visibleGrant(&e.Grants[i])
		}
		for i := range e.Rules {
			visibleGrant(&e.Rules[i])
		}
	case *proto.JobReported:
		asLine(&e.Job, &e.Agent, &e.Status, &e.Reason)
		asBlock(&e.Text)
	case *proto.CommandsListed:
		for i := range e.Commands {
			asLine(&e.Commands[i].Name, &e.Commands[i].Description, &e.Commands[i].Source)
		}
		for i := range e.Skipped {
			asLine(&e.Skipped[i].File, &e.Skipped[i].Reason)
		}
	default:
		return false
	}
	return true
}

// visibleServerEvent makes the events about the connection and the
// daemon visible (initialized, error, daemon status).
func visibleServerEvent(ev any) {
	switch e := ev.(type) {
	case *proto.Initialized:
		asLine(&e.Server.Name, &e.Server.Version)
	case *proto.Error:
		asLine(&e.Code)
		asBlock(&e.Message)
	case *proto.DaemonStatusReply:
		asBlock(&e.Message)
		if e.Status == nil {
			return
		}
		asLine(&e.Status.Version, &e.Status.ProcessTracking)
		if e.Status.Database != nil {
			asLine(&e.Status.Database.Path)
		}
		if p := e.Status.Provider; p != nil {
			asLine(&p.Profile, &p.WireAPI, &p.Model, &p.BaseURL, &p.KeyEnv)
			for i := range p.ConfigFiles {
				asLine(&p.ConfigFiles[i])
			}
		}
		for i := range e.Status.Clawbot {
			a := &e.Status.Clawbot[i]
			asLine(&a.Account, &a.BotID, &a.OwnerUserID, &a.Workspace, &a.RemoteTools, &a.State, &a.LastError, &a.LastPoll)
		}
	}
}

// storedTurns makes a stored turn's own text fields visible; its events
// are made visible one by one as they are replayed.
func storedTurns(ts []proto.StoredTurn) {
	for i := range ts {
		t := &ts[i]
		t.State, t.ErrorCode, t.Started, t.Ended = termtext.Line(t.State), termtext.Line(t.ErrorCode), termtext.Line(t.Started), termtext.Line(t.Ended)
		t.Prompt, t.ErrorMessage = termtext.Block(t.Prompt), termtext.Block(t.ErrorMessage)
		for j := range t.Images {
			im := &t.Images[j]
			im.Path, im.MediaType, im.SHA256 = termtext.Line(im.Path), termtext.Line(im.MediaType), termtext.Line(im.SHA256)
		}
		if u := t.Undone; u != nil {
			u.At = termtext.Line(u.At)
			for j := range u.Files {
				u.Files[j].Path, u.Files[j].Action = termtext.Line(u.Files[j].Path), termtext.Line(u.Files[j].Action)
				visibleDiff(u.Files[j].Diff)
			}
		}
	}
}

// visibleDiff makes a diff's text visible: the file content it quotes is
// as untrusted as any tool output.
func visibleDiff(d *proto.Diff) {
	if d != nil {
		d.Path, d.Note, d.Text = termtext.Line(d.Path), termtext.Line(d.Note), termtext.Block(d.Text)
	}
}

func visibleGrant(g *proto.Grant) {
	if g != nil {
		g.Tool, g.Risk, g.Prefix = termtext.Line(g.Tool), termtext.Line(g.Risk), termtext.Line(g.Prefix)
		g.Command, g.Path, g.Source = termtext.Line(g.Command), termtext.Line(g.Path), termtext.Line(g.Source)
		g.Domain, g.Decision, g.Workspace = termtext.Line(g.Domain), termtext.Line(g.Decision), termtext.Line(g.Workspace)
	}
}
