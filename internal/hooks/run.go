package hooks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/textcut"
)

// Input is the event a hook reads on its standard input: one JSON object.
// Long texts are cut to MaxFieldBytes (Truncated then says so).
type Input struct {
	Event     string `json:"event"`
	Hook      string `json:"hook"`
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"`
	Cwd       string `json:"cwd"`
	// Prompt is the user's prompt (user_prompt).
	Prompt string `json:"prompt,omitempty"`
	// Tool is the call (pre_tool, post_tool, approval_requested).
	Tool *Tool `json:"tool,omitempty"`
	// Result is the call's result (post_tool).
	Result *Result `json:"result,omitempty"`
	// ApprovalID names the pending approval (approval_requested).
	ApprovalID string `json:"approval_id,omitempty"`
	// Outcome is how the turn ended (turn_end): completed, failed or
	// cancelled; Code is a failed turn's code.
	Outcome string `json:"outcome,omitempty"`
	Code    string `json:"code,omitempty"`
	// Truncated says a text above was cut to fit.
	Truncated bool `json:"truncated,omitempty"`
}

// Tool is the tool call an event concerns.
type Tool struct {
	Name   string `json:"name"`
	CallID string `json:"call_id"`
	Risk   string `json:"risk,omitempty"`
	// Summary is the call's own account of what it does (the command,
	// URL or path), as an approval shows it.
	Summary string `json:"summary,omitempty"`
	// Arguments are the call's arguments; arguments longer than
	// MaxFieldBytes are left out (ArgumentsBytes still says their size).
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	ArgumentsBytes int             `json:"arguments_bytes"`
}

// Result is a finished call's result.
type Result struct {
	Success   bool   `json:"success"`
	Error     string `json:"error,omitempty"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
}

// bounded returns in with every long text cut to MaxFieldBytes.
func bounded(in Input) Input {
	cut := func(s string) string {
		if len(s) <= MaxFieldBytes {
			return s
		}
		in.Truncated = true
		return textcut.Prefix(s, MaxFieldBytes)
	}
	in.Prompt = cut(in.Prompt)
	if in.Tool != nil {
		t := *in.Tool
		t.Summary = cut(t.Summary)
		t.ArgumentsBytes = len(t.Arguments)
		if len(t.Arguments) > MaxFieldBytes || (len(t.Arguments) > 0 && !json.Valid(t.Arguments)) {
			t.Arguments = nil
			in.Truncated = true
		}
		in.Tool = &t
	}
	if in.Result != nil {
		r := *in.Result
		r.Output = cut(r.Output)
		in.Result = &r
	}
	return in
}

// reply is a hook's optional JSON answer on standard output.
type reply struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Context  string `json:"context"`
	Note     string `json:"note"`
}

// runOne runs one hook with in on its standard input; it returns the run
// and the text the hook added (context or note).
func (r *Runner) runOne(ctx context.Context, h Hook, in Input) (Ran, string) {
	ran := Ran{Hook: h.Name, Event: in.Event}
	started := time.Now()
	fail := func(format string, args ...any) (Ran, string) {
		ran.Outcome, ran.Reason = OutcomeFailed, fmt.Sprintf(format, args...)
		ran.Duration = time.Since(started)
		return ran, ""
	}
	in.Hook = h.Name
	data, err := json.Marshal(bounded(in))
	if err != nil {
		return fail("encode the event: %v", err)
	}
	exe, err := r.lookPath(h.Command[0])
	if err != nil {
		return fail("%v", err)
	}
	stdin, err := inputFile(data)
	if err != nil {
		return fail("%v", err)
	}
	defer stdin.Close()
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	stdout, stderr := proc.NewCapture(MaxReplyBytes), proc.NewTail(StderrTailBytes)
	res, err := proc.Run(ctx, proc.Spec{
		Path: exe, Args: h.Command[1:], Dir: r.opts.Workspace, Env: r.env(h, in), Stdin: stdin,
		Stdout: stdout, Stderr: stderr, Timeout: timeout, Grace: time.Second, Tag: TagKey + "=" + rand.Text(),
		Contain: r.opts.Contain,
	})
	ran.Duration = time.Since(started)
	ran.ExitCode = res.ExitCode
	tail := strings.TrimSpace(stderr.String())
	switch {
	case err != nil:
		return fail("%v", err)
	case res.TimedOut:
		ran.Stderr = tail
		return fail("timed out after %s", timeout)
	case res.Cancelled:
		return fail("cancelled with the turn")
	case res.ExitCode == nil:
		ran.Stderr = tail
		return fail("killed by signal %s", res.Signal)
	case *res.ExitCode == 2:
		return r.exit2(ran, in.Event, tail)
	case *res.ExitCode != 0:
		ran.Stderr = tail
		return fail("exited with status %d", *res.ExitCode)
	}
	return r.interpret(ran, in.Event, stdout)
}

// exit2 is a hook's "no": deny a call, block a prompt, or (post_tool) add
// its standard error as a note; elsewhere it means nothing.
func (r *Runner) exit2(ran Ran, event, stderr string) (Ran, string) {
	reason := textcut.Prefix(stderr, MaxReasonBytes)
	if reason == "" {
		reason = "the hook exited with status 2"
	}
	switch event {
	case PreTool:
		ran.Outcome, ran.Reason = OutcomeDeny, reason
	case UserPrompt:
		ran.Outcome, ran.Reason = OutcomeBlock, reason
	case PostTool:
		ran.Outcome = OutcomeNote
		return ran, textcut.Prefix(stderr, MaxTextBytes)
	default:
		ran.Outcome = OutcomeOK
	}
	return ran, ""
}

// interpret reads the standard output of a hook that exited 0: a JSON
// object is a reply; other text is context (user_prompt) or a note
// (post_tool) and is ignored elsewhere.
func (r *Runner) interpret(ran Ran, event string, stdout *proc.Capture) (Ran, string) {
	ran.Outcome = OutcomeOK
	out := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(out, "{") {
		if out == "" {
			return ran, ""
		}
		switch event {
		case UserPrompt:
			ran.Outcome = OutcomeContext
			return ran, textcut.Prefix(out, MaxTextBytes)
		case PostTool:
			ran.Outcome = OutcomeNote
			return ran, textcut.Prefix(out, MaxTextBytes)
		}
		return ran, ""
	}
	var rep reply
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if stdout.Truncated() || dec.Decode(&rep) != nil {
		ran.Outcome, ran.Reason = OutcomeFailed, fmt.Sprintf("its output starts with { but is not a JSON reply of at most %d bytes with the fields decision, reason, context and note", MaxReplyBytes)
		return ran, ""
	}
	reason := textcut.Prefix(strings.TrimSpace(rep.Reason), MaxReasonBytes)
	switch {
	case rep.Decision == "" || rep.Decision == "allow":
	case rep.Decision == "deny" && event == PreTool:
		ran.Outcome, ran.Reason = OutcomeDeny, orDefault(reason, "denied by the hook")
		return ran, ""
	case (rep.Decision == "block" || rep.Decision == "deny") && event == UserPrompt:
		ran.Outcome, ran.Reason = OutcomeBlock, orDefault(reason, "blocked by the hook")
		return ran, ""
	case rep.Decision == "ask" && event == PreTool:
		ran.Outcome, ran.Reason = OutcomeAsk, orDefault(reason, "the hook asks for an approval")
		return ran, ""
	default:
		ran.Outcome, ran.Reason = OutcomeFailed, fmt.Sprintf("decision %q means nothing for a %s hook", rep.Decision, event)
		return ran, ""
	}
	switch {
	case event == UserPrompt && rep.Context != "":
		ran.Outcome = OutcomeContext
		return ran, textcut.Prefix(rep.Context, MaxTextBytes)
	case event == PostTool && rep.Note != "":
		ran.Outcome = OutcomeNote
		return ran, textcut.Prefix(rep.Note, MaxTextBytes)
	}
	return ran, ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ownVar says k is a variable a hook run sets itself, replacing any of
// the runner's environment.
func ownVar(k string) bool {
	switch k {
	case "SCV_HOOK_EVENT", "SCV_HOOK_NAME", "SCV_SESSION_ID", "SCV_WORKSPACE":
		return true
	}
	return false
}

// env is the hook's environment: the runner's (without the variables of
// ownVar, removed once in New), with the hook's own variables.
func (r *Runner) env(h Hook, in Input) []string {
	env := make([]string, len(r.baseEnv), len(r.baseEnv)+4)
	copy(env, r.baseEnv)
	return append(env, "SCV_HOOK_EVENT="+in.Event, "SCV_HOOK_NAME="+h.Name,
		"SCV_SESSION_ID="+r.opts.SessionID, "SCV_WORKSPACE="+r.opts.Workspace)
}

// lookPath resolves a hook's first word: a path with a slash (relative to
// the workspace), else a name searched in the PATH of the hooks'
// environment.
func (r *Runner) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.opts.Workspace, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("command %s: %v", name, err)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(r.pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %s not found in the PATH of the hooks' environment", name)
}

func executable(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case st.IsDir():
		return errors.New("is a directory")
	case st.Mode()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}
