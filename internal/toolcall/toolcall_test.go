package toolcall

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scv-agent/scv/internal/approval"
	"github.com/scv-agent/scv/internal/tool"
)

type params struct {
	Text string `json:"text,omitempty"`
}

// testRegistry holds a read_only tool, a process-risk tool, one that
// panics and one whose output ignores the limit; ran counts the runs.
func testRegistry(t *testing.T, ran *int) *tool.Registry {
	t.Helper()
	def := func(name string, risk tool.Risk, run func(p params) tool.Result) tool.Tool {
		return tool.MustDefine(name, name+" tool", nil, func(env tool.Env, p params) (tool.Plan, error) {
			return tool.Plan{Risk: risk, Summary: name + " " + p.Text, Run: func(context.Context) tool.Result {
				*ran++
				return run(p)
			}}, nil
		})
	}
	reg, err := tool.NewRegistry(
		def("look", tool.ReadOnly, func(p params) tool.Result { return tool.Result{Success: true, Output: "saw " + p.Text} }),
		def("exec", tool.Process, func(p params) tool.Result { return tool.Result{Success: true, Output: "ran " + p.Text} }),
		def("boom", tool.ReadOnly, func(params) tool.Result { panic("kaput") }),
		def("flood", tool.ReadOnly, func(params) tool.Result {
			return tool.Result{Success: true, JSON: true, Output: `"` + strings.Repeat("é", 500) + `"`}
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// answering is an approver giving every request the answer a.
func answering(a approval.Answer) approval.Approver {
	return func(context.Context, approval.Request) approval.Answer { return a }
}

func TestRun(t *testing.T) {
	yes, no, because := answering(approval.Answer{Approved: true}), answering(approval.Answer{}), answering(approval.Answer{Reason: "use the staging copy"})
	tests := []struct {
		name     string
		policy   approval.Policy
		approve  approval.Approver
		call     string
		args     string
		want     tool.Result
		wantRuns int
		// asked is the request the approver must see ("" name: none).
		asked approval.Request
	}{
		{name: "read_only runs unasked", policy: approval.AskOnRisk, call: "look", args: `{"text":"a"}`,
			want: tool.Result{Success: true, Output: "saw a"}, wantRuns: 1},
		{name: "approved", policy: approval.AskOnRisk, approve: yes, call: "exec", args: `{"text":"b"}`,
			want: tool.Result{Success: true, Output: "ran b"}, wantRuns: 1,
			asked: approval.Request{CallID: "c1", Name: "exec", Risk: tool.Process, Summary: "exec b", Args: json.RawMessage(`{"text":"b"}`)}},
		{name: "not approved", policy: approval.AskOnRisk, approve: no, call: "exec", args: `{"text":"b"}`,
			want:  tool.Result{Error: tool.Denied, Output: "denied: the user did not approve this exec call"},
			asked: approval.Request{CallID: "c1", Name: "exec", Risk: tool.Process, Summary: "exec b", Args: json.RawMessage(`{"text":"b"}`)}},
		{name: "denied with a reason", policy: approval.AskOnRisk, approve: because, call: "exec", args: `{"text":"b"}`,
			want:  tool.Result{Error: tool.Denied, Output: "denied: the user did not approve this exec call. The user's reason: use the staging copy"},
			asked: approval.Request{CallID: "c1", Name: "exec", Risk: tool.Process, Summary: "exec b", Args: json.RawMessage(`{"text":"b"}`)}},
		{name: "no approver denies", policy: approval.AskAlways, call: "look", args: `{"text":"c"}`,
			want: tool.Result{Error: tool.Denied, Output: "denied: the user did not approve this look call"}},
		{name: "policy never", policy: approval.DenyOnRisk, approve: yes, call: "exec", args: `{"text":"d"}`,
			want: tool.Result{Error: tool.Denied, Output: `denied: the approval policy "deny-on-risk" does not allow exec calls (risk process); do not retry this call`}},
		{name: "unknown tool", policy: approval.AskOnRisk, approve: yes, call: "nope", args: `{}`,
			want: tool.Result{Error: tool.UnknownTool}},
		{name: "invalid arguments", policy: approval.AskOnRisk, approve: yes, call: "look", args: `{"text":3}`,
			want: tool.Result{Error: tool.InvalidArguments}},
		{name: "bounded", policy: approval.AskOnRisk, call: "flood", args: `{}`,
			want: tool.Result{Success: true, Truncated: true}, wantRuns: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, started := 0, 0
			var asked approval.Request
			approve := tt.approve
			if approve != nil {
				approve = func(ctx context.Context, r approval.Request) approval.Answer { asked = r; return tt.approve(ctx, r) }
			}
			res, err := Run(t.Context(), Call{
				Registry: testRegistry(t, &runs), Policy: tt.policy, Approve: approve,
				Env:  tool.Env{Workspace: t.TempDir(), CallID: "c1", OutputLimit: 200},
				Name: tt.call, Args: json.RawMessage(tt.args),
				Started: func(tool.Plan, approval.Answer, bool) { started++ },
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.Error == tool.UnknownTool || tt.want.Error == tool.InvalidArguments || tt.want.Truncated {
				// The registry and the bound word these; their kind and
				// size are what this path decides.
				if res.Error != tt.want.Error || res.Success != tt.want.Success || res.Truncated != tt.want.Truncated || len(res.Output) > 200 {
					t.Errorf("result %+v, want kind %q, success %v, truncated %v, at most 200 bytes", res, tt.want.Error, tt.want.Success, tt.want.Truncated)
				}
			} else if d := cmp.Diff(tt.want, res); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if runs != tt.wantRuns || started != tt.wantRuns {
				t.Errorf("ran %d times, Started %d times; want %d", runs, started, tt.wantRuns)
			}
			if d := cmp.Diff(tt.asked, asked, cmpopts.IgnoreFields(approval.Request{}, "Plan")); d != "" {
				t.Errorf("approval request (-want +got):\n%s", d)
			}
		})
	}
}

// A call whose turn ends while it awaits approval is cancelled, not
// denied; one whose context ended before it could start never runs.
func TestRunCancelled(t *testing.T) {
	runs := 0
	reg := testRegistry(t, &runs)
	ctx, cancel := context.WithCancel(t.Context())
	waiting := func(ctx context.Context, _ approval.Request) approval.Answer {
		cancel()
		<-ctx.Done()
		return approval.Answer{}
	}
	res, err := Run(ctx, Call{Registry: reg, Policy: approval.AskOnRisk, Approve: waiting, Name: "exec", Args: json.RawMessage(`{"text":"x"}`)})
	want := tool.Result{Error: tool.Cancelled, Output: "cancelled: the turn was cancelled while the call awaited approval"}
	if d := cmp.Diff(want, res); d != "" || err != nil {
		t.Errorf("cancelled while awaiting approval (-want +got):\n%s%v", d, err)
	}
	res, err = Run(ctx, Call{Registry: reg, Policy: approval.AskOnRisk, Name: "look", Args: json.RawMessage(`{"text":"x"}`)})
	want = tool.Result{Error: tool.Cancelled, Output: "cancelled before it started"}
	if d := cmp.Diff(want, res); d != "" || err != nil {
		t.Errorf("cancelled before start (-want +got):\n%s%v", d, err)
	}
	if runs != 0 {
		t.Errorf("a cancelled call ran %d times", runs)
	}
}

// A panicking tool is a runtime failure: a failed result naming the tool
// and an error carrying the panic value.
func TestRunRecoversPanic(t *testing.T) {
	runs := 0
	res, err := Run(t.Context(), Call{Registry: testRegistry(t, &runs), Policy: approval.AskOnRisk, Name: "boom", Args: json.RawMessage(`{}`),
		Env: tool.Env{OutputLimit: 4096}})
	if d := cmp.Diff(tool.Result{Error: tool.Failed, Output: "the boom tool crashed"}, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if err == nil || !strings.Contains(err.Error(), "kaput") {
		t.Errorf("err = %v, want the panic value", err)
	}
}

func TestBoundCapsOutput(t *testing.T) {
	res := Bound(tool.Result{Success: true, Output: strings.Repeat("é", 500), JSON: true}, 200)
	if len(res.Output) > 200 || !res.Truncated || res.JSON {
		t.Fatalf("bound = %d bytes, truncated %v, JSON %v", len(res.Output), res.Truncated, res.JSON)
	}
	if !strings.HasSuffix(res.Output, "\n[output cut: 136 of 1000 bytes shown]") {
		t.Errorf("no cut marker: %q", res.Output[len(res.Output)-60:])
	}
	if !json.Valid([]byte(`"` + res.Output[:10] + `"`)) {
		t.Fatal("cut broke UTF-8")
	}
	small := tool.Result{Success: true, Output: "fits", JSON: true}
	if d := cmp.Diff(small, Bound(small, 200)); d != "" {
		t.Errorf("a result within the limit changed:\n%s", d)
	}
	if d := cmp.Diff(small, Bound(small, 0)); d != "" {
		t.Errorf("limit 0 changed a result:\n%s", d)
	}
}

// A check sees the validated plan before the policy: it may deny the call
// (nothing runs, the model sees the reason) or force an approval of a call
// the policy would run unasked (no grant may answer it), but never lets a
// denying policy run a call.
func TestCheck(t *testing.T) {
	var seen []approval.Request
	approve := func(_ context.Context, r approval.Request) approval.Answer {
		seen = append(seen, r)
		return approval.Answer{Approved: true}
	}
	deny := func(context.Context, tool.Plan) Verdict {
		return Verdict{Deny: true, Reason: "hook no-rm denied the call: no rm -rf"}
	}
	ask := func(_ context.Context, p tool.Plan) Verdict {
		return Verdict{Ask: true, AskReason: "hook prod asks: " + p.Summary}
	}
	tests := []struct {
		name   string
		policy approval.Policy
		check  func(context.Context, tool.Plan) Verdict
		call   string
		want   tool.Result
		runs   int
		forced string
	}{
		{"deny stops a read", approval.AskOnRisk, deny, "look", tool.Fail(tool.Denied, "denied: hook no-rm denied the call: no rm -rf; do not retry this call unchanged"), 0, ""},
		{"ask forces an approval of a read", approval.AskOnRisk, ask, "look", tool.Result{Success: true, Output: "saw x"}, 1, "hook prod asks: look x"},
		{"a denying policy still denies", approval.DenyOnRisk, ask, "exec",
			tool.Fail(tool.Denied, `denied: the approval policy "deny-on-risk" does not allow exec calls (risk process); do not retry this call`), 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			ran := 0
			res, err := Run(t.Context(), Call{Registry: testRegistry(t, &ran), Policy: tc.policy, Approve: approve, Check: tc.check,
				Name: tc.call, Args: json.RawMessage(`{"text":"x"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, res); d != "" || ran != tc.runs {
				t.Errorf("result (-want +got):\n%s\nruns %d, want %d", d, ran, tc.runs)
			}
			if tc.forced == "" && len(seen) != 0 || tc.forced != "" && (len(seen) != 1 || seen[0].Forced != tc.forced) {
				t.Errorf("approvals asked: %+v, want forced %q", seen, tc.forced)
			}
		})
	}
}

// TestNestedApproval: a running call's step (tool.Env.Ask) goes through the
// policy and the call's approver under the call's name and id: read_only
// runs unasked, a denying policy refuses without asking, an approver's
// answer decides, and with no approver the step is refused with a reason.
func TestNestedApproval(t *testing.T) {
	yes, no := answering(approval.Answer{Approved: true}), answering(approval.Answer{Reason: "not that file"})
	tests := []struct {
		name    string
		policy  approval.Policy
		approve approval.Approver
		step    tool.Plan
		ok      bool
		why     string
		asked   bool
	}{
		{"read_only unasked", approval.AskOnRisk, no, tool.Plan{Risk: tool.ReadOnly, Summary: "[codex-1] Read a (read)"}, true, "", false},
		{"approved", approval.AskOnRisk, yes, tool.Plan{Risk: tool.Filesystem, Summary: "[codex-1] Edit a (edit)"}, true, "", true},
		{"denied with a reason", approval.AskOnRisk, no, tool.Plan{Risk: tool.Filesystem, Summary: "[codex-1] Edit a (edit)"}, false,
			"denied: the user did not approve this deleg call. The user's reason: not that file", true},
		{"policy denies", approval.DenyOnRisk, yes, tool.Plan{Risk: tool.Process, Summary: "[codex-1] ls (execute)"}, false,
			`denied: the approval policy "deny-on-risk" does not allow deleg calls (risk process); do not retry this call`, false},
		{"no approver", approval.AskOnRisk, nil, tool.Plan{Risk: tool.Network, Summary: "[codex-1] fetch (fetch)"}, false,
			"denied: the user did not approve this deleg call", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []approval.Request
			c := Call{Policy: tt.policy, Env: tool.Env{CallID: "c1"}, Name: "deleg"}
			if tt.approve != nil {
				c.Approve = func(ctx context.Context, r approval.Request) approval.Answer {
					seen = append(seen, r)
					return tt.approve(ctx, r)
				}
			}
			ok, why := c.nested(t.Context(), tt.step)
			if ok != tt.ok || why != tt.why {
				t.Errorf("Ask = %v, %q; want %v, %q", ok, why, tt.ok, tt.why)
			}
			if tt.asked && (len(seen) != 1 || seen[0].CallID != "c1" || seen[0].Name != "deleg" || seen[0].Summary != tt.step.Summary || seen[0].Risk != tt.step.Risk) {
				t.Errorf("approver saw %+v, want one request for the step", seen)
			}
			if !tt.asked && len(seen) != 0 {
				t.Errorf("approver was asked %+v", seen)
			}
		})
	}
}

// TestRunOpensTheNestedDoor: a tool run through Run finds tool.Env.Ask
// set, answered by the call's approver.
func TestRunOpensTheNestedDoor(t *testing.T) {
	var asked []string
	answer := ""
	reg, err := tool.NewRegistry(tool.MustDefine("deleg", "delegates", nil, func(env tool.Env, _ params) (tool.Plan, error) {
		return tool.Plan{Risk: tool.Delegate, Summary: "deleg", Run: func(ctx context.Context) tool.Result {
			if env.Ask == nil {
				return tool.Fail(tool.Failed, "no door")
			}
			ok, _ := env.Ask(ctx, tool.Plan{Risk: tool.Filesystem, Summary: "[codex-1] Edit a (edit)"})
			answer = strconv.FormatBool(ok)
			return tool.Result{Success: true}
		}}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	approve := func(_ context.Context, r approval.Request) approval.Answer {
		asked = append(asked, r.Summary)
		return approval.Answer{Approved: r.Summary == "deleg"}
	}
	res, err := Run(t.Context(), Call{Registry: reg, Policy: approval.AskOnRisk, Approve: approve, Env: tool.Env{CallID: "c1"}, Name: "deleg", Args: json.RawMessage(`{}`)})
	if err != nil || !res.Success {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if d := cmp.Diff([]string{"deleg", "[codex-1] Edit a (edit)"}, asked); d != "" || answer != "false" {
		t.Errorf("asked (-want +got):\n%s\nanswer %s, want false", d, answer)
	}
}

// The unattended door (a background job's steps): the policy alone
// decides, and a step it would ask a person about is denied, saying why.
func TestUnattendedApproval(t *testing.T) {
	tests := []struct {
		policy approval.Policy
		risk   tool.Risk
		ok     bool
		why    string
	}{
		{approval.AskOnRisk, tool.ReadOnly, true, ""},
		{approval.AskOnRisk, tool.Filesystem, false, `denied: the approval policy "ask-on-risk" asks a person about filesystem steps, and no one can be asked while the call runs as a background job`},
		{approval.DenyOnRisk, tool.Process, false, `denied: the approval policy "deny-on-risk" does not allow process steps`},
		{approval.AskAlways, tool.ReadOnly, false, `denied: the approval policy "ask-always" asks a person about read_only steps, and no one can be asked while the call runs as a background job`},
	}
	for _, tt := range tests {
		asked := false
		c := Call{Policy: tt.policy, Name: "deleg", Approve: func(context.Context, approval.Request) approval.Answer {
			asked = true
			return approval.Answer{Approved: true}
		}}
		ok, why := c.unattended(t.Context(), tool.Plan{Risk: tt.risk, Summary: "[codex-1] step"})
		if ok != tt.ok || why != tt.why || asked {
			t.Errorf("%s/%s: AskAlone = %v, %q (approver asked: %v); want %v, %q", tt.policy, tt.risk, ok, why, asked, tt.ok, tt.why)
		}
	}
}
