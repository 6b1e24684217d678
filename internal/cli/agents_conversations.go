package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/termtext"
)

// conversationJSON is one conversation as `scv agents conversations
// --json` prints it (never the agent's own session id).
type conversationJSON struct {
	Session   string    `json:"session"`
	Handle    string    `json:"handle"`
	Agent     string    `json:"agent"`
	Cwd       string    `json:"cwd"`
	Turns     int       `json:"turns"`
	Created   time.Time `json:"created"`
	Used      time.Time `json:"used"`
	State     string    `json:"state"`
	ClosedWhy string    `json:"closed_why,omitempty"`
}

func newAgentsConversationsCmd(g *globals) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "conversations [SESSION]",
		Short: "List the conversations with delegated agents that sessions keep (--all: also closed ones)",
		Args:  cobra.MaximumNArgs(1),
		RunE: g.runWithStore(func(ctx context.Context, st *store.Store, args []string) error {
			id := ""
			if len(args) == 1 {
				full, err := st.ResolveID(ctx, args[0])
				if err != nil {
					return err
				}
				id = full
			}
			a, _, _, err := g.newApp(g.consoleLogger(false), false)
			if err != nil {
				return err
			}
			defer a.Close()
			list, err := a.Conversations(ctx, st, id)
			if err != nil {
				return err
			}
			return g.printConversations(list, all, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&all, "all", false, "also list closed conversations (evicted or expired)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print them as JSON")
	return cmd
}

func (g *globals) printConversations(list []delegation.Conversation, all, asJSON bool) error {
	out := []conversationJSON{}
	for _, c := range list {
		if !all && !c.Live() {
			continue
		}
		state := "live"
		if !c.Live() {
			state = "closed"
		}
		out = append(out, conversationJSON{Session: c.Session, Handle: c.Handle, Agent: c.Agent, Cwd: c.Cwd, Turns: c.Turns,
			Created: c.Created, Used: c.Used, State: state, ClosedWhy: c.ClosedWhy})
	}
	if asJSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		return writeJSONLine(g.stdio.Out, b)
	}
	if len(out) == 0 {
		fmt.Fprintln(g.stdio.Out, "no conversations")
		return nil
	}
	w := tabwriter.NewWriter(g.stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tHANDLE\tAGENT\tTURNS\tLAST USED\tSTATE\tCWD")
	for _, c := range out {
		state := c.State
		if c.ClosedWhy != "" {
			state += " (" + c.ClosedWhy + ")"
		}
		// The directory came from the model and the store is a file the
		// user's other processes can write: nothing may act on the
		// terminal.
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", termtext.Line(c.Session), termtext.Line(c.Handle), termtext.Line(c.Agent), c.Turns,
			c.Used.Local().Format("2006-01-02 15:04"), termtext.Line(state), termtext.Line(c.Cwd))
	}
	return w.Flush()
}
