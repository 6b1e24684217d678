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
// visible. Every event type has its case; TestEveryTextFieldMadeVisible
// fails when a type or a text field is missing here.
func visibleEvent[T proto.Event](ev T) T {
	line := func(fs ...*string) {
		for _, f := range fs {
			*f = termtext.Line(*f)
		}
	}
	block := func(fs ...*string) {
		for _, f := range fs {
			*f = termtext.Block(*f)
		}
	}
	switch e := any(ev).(type) {
	case *proto.Initialized:
		line(&e.Server.Name, &e.Server.Version)
	case *proto.Error:
		line(&e.Code)
		block(&e.Message)
	case *proto.DaemonStatusReply:
		block(&e.Message)
		if e.Status != nil {
			line(&e.Status.Version, &e.Status.ProcessTracking)
			if e.Status.Database != nil {
				line(&e.Status.Database.Path)
			}
			if p := e.Status.Provider; p != nil {
				line(&p.Profile, &p.WireAPI, &p.Model, &p.BaseURL, &p.KeyEnv)
				for i := range p.ConfigFiles {
					line(&p.ConfigFiles[i])
				}
			}
			for i := range e.Status.Clawbot {
				a := &e.Status.Clawbot[i]
				line(&a.Account, &a.BotID, &a.OwnerUserID, &a.Workspace, &a.RemoteTools, &a.State, &a.LastError, &a.LastPoll)
			}
		}
	case *proto.SessionStarted:
		line(&e.Cwd, &e.Model)
		for i := range e.Tools {
			line(&e.Tools[i])
		}
	case *proto.TurnStarted:
		for i := range e.Mentions {
			line(&e.Mentions[i].Path, &e.Mentions[i].Kind, &e.Mentions[i].Refused)
		}
	case *proto.CommandsListed:
		for i := range e.Commands {
			line(&e.Commands[i].Name, &e.Commands[i].Description, &e.Commands[i].Source)
		}
		for i := range e.Skipped {
			line(&e.Skipped[i].File, &e.Skipped[i].Reason)
		}
	case *proto.SessionCleared, *proto.SessionClosed, *proto.SessionCompacted, *proto.QueueEnqueued,
		*proto.ContextCompacted, *proto.SessionTrimmed, *proto.TurnCompleted, *proto.TurnCancelled:
		// identifiers and numbers only
	case *proto.AssistantReasoning:
		block(&e.Content)
	case *proto.AssistantDelta:
		block(&e.Content)
	case *proto.AssistantCompleted:
		block(&e.Content)
	case *proto.TurnFailed:
		line(&e.Code)
		block(&e.Message)
	case *proto.ToolProposed:
		line(&e.Name)
	case *proto.ApprovalRequested:
		line(&e.Cwd, &e.Name, &e.Risk, &e.Reason)
		block(&e.Summary)
		visibleDiff(e.Diff)
		visibleGrant(e.Grant)
	case *proto.ToolStarted:
		line(&e.Name)
		block(&e.Summary)
		visibleDiff(e.Diff)
		visibleGrant(e.Granted)
		visibleGrant(e.Rule)
	case *proto.ApprovalGrantsReply:
		for i := range e.Grants {
			visibleGrant(&e.Grants[i])
		}
		for i := range e.Rules {
			visibleGrant(&e.Rules[i])
		}
	case *proto.ToolProgress:
		// Progress lines are often columns; a tab there is only spacing.
		e.Text = strings.ReplaceAll(e.Text, "\t", " ")
		line(&e.Text)
	case *proto.ToolCompleted:
		line(&e.Name, &e.Error)
		block(&e.Output)
	case *proto.HookRan:
		line(&e.Hook, &e.Event, &e.Tool, &e.Outcome)
		block(&e.Reason, &e.Stderr)
	case *proto.SessionMode:
		line(&e.Mode)
	case *proto.JobReported:
		line(&e.Job, &e.Agent, &e.Status, &e.Reason)
		block(&e.Text)
	case *proto.TodoUpdated:
		for i := range e.Items {
			line(&e.Items[i].Content, &e.Items[i].Status)
		}
	case *proto.SessionListed:
		line(&e.Next) // a cursor, sent back, but never shown raw
		for i := range e.Sessions {
			s := &e.Sessions[i]
			line(&s.Title, &s.Cwd, &s.Provider, &s.Model, &s.Origin, &s.State, &s.Created, &s.Updated, &s.ForkedFrom, &s.ForkedAt, &s.LiveIn, &s.LastTurn, &s.FirstPrompt)
		}
	case *proto.SessionResumed:
		line(&e.Cwd, &e.Model, &e.Title, &e.Origin, &e.ForkedFrom, &e.ForkedAt, &e.BaseURL, &e.PreviousBaseURL, &e.Mode)
		for i := range e.Tools {
			line(&e.Tools[i])
		}
		for i := range e.Todos {
			line(&e.Todos[i].Content, &e.Todos[i].Status)
		}
		storedTurns(e.Turns)
	case *proto.SessionTurnsReply:
		storedTurns(e.Turns)
	case *proto.SessionRenamed:
		line(&e.Title)
	case *proto.SessionDeleted:
		// identifiers only
	case *proto.SessionConfigured:
		line(&e.Model, &e.ReasoningEffort, &e.ApprovalPolicy, &e.Provider, &e.BaseURL, &e.PreviousBaseURL)
	case *proto.ModelsListed:
		line(&e.Current, &e.Provider)
		for i := range e.Models {
			line(&e.Models[i])
		}
		for i := range e.Profiles {
			p := &e.Profiles[i]
			line(&p.Name, &p.WireAPI, &p.BaseURL, &p.Model)
		}
	case *proto.SessionUndone:
		line(&e.TurnID)
		block(&e.Note)
		for i := range e.Files {
			f := &e.Files[i]
			line(&f.Path, &f.Action)
			visibleDiff(f.Diff)
		}
	}
	return ev
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
