package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/signin"
	"github.com/scv-agent/scv/internal/termtext"
	"github.com/scv-agent/scv/internal/tools/agents"
	"github.com/scv-agent/scv/internal/version"
)

// `scv doctor`: one screen of the checks a user otherwise makes by hand,
// each a line with ✓ (fine), ✗ (a problem, with its fix) or · (worth
// knowing, not a problem). Exit status 1 when a line is ✗.

// Marks of a doctor line.
const (
	checkOK   = "✓"
	checkFail = "✗"
	checkNote = "·"
)

// doctorTimeout bounds the endpoint request; the MCP servers have their
// own start-up bound.
const doctorTimeout = 10 * time.Second

type doctor struct {
	w      io.Writer
	failed bool
}

// line prints one check: its mark, its subject, what was found and, when
// there is one, what to do.
func (d *doctor) line(mark, subject, found, fix string) {
	if mark == checkFail {
		d.failed = true
	}
	text := termtext.Line(found)
	if fix != "" {
		text += " → " + termtext.Line(fix)
	}
	fmt.Fprintf(d.w, "%s %-14s %s\n", mark, termtext.Line(subject), text)
}

func newDoctorCmd(g *globals) *cobra.Command {
	var offline bool
	var workspace string
	cmd := &cobra.Command{
		Use:   "doctor [--offline]",
		Short: "Check the configuration, key, endpoint, daemon, database, MCP servers, agent CLIs and terminal",
		Long: "Check what SCV needs and print one line each: ✓ fine, ✗ a problem with its fix, · worth knowing.\n" +
			"The endpoint gets one bounded GET /models (--offline skips it); the key's value is never printed.\n" +
			"Exit status 1 when a check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := canonicalWorkspace(workspace)
			if err != nil {
				return err
			}
			d := &doctor{w: g.stdio.Out}
			g.runDoctor(d, ws, offline)
			if d.failed {
				return exitCode(ExitFailure)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&offline, "offline", false, "make no request to the model endpoint")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace whose project config applies (default: current directory)")
	return cmd
}

func (g *globals) runDoctor(d *doctor, ws string, offline bool) {
	fmt.Fprintf(d.w, "scv doctor (scv %s)\n", version.Version)
	a, layout, _, err := g.newApp(slog.New(slog.DiscardHandler), false)
	if err != nil {
		d.line(checkFail, "config", err.Error(), "fix the flag or SCV_HOME named")
		return
	}
	defer a.Close()
	loaded, err := a.LoadConfig(ws, app.NoOverrides)
	if err != nil {
		d.line(checkFail, "config", err.Error(), "fix the line named (`scv config show` explains every key)")
		d.line(checkNote, "provider", "not checked: the configuration does not load", "")
	} else {
		var files []string
		for _, f := range loaded.Files {
			files = append(files, f.Layer+" "+f.Path)
		}
		if len(files) == 0 {
			files = []string{"none: the defaults apply (`scv config init` writes a commented user config)"}
		}
		d.line(checkOK, "config", strings.Join(files, ", "), "")
		for _, p := range loaded.Deprecated {
			d.line(checkNote, "config", p.String(), "")
		}
		g.doctorProvider(d, a, &loaded.Config, offline)
		doctorSandbox(d, &loaded.Config)
	}
	g.doctorDaemon(d, layout)
	g.doctorDatabase(d, layout)
	if err == nil {
		g.doctorMCP(d, a, &loaded.Config, ws)
	}
	g.doctorAgents(d)
	g.doctorTerminal(d)
}

// doctorSandbox says whether this kernel can confine commands and whether
// the configured sandbox would run them.
func doctorSandbox(d *doctor, cfg *config.Config) {
	rep := sandbox.Probe()
	st := sandboxState(cfg, rep)
	kernel := fmt.Sprintf("Landlock ABI %d, %d of %d rules enforced", st.ABI, len(st.Rules)-len(st.Missing), len(st.Rules))
	if !st.Available {
		kernel = "unavailable here: " + st.Reason
	}
	switch {
	case st.Mode == config.SandboxOff:
		d.line(checkNote, "sandbox", "off; this kernel: "+kernel, "sandbox.mode confines what the model runs (docs/sandbox.md)")
	case st.Refuses != "":
		d.line(checkFail, "sandbox", st.Summary+"; sandboxed commands are refused", st.Refuses)
	default:
		d.line(checkOK, "sandbox", st.Summary+"; "+kernel, "")
	}
}

// doctorProvider checks the active profile, its key and (unless offline)
// its endpoint and model.
func (g *globals) doctorProvider(d *doctor, a *app.App, cfg *config.Config, offline bool) {
	name, prof := cfg.ActiveProvider()
	d.line(checkOK, "provider", fmt.Sprintf("%s: %s at %s, model %s", name, prof.WireAPI, prof.BaseURL, prof.Model), "")
	_, keyErr := cfg.APIKey(g.env)
	switch {
	case keyErr != nil:
		d.line(checkFail, "key", keyErr.Error(), "")
	case prof.APIKey != "":
		d.line(checkOK, "key", fmt.Sprintf("inline in the config (providers.%s.api_key)", name), "")
	case prof.APIKeyEnv != "":
		d.line(checkOK, "key", prof.APIKeyEnv+" is set", "")
	default:
		d.line(checkNote, "key", "this profile sends no key", "set api_key_env if the endpoint needs one")
	}
	if offline {
		d.line(checkNote, "endpoint", "not asked (--offline)", "")
		return
	}
	if keyErr != nil {
		d.line(checkNote, "endpoint", "not asked: no key", "")
		return
	}
	ctx, cancel := context.WithTimeout(g.ctx, doctorTimeout)
	defer cancel()
	ms, err := a.ListModels(ctx, cfg)
	switch {
	case err != nil:
		d.line(checkFail, "endpoint", err.Error(), "")
	case prof.Model != "" && len(ms.Models) > 0 && !slices.Contains(ms.Models, prof.Model):
		d.line(checkFail, "model", fmt.Sprintf("%q is not among the %d models the endpoint lists", prof.Model, len(ms.Models)),
			fmt.Sprintf("set providers.%s.model (`scv models` lists them)", name))
	default:
		d.line(checkOK, "endpoint", fmt.Sprintf("reachable: %s, %s listed", count(len(ms.Models), "model"), prof.Model), "")
	}
}

func (g *globals) doctorDaemon(d *doctor, layout paths.Layout) {
	st, err := g.queryStatus(layout)
	if err != nil {
		d.line(checkNote, "daemon", "not running (no answer on "+layout.Socket()+")", "`scv start` starts it (plain `scv` starts one itself)")
		return
	}
	if st.Version != version.Version {
		d.line(checkFail, "daemon", fmt.Sprintf("running (pid %d), version %s, this scv is %s", st.PID, st.Version, version.Version), "`scv stop; scv start` runs this version")
		return
	}
	d.line(checkOK, "daemon", fmt.Sprintf("running (pid %d, version %s, %s)", st.PID, st.Version, count(st.Sessions, "open session")), "")
}

func (g *globals) doctorDatabase(d *doctor, layout paths.Layout) {
	if !databaseExists(layout) {
		d.line(checkNote, "database", layout.Database()+" does not exist yet (the first session creates it)", "")
		return
	}
	logger := slog.New(slog.DiscardHandler)
	st, err := openStore(g.ctx, layout, "", logger)
	if err != nil {
		d.line(checkFail, "database", err.Error(), "move the file aside; SCV creates a fresh one")
		return
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
	defer cancel()
	if err := st.Check(ctx); err != nil {
		d.line(checkFail, "database", err.Error(), "export what you need (`scv sessions export`), then move the file aside")
		return
	}
	db := app.DatabaseStatus(ctx, st, logger)
	if db == nil {
		d.line(checkFail, "database", "cannot read its size and counts", "")
		return
	}
	d.line(checkOK, "database", describeDatabase(db)+", integrity ok", "")
}

func (g *globals) doctorMCP(d *doctor, a *app.App, cfg *config.Config, ws string) {
	if len(cfg.MCP.Servers) == 0 {
		return
	}
	for _, st := range a.ProbeMCP(g.ctx, ws, a.MCPServers(cfg, ws)) {
		if st.Err != nil {
			d.line(checkFail, "mcp "+st.Name, "failed: "+st.Err.Error(), "`scv mcp test "+st.Name+"` shows what went wrong")
			continue
		}
		d.line(checkOK, "mcp "+st.Name, fmt.Sprintf("ready: %s (started in %s)", count(len(st.Tools), "tool"), st.StartTime.Round(time.Millisecond)), "")
	}
}

func (g *globals) doctorAgents(d *doctor) {
	for _, n := range agents.Names() {
		m, err := g.signIn(n)
		if err != nil {
			d.line(checkFail, "agent "+n, err.Error(), "")
			continue
		}
		st := m.Status(g.ctx)
		switch {
		case strings.HasPrefix(st, signin.NotInstalled):
			d.line(checkNote, "agent "+n, st, "")
		case strings.HasPrefix(st, "signed in"):
			d.line(checkOK, "agent "+n, st, "")
		default:
			d.line(checkNote, "agent "+n, st, "`scv agents login "+n+"` signs it in")
		}
	}
}

func (g *globals) doctorTerminal(d *doctor) {
	termName := g.env["TERM"]
	f, ok := g.raw.Out.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		d.line(checkNote, "terminal", "stdout is not a terminal (TERM="+termName+")", "")
		return
	}
	if termName == "" || termName == "dumb" {
		d.line(checkFail, "terminal", fmt.Sprintf("TERM=%q cannot draw the TUI", termName), "set TERM to your terminal's type, e.g. xterm-256color")
		return
	}
	desc := "TERM=" + termName
	if w, h, err := term.GetSize(f.Fd()); err == nil {
		desc += fmt.Sprintf(", %d×%d", w, h)
		if w < 60 || h < 15 {
			d.line(checkNote, "terminal", desc, "the TUI is cramped below 60×15")
			return
		}
	}
	if g.env["TMUX"] != "" {
		desc += ", inside tmux"
	}
	d.line(checkOK, "terminal", desc, "")
}
