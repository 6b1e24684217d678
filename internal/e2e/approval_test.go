package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// TestExecApprovalPolicies runs bash (process risk) then read (read_only)
// through scv exec under each policy (docs/runtime.md, "Approvals and
// risk"), set by flag or config.
func TestExecApprovalPolicies(t *testing.T) {
	tests := []struct {
		name      string
		config    string
		args      []string
		asked     []string // tools whose approval note appears on stderr
		bashRan   bool
		readRan   bool
		notAsking bool
	}{
		{"ask-on-risk with yes", "", []string{"exec", "--yes", "go"}, []string{"bash"}, true, true, false},
		{"ask-always with yes asks for read too", "", []string{"--approval-policy", "ask-always", "exec", "--yes", "go"}, []string{"bash", "read"}, true, true, false},
		{"ask-always without yes denies both", "[tools]\napproval_policy = \"ask-always\"", []string{"exec", "go"}, []string{"bash", "read"}, false, false, false},
		{"deny-on-risk denies without asking, even with yes", "", []string{"--approval-policy", "deny-on-risk", "exec", "--yes", "go"}, nil, false, true, true},
		{"deny-on-risk from the config", "[tools]\napproval_policy = \"deny-on-risk\"", []string{"exec", "--yes", "go"}, nil, false, true, true},
		// The deprecated names still mean what they meant.
		{"never (deprecated) is deny-on-risk", "", []string{"--approval-policy", "never", "exec", "--yes", "go"}, nil, false, true, true},
		{"always (deprecated) in the config is ask-always", "[tools]\napproval_policy = \"always\"", []string{"exec", "go"}, []string{"bash", "read"}, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo bash-ran"}`))
			fm.Script(modeltest.ToolCall("c2", "read", `{"path":"a.txt"}`))
			fm.Script(modeltest.Text("end"))
			in := newInstance(t, providerConfig(fm.URL(), tc.config))
			r := in.run(in.env, "", tc.args...)
			// An answered turn exits 0, or 3 when a call was denied.
			wantCode := 0
			if !tc.bashRan || !tc.readRan {
				wantCode = 3
			}
			if r.code != wantCode || r.stdout != "end\n" {
				t.Fatalf("exit %d (want %d) stdout %q; stderr:\n%s", r.code, wantCode, r.stdout, r.stderr)
			}
			var asked []string
			for _, line := range strings.Split(r.stderr, "\n") {
				if name, ok := strings.CutPrefix(line, "scv: approval for "); ok {
					asked = append(asked, strings.Fields(name)[0])
				}
			}
			if diff := cmp.Diff(tc.asked, asked); diff != "" {
				t.Errorf("approval notes (-want +got):\n%s\nstderr:\n%s", diff, r.stderr)
			}
			reqs := modelRequests(t, fm, 3)
			bash, _ := callOutput(reqs[1], "c1")
			read, _ := callOutput(reqs[2], "c2")
			got := map[string]bool{"bash ran": strings.Contains(bash, "bash-ran"), "read ran": strings.Contains(read, "hello from a.txt"),
				"bash denied": strings.Contains(bash, "denied"), "read denied": strings.Contains(read, "denied")}
			want := map[string]bool{"bash ran": tc.bashRan, "read ran": tc.readRan, "bash denied": !tc.bashRan, "read denied": !tc.readRan}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("what the model was told (-want +got):\n%s\nbash: %q\nread: %q", diff, bash, read)
			}
		})
	}
}

// TestStdioApprovalPerCall: two calls in one response get one approval
// each; approving the first and denying the second runs only the first,
// and the denied one completes with error "denied".
func TestStdioApprovalPerCall(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo first"}`), modeltest.ToolCall("c2", "bash", `{"command":"echo second"}`))
	fm.Script(modeltest.Text("end"))
	in := newInstance(t, providerConfig(fm.URL()))
	c := in.startStdio(in.env)
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "two calls")
	var evs []proto.Event
	for done := false; !done; {
		ev := next(t, c)
		evs = append(evs, ev)
		switch ev := ev.(type) {
		case *proto.ApprovalRequested:
			_ = c.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: ev.ApprovalID, Approved: ev.CallID == "c1"})
		case *proto.TurnCompleted, *proto.TurnFailed:
			done = true
		}
	}
	type step struct{ Type, CallID, Error string }
	var got []step
	for _, ev := range evs {
		switch ev := ev.(type) { // progress is optional
		case *proto.ToolProposed:
			got = append(got, step{ev.EventType(), ev.CallID, ""})
		case *proto.ApprovalRequested:
			got = append(got, step{ev.EventType(), ev.CallID, ""})
		case *proto.ToolStarted:
			got = append(got, step{ev.EventType(), ev.CallID, ""})
		case *proto.ToolCompleted:
			got = append(got, step{ev.EventType(), ev.CallID, ev.Error})
		}
	}
	want := []step{
		{"tool.proposed", "c1", ""}, {"approval.requested", "c1", ""}, {"tool.started", "c1", ""}, {"tool.completed", "c1", ""},
		{"tool.proposed", "c2", ""}, {"approval.requested", "c2", ""}, {"tool.completed", "c2", "denied"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("call events (-want +got):\n%s", diff)
	}
	reqs := modelRequests(t, fm, 2)
	first, _ := callOutput(reqs[1], "c1")
	second, _ := callOutput(reqs[1], "c2")
	if !strings.Contains(first, "first") || !strings.Contains(second, "denied") || strings.Contains(second, "second") {
		t.Errorf("model was told c1=%q c2=%q; want c1's output and c2 denied", first, second)
	}
}

// TestStdioInvalidArgumentsNotAsked: a call whose arguments fail the
// schema fails before any approval is asked.
func TestStdioInvalidArgumentsNotAsked(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":5}`))
	fm.Script(modeltest.Text("end"))
	in := newInstance(t, providerConfig(fm.URL()))
	c := in.startStdio(in.env)
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "bad call")
	evs := until(t, c, proto.EventTurnCompleted)
	completed := &proto.ToolCompleted{}
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *proto.ApprovalRequested, *proto.ToolStarted:
			t.Errorf("%s for a call with invalid arguments", ev.EventType())
		case *proto.ToolCompleted:
			completed = ev
		}
	}
	if completed.Error != "invalid_arguments" || completed.Success {
		t.Errorf("tool.completed = %+v, want success false, error invalid_arguments", completed)
	}
}

// TestStdioCancelDeniesApproval: turn.cancel while an approval is pending
// denies it; the command never runs and the turn ends cancelled.
func TestStdioCancelDeniesApproval(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"touch ran.txt"}`))
	in := newInstance(t, providerConfig(fm.URL()))
	c := in.startStdio(in.env)
	sid := in.startSession(c, proto.SessionStart{}).SessionID
	sendTurn(t, c, sid, "cancel me")
	evs := until(t, c, proto.EventApprovalRequested)
	turnID := evs[0].(*proto.TurnStarted).TurnID
	appr := last[*proto.ApprovalRequested](t, evs)
	if err := c.Send(&proto.TurnCancel{SessionID: sid, TurnID: turnID}); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, proto.EventTurnCancelled)
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *proto.ToolStarted:
			t.Error("tool started after its turn was cancelled")
		case *proto.ToolCompleted:
			if ev.Success {
				t.Errorf("tool.completed = %+v, want a failed call", ev)
			}
		}
	}
	// The approval is gone: resolving it now is approval_not_found.
	_, err := c.Call(t.Context(), &proto.ApprovalResolve{SessionID: sid, ApprovalID: appr.ApprovalID, Approved: true})
	if err == nil || !strings.Contains(err.Error(), proto.ErrApprovalNotFound) {
		t.Errorf("late approval.resolve: %v, want approval_not_found", err)
	}
	if fileExists(in.ws + "/ran.txt") {
		t.Error("the cancelled call's command ran")
	}
	if n := len(fm.Requests()); n != 1 {
		t.Errorf("%d model requests after the cancel, want 1", n)
	}
}

// TestExecGuardedWriteSaysWhy: scv exec notes why a write to .git/config
// is asked (a guarded path, never covered by a grant) under its approval,
// and without --yes the file is left as it was.
func TestExecGuardedWriteSaysWhy(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "write", `{"path":".git/config","content":"[core]\n\tfsmonitor = touch pwned\n","mode":"create"}`))
	fm.Script(modeltest.Text("end"))
	in := newInstance(t, providerConfig(fm.URL(), ""))
	r := in.run(in.env, "", "exec", "go")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (a denied call); stderr:\n%s", r.code, r.stderr)
	}
	want := "scv:   why: `.git/config` is a guarded path, asked every time and never covered by a grant: git's config and hooks run commands"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(in.ws, ".git", "config")); !os.IsNotExist(err) {
		t.Errorf(".git/config was written: %v", err)
	}
}

// TestExecAllowRules: --allow 'bash:echo' and --allow write let matching
// calls run without asking for this run only; a guarded write and a
// command outside the prefix are still asked (and denied without --yes),
// and the files show it.
func TestExecAllowRules(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo allowed-ran"}`),
		modeltest.ToolCall("c2", "write", `{"path":"src/b.txt","content":"b\n","mode":"create"}`),
		modeltest.ToolCall("c3", "write", `{"path":".git/config","content":"[core]\n\tfsmonitor = touch pwned\n","mode":"create"}`),
		modeltest.ToolCall("c4", "bash", `{"command":"touch not-allowed"}`))
	fm.Script(modeltest.Text("end"))
	in := newInstance(t, providerConfig(fm.URL(), ""))
	r := in.run(in.env, "", "exec", "--allow", "bash:echo", "--allow", "write", "go")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (denied calls); stderr:\n%s", r.code, r.stderr)
	}
	var asked []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, "scv: approval for "); ok {
			asked = append(asked, strings.Fields(rest)[0])
		}
	}
	if d := cmp.Diff([]string{"write", "bash"}, asked); d != "" {
		t.Errorf("asked (-want +got):\n%s\nstderr:\n%s", d, r.stderr)
	}
	for _, want := range []string{"scv: running bash (allowed by --allow): echo allowed-ran", "scv:   why: `.git/config` is a guarded path"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(in.ws, "src", "b.txt")); err != nil || string(b) != "b\n" {
		t.Errorf("src/b.txt = %q, %v: the allowed write did not run", b, err)
	}
	for _, absent := range []string{".git/config", "not-allowed"} {
		if _, err := os.Stat(filepath.Join(in.ws, absent)); !os.IsNotExist(err) {
			t.Errorf("%s exists: a call outside the rules ran (%v)", absent, err)
		}
	}
}

// TestExecAllowAndMaxStepsRefused: rules that could run anything and a
// step cap below 1 are usage errors naming what was wrong; --max-steps
// caps the turn.
func TestExecAllowAndMaxStepsRefused(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL(), ""))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow", "bash"}, "a bash rule needs a command prefix"},
		{[]string{"--allow", "bash:bash -c"}, "`bash` is a shell"},
		{[]string{"--allow", "bash:python3"}, "`python3` is an interpreter"},
		{[]string{"--allow", "bash:sudo ./x.sh"}, "raised privileges"},
		{[]string{"--allow", "write:.git/"}, "is guarded"},
		{[]string{"--allow", "write:../x"}, "leaves the workspace"},
		{[]string{"--allow", "read:x"}, "only bash takes a command prefix and write a path"},
		{[]string{"--max-steps", "0"}, "--max-steps 0: give at least 1"},
	} {
		r := in.run(in.env, "", append(append([]string{"exec"}, tc.args...), "go")...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("exec %v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(fm.Requests()); n != 0 {
		t.Errorf("%d model requests for refused runs", n)
	}
	fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo one"}`))
	fm.Script(modeltest.ToolCall("c2", "bash", `{"command":"echo two"}`))
	r := in.run(in.env, "", "exec", "--yes", "--max-steps", "1", "go")
	if r.code != 1 || !strings.Contains(r.stderr, "stopped after 1 model requests without a final answer (--max-steps)") {
		t.Errorf("--max-steps 1: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if n := len(fm.Requests()); n != 1 {
		t.Errorf("%d model requests under --max-steps 1, want 1", n)
	}
}
