// Package cli is SCV's command line: one file per subcommand, each holding
// its flags, the wiring of flags and environment into the packages that do
// the work, and the printing of what they return. Composition happens in
// internal/app: the session database, the protocol servers and the daemon
// with its WeChat bridge are built there (app.OpenStore, app.NewServer,
// app.NewDaemon), and internal/deps_test.go keeps the store's and the
// bridge's constructors out of this package.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/termtext"
)

// Stdio are the streams a command uses; tests pass buffers.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// Env is the process environment as a map; nothing below cli reads
// os.Getenv.
type Env map[string]string

// Environ turns os.Environ() output into an Env.
func Environ(kv []string) Env {
	env := Env{}
	for _, s := range kv {
		if k, v, ok := strings.Cut(s, "="); ok {
			env[k] = v
		}
	}
	return env
}

// Exit codes (docs/runtime.md §1, and §9 for exec's).
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitDenied: scv exec answered, but one or more tool calls were
	// denied.
	ExitDenied = 3
	// ExitInterrupted: Ctrl+C (SIGINT) or SIGTERM ended the command
	// (128 + SIGINT, as shells report it).
	ExitInterrupted = 130
)

// exitError carries an exit status with an optional message for stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErr is a bad-usage error (exit 2).
func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}

// codedError is a start-up error of scv exec with the code its --json
// error event carries.
type codedError struct {
	code string
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// startupErr tags err with its exec error code.
func startupErr(code string, err error) error { return &codedError{code: code, err: err} }

// exitCode is a silent (already reported) exit status.
func exitCode(code int) error { return &exitError{code: code} }

// globals are the flags every command shares (docs/runtime.md, "Processes
// and commands").
type globals struct {
	ctx context.Context
	// stdio's Out and Err make everything printed visible; raw are the
	// streams Run was given (output.go).
	stdio, raw     Stdio
	env            Env
	scvHome        string
	configPath     string
	model          string
	provider       string
	baseURL        string
	approvalPolicy string
	// The TUI's session choice: --continue, --resume [ID].
	tuiContinue, tuiResume bool
	tuiResumeID            string
	// tuiNoDaemon is --no-daemon: the TUI serves its session in process.
	tuiNoDaemon bool
	// execJSON is scv exec --json: every error is also an error event on
	// stdout.
	execJSON bool
}

// Run executes the scv command line and returns the process exit status.
// Commands print through visible streams (output.go says why and where
// the raw ones are used).
func Run(ctx context.Context, args []string, stdio Stdio, env Env) int {
	if len(args) > 0 && args[0] == sandbox.HelperCommand {
		// Before anything else runs: the helper confines itself, then
		// becomes the command.
		return runSandboxExec(args[1:], stdio)
	}
	out, errw := termtext.NewWriter(stdio.Out), termtext.NewWriter(stdio.Err)
	defer errw.Flush()
	defer out.Flush()
	g := &globals{ctx: ctx, stdio: Stdio{In: stdio.In, Out: out, Err: errw}, raw: stdio, env: env}
	stdio = g.stdio
	root := newRootCmd(g)
	// After the flags are defined (defining one sets its default).
	g.execJSON = wantsExecJSON(args)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	err = withSuggestion(root, err)
	var ee *exitError
	if errors.As(err, &ee) && ee.msg == "" {
		return ee.code // reported already
	}
	code, ecode := ExitFailure, execStartupError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case isUsageError(err):
		code = ExitUsage
	}
	if code == ExitUsage {
		ecode = execUsageError
	}
	if ce := (*codedError)(nil); errors.As(err, &ce) {
		ecode = ce.code
	}
	if ctx.Err() != nil && code == ExitFailure {
		code, ecode = ExitInterrupted, execInterrupted
	}
	fmt.Fprintf(stdio.Err, "scv: %v\n", err)
	if g.execJSON {
		printEvent(stdio.Out, &proto.Error{Header: proto.Header{Type: proto.EventError}, Code: ecode, Message: err.Error(), Fatal: true})
	}
	return code
}

// wantsExecJSON says args run scv exec with --json, so that an error found
// before the flag is parsed (a bad flag earlier on the line) is an error
// event too. The command is the first argument that is not a flag (global
// flags with a value come before it).
func wantsExecJSON(args []string) bool {
	// The root's flags that take a value.
	globalValueFlags := []string{"--scv-home", "--config", "--model", "--provider", "--base-url", "--approval-policy"}
	cmd := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return false
		}
		if cmd == "" && !strings.HasPrefix(a, "-") {
			cmd = a
			if cmd != "exec" {
				return false
			}
			continue
		}
		if cmd == "" && !strings.Contains(a, "=") && slices.Contains(globalValueFlags, a) {
			i++ // the flag's value
			continue
		}
		if cmd == "exec" && (a == "--json" || a == "--json=true") {
			return true
		}
	}
	return false
}

// withSuggestion adds "did you mean" to cobra's unknown-subcommand error
// (`scv sessions lsit`), which cobra itself does for the root only.
func withSuggestion(root *cobra.Command, err error) error {
	var name, path string
	if n, _ := fmt.Sscanf(err.Error(), "unknown command %q for %q", &name, &path); n != 2 {
		return err
	}
	parent, _, ferr := root.Find(strings.Fields(path)[1:])
	if ferr != nil || parent == root {
		return err
	}
	parent.SuggestionsMinimumDistance = 2
	if s := parent.SuggestionsFor(name); len(s) > 0 {
		return usageErr("%v; did you mean %s? (%s --help lists them)", err, orList(s), path)
	}
	return err
}

// isUsageError recognises cobra's own argument and flag errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "scv",
		Short:         "SCV: a self-hosted agent runtime",
		SilenceUsage:  true,
		SilenceErrors: true,
		// `scv exce` suggests exec.
		SuggestionsMinimumDistance: 2,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.scvHome, "scv-home", "", "instance home (env SCV_HOME, default ~/.scv)")
	pf.StringVar(&g.configPath, "config", "", "one extra config file (env SCV_CONFIG)")
	pf.StringVar(&g.model, "model", "", "model of the active provider")
	pf.StringVar(&g.provider, "provider", "", "provider profile name")
	pf.StringVar(&g.baseURL, "base-url", "", "base URL of the provider endpoint")
	pf.StringVar(&g.approvalPolicy, "approval-policy", "", "ask-on-risk|ask-always|deny-on-risk|ask-unsandboxed")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })

	// Explicit registration: one line per subcommand file.
	root.AddCommand(
		newConfigCmd(g),
		newVersionCmd(g),
		newTUICmd(g),
		newAgentsCmd(g),
		newToolsCmd(g),
		newMCPCmd(g),
		newHooksCmd(g),
		newExecCmd(g),
		newServerCmd(g),
		newRunCmd(g),
		newStartCmd(g),
		newStopCmd(g),
		newStatusCmd(g),
		newSessionsCmd(g),
		newReloadCmd(g),
		newClawbotCmd(g),
		newUndoCmd(g),
		newModelsCmd(g),
		newDoctorCmd(g),
		newACPCmd(g),
		newSandboxCmd(g),
	)
	attachTUIRoot(root, g)
	return root
}
