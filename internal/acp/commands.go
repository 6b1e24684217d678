package acp

import (
	"context"
	"strings"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// Custom commands: the session's commands (the user's and the
// workspace's Markdown prompt files, listed by the server) are offered to
// the editor as ACP available commands, and a prompt that starts with
// /name of one of them runs it (turn.start with command and arguments).

type commandsUpdate struct {
	SessionUpdate     string             `json:"sessionUpdate"`
	AvailableCommands []availableCommand `json:"availableCommands"`
}

type availableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

// listCommands asks for the session's custom commands once the session is
// answered and sends them as an available_commands_update when there are
// any.
func (a *Agent) listCommands(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	listed, err := client.CallFor[*proto.CommandsListed](ctx, a.conn, &proto.CommandsList{SessionID: s.id})
	cancel()
	if err != nil {
		a.log.Debug("commands.list", "err", err)
		return
	}
	for _, sk := range listed.Skipped {
		a.log.Info("custom command skipped", "file", sk.File, "reason", sk.Reason)
	}
	names := map[string]bool{}
	u := commandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: []availableCommand{}}
	for _, c := range listed.Commands {
		desc := c.Description
		if c.Source == proto.CommandWorkspace {
			// The prompt comes from the repository, not from the user.
			desc = "(repo) " + desc
		}
		names[c.Name] = true
		u.AvailableCommands = append(u.AvailableCommands, availableCommand{Name: c.Name, Description: desc, Input: &commandInput{Hint: "arguments"}})
	}
	s.mu.Lock()
	s.commands = names
	s.mu.Unlock()
	if len(names) > 0 {
		a.update(s, u)
	}
}

// command sorts a prompt's text: the custom command it runs and its
// arguments, or ok false for a plain prompt.
func (s *session) command(text string) (name, args string, ok bool) {
	word, ok := strings.CutPrefix(text, "/")
	if !ok {
		return "", "", false
	}
	word, args, _ = strings.Cut(word, " ")
	if i := strings.IndexAny(word, "\t\n"); i >= 0 {
		word, args = word[:i], text[1+i:]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.commands[word] {
		return "", "", false
	}
	return word, strings.TrimSpace(args), true
}
