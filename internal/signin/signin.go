// Package signin signs delegated agents in and out of their private homes
// ($SCV_HOME/adapters/<name>) and reports their sign-in state without ever
// printing a key or an account: one Method per agent behind one interface,
// so `scv agents login|logout|status|import` hold flags and wiring only.
// Agents that sign in with their own CLI (claude, codex, grok) have those
// commands run with the private home and the scrubbed environment; for dsh
// SCV writes the key file, for pi the OpenAI-compatible provider files; a
// Codex setup can be imported. Adding an agent means one descriptor in
// internal/tools/agents and one case in For (a test ties the two lists).
package signin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// Agent is one agent as sign-in sees it: its adapter with the user's
// override applied, its private home, and the environment its own commands
// run with (the one agent_<name> runs with, minus the delegation tags).
type Agent struct {
	agents.Adapter
	// Home is the private home, $SCV_HOME/adapters/<name>.
	Home string
	// Env is the complete environment of the agent's own commands.
	Env []string
	// UserHome and PathEnv locate the executable (see Adapter.Resolve).
	UserHome, PathEnv string
}

// Prompter asks the user for what a sign-in needs.
type Prompter interface {
	// Line reads one answer.
	Line(prompt string) (string, error)
	// Secret reads a key, without echo on a terminal.
	Secret(prompt string) (string, error)
}

// IO is the user's side of a sign-in: the agent's own interactive commands
// get In, Out and Err; SCV's own reports go to Out, warnings to Err.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	Prompt   Prompter
}

// LoginRequest is what `scv agents login` was asked.
type LoginRequest struct {
	// Extra are the arguments after --, passed to the agent's own login.
	Extra []string
	// OpenAICompatible asks pi to use an OpenAI-compatible endpoint;
	// Endpoint holds what the flags gave of it (the rest is prompted).
	OpenAICompatible bool
	Endpoint         Endpoint
}

// ImportRequest is what `scv agents import` was asked.
type ImportRequest struct {
	// From is the Codex directory to copy from ("": $CODEX_HOME, else
	// ~/.codex, both from UserEnv).
	From    string
	UserEnv map[string]string
	// FromProvider asks pi to use SCV's active provider, which Provider
	// returns (with its key, read now).
	FromProvider bool
	Provider     func() (Endpoint, error)
}

// Method is how one agent signs in.
type Method interface {
	Login(ctx context.Context, io IO, req LoginRequest) error
	Logout(ctx context.Context, io IO, extra []string) error
	// Status is a one-line summary that names neither a key nor an account.
	Status(ctx context.Context) string
	Import(ctx context.Context, io IO, req ImportRequest) error
}

// For returns the sign-in of a (by its name); false for an agent without
// one. This is the one list of sign-in methods.
func For(a Agent) (Method, bool) {
	switch a.Name {
	case "claude":
		return command{Agent: a, login: []string{"auth", "login"}, logout: []string{"auth", "logout"},
			status: []string{"auth", "status"}, summarize: summarizeClaude}, true
	case "codex":
		return codex{command{Agent: a, login: []string{"login"}, logout: []string{"logout"},
			status: []string{"login", "status"}, summarize: summarizeCodex}}, true
	case "grok":
		// grok has no status command: a stored credential file is what it
		// is known by (any non-empty .grok/*auth* or .grok/*cred* — an
		// assumption, its file name could not be verified).
		return command{Agent: a, login: []string{"login"}, logout: []string{"logout"},
			credentials: []string{".grok/*auth*", ".grok/*cred*"}}, true
	case "dsh":
		return dsh{a}, true
	case "pi":
		return pi{a}, true
	}
	return nil, false
}

// Importers are the agents whose Import does something, for the usage
// text of `scv agents import`.
func Importers() []string { return []string{"codex", "pi"} }

// UsageError is a request the method cannot take (a flag for another
// agent, a key given as an argument): the command line's usage, not a
// failure of the sign-in.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usage(format string, args ...any) error { return &UsageError{msg: fmt.Sprintf(format, args...)} }

// noImport is the Import of agents that have nothing to import.
func noImport() error {
	return usage("import supports %s", strings.Join(Importers(), " and "))
}

// notCompatible refuses --openai-compatible for agents other than pi.
func notCompatible(req LoginRequest) error {
	if req.OpenAICompatible {
		return usage("--openai-compatible is only for pi")
	}
	return nil
}

// NotInstalled begins the status of every agent whose CLI does not
// resolve, the same words for each, so a reader (or grep) finds them.
const NotInstalled = "not installed"

// withInstall is state, led by NotInstalled when the executable does not
// resolve; state "" says nothing more is known.
func (a Agent) withInstall(state string) string {
	if _, err := a.Resolve(a.UserHome, a.PathEnv); err != nil {
		if state == "" {
			return NotInstalled
		}
		return NotInstalled + "; " + state
	}
	return state
}

// runAttached runs the agent's own command with the user's terminal.
func (a Agent) runAttached(ctx context.Context, io IO, args []string) error {
	exe, err := a.Resolve(a.UserHome, a.PathEnv)
	if err != nil {
		return fmt.Errorf("%s is not installed: %v", a.Title, err)
	}
	if err := a.EnsureHome(a.Home); err != nil {
		return err
	}
	c := exec.CommandContext(ctx, exe, args...)
	c.Env, c.Dir = a.Env, a.Home
	c.Stdin, c.Stdout, c.Stderr = io.In, io.Out, io.Err
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s %s exited with %v", a.Command, strings.Join(args, " "), ee)
		}
		return fmt.Errorf("run %s: %w", exe, err)
	}
	return nil
}

// statusTimeout bounds an agent's own status command.
const statusTimeout = 30 * time.Second

// capture runs a status command (stdin /dev/null, 30 s) and returns its
// combined output for summarising.
func (a Agent) capture(ctx context.Context, args []string) (string, int, error) {
	exe, err := a.Resolve(a.UserHome, a.PathEnv)
	if err != nil {
		return "", 0, err
	}
	if err := a.EnsureHome(a.Home); err != nil {
		return "", 0, err
	}
	out := proc.NewCapture(64 << 10)
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	res, err := proc.Run(ctx, proc.Spec{Path: exe, Args: args, Dir: a.Home, Env: a.Env, Stdout: out, Stderr: out, Timeout: statusTimeout})
	if err != nil {
		return "", 0, err
	}
	code := -1
	if res.ExitCode != nil {
		code = *res.ExitCode
	}
	return out.String(), code, nil
}

// storedCredential says whether a file matching one of patterns (globs
// relative to the private home) exists and is non-empty. The content is
// never read into anything that is printed.
func storedCredential(home string, patterns []string) bool {
	for _, pat := range patterns {
		matches, _ := filepath.Glob(filepath.Join(home, pat))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
				return true
			}
		}
	}
	return false
}

// credentialSummary is the status of an agent known by its credential
// files.
func (a Agent) credentialSummary(patterns []string) string {
	if storedCredential(a.Home, patterns) {
		return a.withInstall("signed in (credentials stored)")
	}
	return a.withInstall("not signed in")
}

// removeFile removes p; a missing file is not an error. It reports whether
// something was removed.
func removeFile(p string) (bool, error) {
	err := os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", p, err)
	}
	return true, nil
}

// validKey checks an API key read from the user: printable ASCII without
// spaces or quotes, so it is stored verbatim and never misread.
func validKey(key string) error {
	if key == "" {
		return errors.New("the key is empty")
	}
	if len(key) > 4096 {
		return errors.New("the key is longer than 4096 characters")
	}
	for _, r := range key {
		if r <= ' ' || r > '~' || r == '"' || r == '\'' || r == '\\' {
			return errors.New("the key holds spaces, quotes or non-ASCII characters: paste only the key")
		}
	}
	return nil
}
