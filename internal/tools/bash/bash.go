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

// Defaults of the configuration (runtime.md §3).
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

// Result is the JSON output of `bash` (runtime.md §11).
type Result struct {
	// ExitCode is null when the command was killed by a signal.
	ExitCode  *int   `json:"exit_code"`
	TimedOut  bool   `json:"timed_out"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
}

// New returns the `bash` tool.
func New(opts Options) tool.Tool {
	opts = opts.withDefaults()
	maxSecs := int(opts.MaxTimeout / time.Second)
	defSecs := int(opts.DefaultTimeout / time.Second)
	desc := strings.NewReplacer("{{DEFAULT}}", strconv.Itoa(defSecs), "{{MAX}}", strconv.Itoa(maxSecs)).Replace(description)
	adjust := func(s *jsonschema.Schema) {
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
		c := call{command: p.Command, dir: env.Workspace, env: opts.Env, timeout: timeout, limit: env.OutputLimit, progress: env.Progress}
		return tool.Plan{
			Risk:    tool.Process,
			Summary: fmt.Sprintf("%s\n(in %s, timeout %d s)", p.Command, env.Workspace, int(timeout/time.Second)),
			Run:     c.run,
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
	res, err := proc.Run(ctx, proc.Spec{
		Path:    Shell,
		Args:    []string{"-lc", c.command},
		Dir:     c.dir,
		Env:     c.env,
		Stdout:  out,
		Stderr:  out,
		Timeout: c.timeout,
		// Descendants that leave the group with setsid still carry the
		// tag, so they are stopped with it when the command ends.
		Tag: TagKey + "=" + rand.Text(),
	})
	if err != nil {
		return tool.Fail(tool.Failed, "cannot run the command: %v; check that %s exists and the workspace %s is a directory", err, Shell, c.dir)
	}
	r := Result{ExitCode: res.ExitCode, TimedOut: res.TimedOut, Output: capture.String(), Truncated: capture.Truncated()}
	switch {
	case res.Cancelled:
		return tool.JSONResult(false, tool.Cancelled, r, r.Truncated)
	case res.TimedOut:
		return tool.JSONResult(false, tool.Limit, r, r.Truncated)
	case res.ExitCode != nil && *res.ExitCode == 0:
		return tool.JSONResult(true, "", r, r.Truncated)
	default:
		return tool.JSONResult(false, tool.Failed, r, r.Truncated)
	}
}
