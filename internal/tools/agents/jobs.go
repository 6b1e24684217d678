package agents

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/delegation/jobs"
	"github.com/scv-agent/scv/internal/tool"
)

// Background jobs: an agent_* call with `background: true` is approved as
// any other call, then runs as a job of the session (internal/delegation/jobs)
// and returns at once; agent_status, agent_wait and agent_cancel follow
// the session's jobs.

var (
	//go:embed agent_status.md
	statusDescription string
	//go:embed agent_wait.md
	waitDescription string
	//go:embed agent_cancel.md
	cancelDescription string
	//go:embed agent_background.md
	backgroundDescription string
)

// backgroundNote is what an agent tool's description says of `background`
// where jobs exist.
func backgroundNote(opts Options) string {
	if opts.Jobs == nil {
		return ""
	}
	return strings.TrimRight(backgroundDescription, "\n")
}

// DefaultWaitSeconds is agent_wait's wait when the call gives none.
const DefaultWaitSeconds = 600

// cancelWait bounds how long agent_cancel waits for the job to stop (the
// group's TERM → KILL grace is 2 s).
const cancelWait = 10 * time.Second

// jobFieldsBytes is the room a job's own fields take beside its result.
const jobFieldsBytes = 512

// Started is the result of a background call.
type Started struct {
	Job        string `json:"job"`
	Agent      string `json:"agent"`
	Status     string `json:"status"`
	Background bool   `json:"background"`
}

// background turns plan into a background call when asked: refused
// before any approval when jobs are unavailable or the session is at
// agent.max_background, and run as a job once approved.
func (t *agentTool) background(env tool.Env, asked bool, rawCwd string, c *call, plan tool.Plan) (tool.Plan, error) {
	if !asked {
		return plan, nil
	}
	tab := t.opts.Jobs
	if tab == nil {
		return tool.Plan{}, tool.Errorf(tool.Unavailable, "background jobs need the SCV daemon (they outlive the turn): call agent_%s without `background` here", t.a.Name)
	}
	if n := running(tab.List(env.SessionID)); n >= tab.Max() {
		return tool.Plan{}, tool.Errorf(tool.Limit, "%v", &jobs.LimitError{Max: tab.Max()})
	}
	plan.Summary += "\nBackground: yes (runs as a job of this session after this call returns; its end is reported to the session)"
	plan.Run = func(context.Context) tool.Result {
		// The job's env: no progress (the call has returned) and no
		// output limit other than the one the tool was built with.
		jenv := env
		jenv.Progress, jenv.Changed, jenv.Todos = nil, nil, nil
		// No one is asked once the call has returned: a step the agent
		// asks permission for (transport = "acp") goes by the policy
		// alone, and the job's report says which were refused and why.
		jenv.Ask = env.AskAlone
		// The result leaves room for the job's own fields around it
		// (agent_status shows both).
		if jenv.OutputLimit <= 0 {
			jenv.OutputLimit = t.opts.OutputLimit
		}
		jenv.OutputLimit = max(jenv.OutputLimit-jobFieldsBytes, jenv.OutputLimit/2)
		info, err := tab.Start(env.SessionID, t.a.Name, func(ctx context.Context, job string) jobs.Outcome {
			jc := *c
			jc.job = job
			run := t.run
			if t.a.ACP {
				run = t.runACP
			}
			return jobOutcome(t.a.Name, run(ctx, jenv, rawCwd, &jc))
		})
		var limit *jobs.LimitError
		switch {
		case errors.As(err, &limit):
			return tool.Fail(tool.Limit, "%v", err)
		case err != nil:
			return tool.Fail(tool.Unavailable, "%v", err)
		}
		return tool.JSONResult(true, "", Started{Job: info.Job, Agent: t.a.Name, Status: jobs.Running, Background: true}, false)
	}
	return plan, nil
}

// adjustBackground offers `background` only where jobs exist.
func (t *agentTool) adjustBackground(s *jsonschema.Schema) {
	if t.opts.Jobs == nil {
		delete(s.Properties, "background")
	}
}

func running(list []jobs.Info) int {
	n := 0
	for _, i := range list {
		if i.Status == jobs.Running {
			n++
		}
	}
	return n
}

// jobOutcome reads a run's result for the job table.
func jobOutcome(agent string, r tool.Result) jobs.Outcome {
	if r.JSON {
		var res Result
		if err := json.Unmarshal([]byte(r.Output), &res); err == nil && res.Status != "" {
			return jobs.Outcome{Status: res.Status, Reply: res.Reply, Result: json.RawMessage(r.Output)}
		}
	}
	// A run refused before its agent started (a directory that moved, a
	// busy conversation) fails with a plain message.
	st := jobs.Failed
	if r.Error == tool.Cancelled {
		st = jobs.Cancelled
	}
	raw, _ := tool.EncodeJSON(Result{Agent: agent, Status: st, Reply: r.Output})
	return jobs.Outcome{Status: st, Reply: r.Output, Result: json.RawMessage(raw)}
}

// JobParams is the input of agent_status.
type JobParams struct {
	Job string `json:"job,omitempty" jsonschema:"the job handle (such as job-1) a background agent_* call returned; omit to list every job of this session"`
}

// WaitParams is the input of agent_wait.
type WaitParams struct {
	Job            string `json:"job" jsonschema:"the job handle (such as job-1) a background agent_* call returned"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
}

// CancelParams is the input of agent_cancel.
type CancelParams struct {
	Job string `json:"job" jsonschema:"the job handle (such as job-1) of the running job to stop"`
}

func jobTools(opts Options) []tool.Tool {
	return []tool.Tool{
		tool.WithRiskClass(statusTool(opts), string(tool.ReadOnly)),
		tool.WithRiskClass(waitTool(opts), string(tool.ReadOnly)),
		tool.WithRiskClass(cancelTool(opts), string(tool.Process)),
	}
}

func statusTool(opts Options) tool.Tool {
	tab := opts.Jobs
	return tool.MustDefine("agent_status", statusDescription, nil, func(env tool.Env, p JobParams) (tool.Plan, error) {
		id, err := jobHandle(p.Job, true)
		if err != nil {
			return tool.Plan{}, err
		}
		summary := "Show the background jobs of this session"
		if id != "" {
			summary = "Show background job " + id
		}
		return tool.Plan{Risk: tool.ReadOnly, Summary: summary, Run: func(context.Context) tool.Result {
			if id == "" {
				// A listing leaves the results out: a list of whole
				// results would not fit; agent_status {job} shows one.
				list := []jobs.Info{}
				for _, i := range tab.List(env.SessionID) {
					i.Result = nil
					list = append(list, i)
				}
				return jobResult(list, env.OutputLimit, opts.OutputLimit)
			}
			info, err := tab.Get(env.SessionID, id)
			if err != nil {
				return tool.Fail(tool.InvalidArguments, "%v", err)
			}
			return jobResult(info, env.OutputLimit, opts.OutputLimit)
		}}, nil
	})
}

func waitTool(opts Options) tool.Tool {
	tab := opts.Jobs
	maxWait := float64(opts.MaxTimeout / time.Second)
	min1 := 1.0
	def := min(DefaultWaitSeconds, int(maxWait))
	return tool.MustDefine("agent_wait", waitDescription, func(s *jsonschema.Schema) {
		ts := s.Properties["timeout_seconds"]
		ts.Minimum, ts.Maximum = &min1, &maxWait
		ts.Description = "seconds to wait at most; default " + strconv.Itoa(def) + ", at most " + strconv.Itoa(int(maxWait))
	}, func(env tool.Env, p WaitParams) (tool.Plan, error) {
		id, err := jobHandle(p.Job, false)
		if err != nil {
			return tool.Plan{}, err
		}
		d := time.Duration(def) * time.Second
		if p.TimeoutSeconds != 0 {
			d = time.Duration(p.TimeoutSeconds) * time.Second
		}
		if d <= 0 || d > opts.MaxTimeout {
			return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "timeout_seconds must be between 1 and %d", int(maxWait))
		}
		return tool.Plan{Risk: tool.ReadOnly, Summary: fmt.Sprintf("Wait up to %ds for background job %s", int(d/time.Second), id), Run: func(ctx context.Context) tool.Result {
			wctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			info, err := tab.Wait(wctx, env.SessionID, id)
			if err != nil {
				return tool.Fail(tool.InvalidArguments, "%v", err)
			}
			if info.Status == jobs.Running && ctx.Err() != nil {
				return tool.Fail(tool.Cancelled, "the wait for %s was interrupted; the job still runs", id)
			}
			return jobResult(info, env.OutputLimit, opts.OutputLimit)
		}}, nil
	})
}

func cancelTool(opts Options) tool.Tool {
	tab := opts.Jobs
	return tool.MustDefine("agent_cancel", cancelDescription, nil, func(env tool.Env, p CancelParams) (tool.Plan, error) {
		id, err := jobHandle(p.Job, false)
		if err != nil {
			return tool.Plan{}, err
		}
		return tool.Plan{Risk: tool.Process, Summary: "Stop background job " + id + " (its agent and every process it started)", Run: func(ctx context.Context) tool.Result {
			if _, err := tab.Cancel(env.SessionID, id, "cancelled by agent_cancel"); err != nil {
				return tool.Fail(tool.InvalidArguments, "%v", err)
			}
			wctx, stop := context.WithTimeout(ctx, cancelWait)
			defer stop()
			info, err := tab.Wait(wctx, env.SessionID, id)
			if err != nil {
				return tool.Fail(tool.InvalidArguments, "%v", err)
			}
			return jobResult(info, env.OutputLimit, opts.OutputLimit)
		}}, nil
	})
}

// jobHandle checks a job argument: job-<n>.
func jobHandle(s string, optional bool) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" && optional {
		return "", nil
	}
	n, ok := strings.CutPrefix(s, "job-")
	if v, err := strconv.Atoi(n); !ok || err != nil || v < 1 || strconv.Itoa(v) != n {
		return "", tool.Errorf(tool.InvalidArguments, "job %q is not a job handle: use the `job` value (such as job-1) a background agent_* call returned", s)
	}
	return s, nil
}

// jobResult encodes a job or a list of jobs within the output limit.
func jobResult(v any, limit, fallback int) tool.Result {
	if limit <= 0 {
		limit = fallback
	}
	return tool.JSONWithin(true, "", v, false, limit)
}
