// Package bash is the `bash` tool: one command under `/bin/bash -lc` in the
// workspace, run through internal/proc (own process group, deadline KILL,
// TERM → grace → KILL on cancellation, bounded draining) with its combined
// output bounded to the call's output limit.
package bash

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/textcut"
	"github.com/scv-agent/scv/internal/tool"
)

//go:embed bash.md
var description string

// Shell is the interpreter every command runs under.
const Shell = "/bin/bash"

// TagKey is the environment variable that marks every process of one call
// (with a random value per call), so descendants that left the process group
// are found and stopped when the command ends.
const TagKey = "SCV_BASH_CALL"

// Defaults of the [tools] keys (docs/configuration.md).
const (
	DefaultTimeout     = 600 * time.Second
	DefaultMaxTimeout  = 14400 * time.Second
	DefaultOutputLimit = 65536
)

// Options configure the tool.
type Options struct {
	// DefaultTimeout is tools.command_timeout_seconds: the timeout of a call
	// that names none. Zero means DefaultTimeout.
	DefaultTimeout time.Duration
	// MaxTimeout is tools.max_timeout_seconds: the largest timeout a call
	// may ask for, advertised as the schema's maximum. Zero means
	// DefaultMaxTimeout.
	MaxTimeout time.Duration
	// Env is the complete environment of the shell (inherited from the
	// server); nil gives the shell an empty one.
	Env []string
	// Recorder, when set, records every running call so that, should this
	// process die during it, the next SCV start stops what it left. It is
	// not used when Contain's scopes outlive this process (cgroup leaves):
	// the next start stops a dead process's leaves without a record.
	Recorder Recorder
	// NoLogin runs commands under `bash -c` instead of the login shell
	// `bash -lc` (tools.bash_login = false), for users whose profile is
	// slow; the zero value keeps the login shell.
	NoLogin bool
	// Contain, when set, holds every process of a call in one scope (a
	// cgroup leaf, or the orphans a subreaper adopts) stopped at its end.
	Contain *proc.Containment
	// Sandbox confines every command when its mode is on (sandbox.Wrap).
	Sandbox sandbox.Config
}

// shellFlag is the flag bash runs a command with.
func (o Options) shellFlag() string {
	if o.NoLogin {
		return "-c"
	}
	return "-lc"
}

// Recorder keeps a record of each call while it runs (delegation.Tracker
// implements it). BeginCall is called before the command starts; started
// gets the leader's PID, done is called once the call's processes have
// been stopped.
type Recorder interface {
	BeginCall(tag, session, callID string) (started func(pid int), done func(), err error)
}

func (o Options) withDefaults() Options {
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	o.DefaultTimeout = min(o.DefaultTimeout, o.MaxTimeout)
	return o
}

// Params is the input of `bash`.
type Params struct {
	Command        string `json:"command" jsonschema:"the shell command, run with /bin/bash -lc in the workspace"`
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty" jsonschema:"seconds before the command is killed (default tools.command_timeout_seconds)"`
}

// Result is the JSON output of `bash` (docs/runtime.md, "Results of the file
// and shell tools").
type Result struct {
	// ExitCode is null when the command was killed by a signal.
	ExitCode  *int   `json:"exit_code"`
	TimedOut  bool   `json:"timed_out"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
	// Sandbox, on a failed sandboxed command whose output shows a refusal,
	// says what the sandbox blocked ("blocked by the sandbox: …").
	Sandbox string `json:"sandbox,omitempty"`
}

// New returns the `bash` tool.
func New(opts Options) tool.Tool {
	opts = opts.withDefaults()
	maxSecs := int(opts.MaxTimeout / time.Second)
	defSecs := int(opts.DefaultTimeout / time.Second)
	invocation, kind := Shell+" -lc", "a non-interactive login shell"
	if opts.NoLogin {
		invocation, kind = Shell+" -c", "a non-interactive shell that does not read the login profile"
	}
	desc := strings.NewReplacer("{{DEFAULT}}", strconv.Itoa(defSecs), "{{MAX}}", strconv.Itoa(maxSecs),
		"{{INVOCATION}}", invocation, "{{KIND}}", kind).Replace(description)
	if sb := opts.Sandbox; sb.On() {
		desc += sandboxNote(sb)
	}
	adjust := func(s *jsonschema.Schema) {
		s.Properties["command"].Description = "the shell command, run with " + invocation + " in the workspace"
		lo, hi := 1.0, float64(maxSecs)
		ts := s.Properties["timeout_seconds"]
		ts.Minimum, ts.Maximum = &lo, &hi
		ts.Description = fmt.Sprintf("seconds before the command is killed; default %d, at most %d (tools.max_timeout_seconds)", defSecs, maxSecs)
	}
	t := tool.MustDefine("bash", desc, adjust, func(env tool.Env, p Params) (tool.Plan, error) {
		if strings.TrimSpace(p.Command) == "" {
			return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "`command` is empty; give the shell command to run")
		}
		timeout := opts.DefaultTimeout
		if p.TimeoutSeconds != nil {
			// The schema has already refused values outside 1…maxSecs.
			timeout = time.Duration(*p.TimeoutSeconds) * time.Second
		}
		c := call{command: p.Command, dir: env.Workspace, env: opts.Env, timeout: timeout, limit: env.OutputLimit, progress: env.Progress,
			recorder: opts.Recorder, session: env.SessionID, callID: env.CallID, flag: opts.shellFlag(), contain: opts.Contain,
			sandbox: opts.Sandbox}
		return tool.Plan{
			Risk:     tool.Process,
			Summary:  fmt.Sprintf("%s\n(in %s, timeout %d s, %s)", p.Command, env.Workspace, int(timeout/time.Second), opts.Sandbox.Summary()),
			Command:  p.Command,
			Confined: opts.Sandbox.On() && !opts.Sandbox.Network,
			Run:      c.run,
		}, nil
	})
	// Every call runs a process, whatever its command.
	return tool.WithRiskClass(t, string(tool.Process))
}

// call is one validated command, ready to run.
type call struct {
	command  string
	dir      string
	env      []string
	timeout  time.Duration
	limit    int
	progress func(string)

	recorder        Recorder
	session, callID string
	flag            string // -lc or -c
	contain         *proc.Containment
	sandbox         sandbox.Config
}

func (c call) run(ctx context.Context) tool.Result {
	limit := c.limit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	capture := proc.NewCapture(limit)
	var out io.Writer = capture
	if c.progress != nil {
		out = &progressWriter{w: capture, tail: proc.NewTail(progressTail), send: c.progress}
	}
	// The sandbox only confines the thread the shell is started from
	// (proc.Spec.Confine), so the group, deadline and tag below apply as
	// they do unsandboxed.
	cmd, err := sandbox.Wrap(c.sandbox, c.dir, Shell, []string{c.flag, c.command}, c.env)
	if err != nil {
		return tool.Fail(tool.Failed, "cannot run the command: %v", err)
	}
	defer cmd.Close()
	spec := proc.Spec{
		Path:    cmd.Path,
		Args:    cmd.Args,
		Dir:     c.dir,
		Env:     cmd.Env,
		Stdout:  out,
		Stderr:  out,
		Timeout: c.timeout,
		// Descendants that leave the group with setsid still carry the
		// tag, so they are stopped with it when the command ends.
		Tag:     TagKey + "=" + rand.Text(),
		Contain: c.contain,
		Confine: cmd.Confine,
	}
	if c.recorder != nil && !c.contain.Outlives() {
		// Recorded before the start, so no process of the call exists
		// unrecorded; a call that cannot be recorded does not run. A
		// cgroup leaf needs no record: the next start finds it.
		started, done, err := c.recorder.BeginCall(spec.Tag, c.session, c.callID)
		if err != nil {
			return tool.Fail(tool.Failed, "cannot record the call before running it: %v; check that the SCV home is writable", err)
		}
		defer done()
		spec.OnStart = started
	}
	res, err := proc.Run(ctx, spec)
	if err != nil {
		return tool.Fail(tool.Failed, "cannot run the command: %v; check that %s exists and the workspace %s is a directory", err, Shell, c.dir)
	}
	r := Result{ExitCode: res.ExitCode, TimedOut: res.TimedOut}
	if c.sandbox.On() && !res.Cancelled && !res.TimedOut && (res.ExitCode == nil || *res.ExitCode != 0) {
		r.Sandbox = sandbox.Explain(c.sandbox, c.dir, capture.String())
	}
	switch {
	case res.Cancelled:
		return encode(false, tool.Cancelled, r, capture, limit)
	case res.TimedOut:
		return encode(false, tool.Limit, r, capture, limit)
	case res.ExitCode != nil && *res.ExitCode == 0:
		return encode(true, "", r, capture, limit)
	default:
		return encode(false, tool.Failed, r, capture, limit)
	}
}

// encode fills r.Output from the capture so that the encoded result fits
// limit bytes: the whole output when its JSON fits, else its beginning
// and its end around a marker naming the bytes left out, each side sized
// by its encoded length (a control byte takes six bytes in JSON), so the
// end of the output — usually where the error or the summary is — always
// reaches the model.
func encode(success bool, kind tool.ErrorKind, r Result, c *proc.Capture, limit int) tool.Result {
	head, tail, total := c.Parts()
	r.Truncated = false // "false" is the longer value: the budget holds either way
	fixed, err := tool.EncodeJSON(r)
	if err != nil {
		return tool.Fail(tool.Failed, "encode result: %v", err)
	}
	budget := limit - len(fixed)
	whole := total == int64(len(head)+len(tail))
	if whole {
		out := string(head) + string(tail)
		if tool.JSONLen(out) <= budget {
			r.Output = out
			return tool.JSONWithin(success, kind, r, false, limit)
		}
		head, tail = []byte(out), []byte(out)
	}
	// The marker's length is reserved for the largest count it can show.
	room := budget - tool.JSONLen(tool.CutMarker(total))
	if room < 2 {
		return tool.JSONWithin(success, kind, r, true, limit)
	}
	// Both sides are cut on character boundaries. When the output was
	// whole, head and tail are the same text, and since the two parts
	// together encode to less than the whole they cannot overlap.
	h := tool.FitJSON(string(textcut.TrimEnd(head)), room/2)
	t := tool.FitJSONSuffix(string(textcut.TrimStart(tail)), room-tool.JSONLen(h))
	cut := total - int64(len(h)+len(t))
	r.Output, r.Truncated = h+tool.CutMarker(cut)+t, true
	return tool.JSONWithin(success, kind, r, true, limit)
}

// sandboxNote tells the model what the sandbox allows, so that a refusal
// reads as a boundary rather than a bug to work around.
func sandboxNote(sb sandbox.Config) string {
	var b strings.Builder
	b.WriteString("\n\nCommands run in an OS sandbox (" + sb.Summary()[len("sandboxed: "):] + "): ")
	if sb.Mode == sandbox.ModeReadOnly {
		b.WriteString("nothing can be written except under $TMPDIR (removed after the command)")
	} else {
		b.WriteString("files can be written only in the workspace")
		if len(sb.WritableRoots) > 0 {
			b.WriteString(", " + strings.Join(sb.WritableRoots, ", "))
		}
		b.WriteString(" and $TMPDIR (a per-command directory, removed after it)")
	}
	b.WriteString("; keys and credentials (such as ~/.ssh) cannot be read")
	if !sb.Network {
		b.WriteString("; there is no network, loopback included")
	}
	b.WriteString(". A command the sandbox refused has a `sandbox` field saying what was blocked: do not try to get around it; tell the user what needs to change instead.")
	return b.String()
}
