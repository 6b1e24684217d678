package bash

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

var testEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "FOO=bar baz"}

func newRegistry(t *testing.T, opts Options) *tool.Registry {
	t.Helper()
	if opts.Env == nil {
		opts.Env = testEnv
	}
	r, err := tool.NewRegistry(New(opts))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func callEnv(t *testing.T) tool.Env {
	t.Helper()
	ws := testutil.TempDir(t)
	return tool.Env{Workspace: ws, SessionID: "s", CallID: "c", OutputLimit: 65536}
}

// plan prepares a call and fails the test if it is refused.
func plan(t *testing.T, r *tool.Registry, env tool.Env, args string) tool.Plan {
	t.Helper()
	p, res, ok := r.Prepare(env, "bash", json.RawMessage(args))
	if !ok {
		t.Fatalf("Prepare(%s) refused: %+v", args, res)
	}
	return p
}

func args(command string, timeout ...int) string {
	m := map[string]any{"command": command}
	if len(timeout) > 0 {
		m["timeout_seconds"] = timeout[0]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// decoded is a tool result with its JSON output decoded, for cmp.Diff.
type decoded struct {
	Success   bool
	Error     tool.ErrorKind
	JSON      bool
	Truncated bool
	Out       Result
}

func decode(t *testing.T, r tool.Result) decoded {
	t.Helper()
	d := decoded{Success: r.Success, Error: r.Error, JSON: r.JSON, Truncated: r.Truncated}
	if err := json.Unmarshal([]byte(r.Output), &d.Out); err != nil {
		t.Fatalf("output %q is not the result object: %v", r.Output, err)
	}
	// The wire form must carry exit_code even when it is null.
	var raw map[string]json.RawMessage
	_ = json.Unmarshal([]byte(r.Output), &raw)
	for _, k := range []string{"exit_code", "timed_out", "output", "truncated"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("output %s lacks %q", r.Output, k)
		}
	}
	return d
}

func intp(i int) *int { return &i }

func TestSchema(t *testing.T) {
	tl := New(Options{DefaultTimeout: 600 * time.Second, MaxTimeout: 14400 * time.Second})
	var s struct {
		Type       string   `json:"type"`
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type    any      `json:"type"`
			Minimum *float64 `json:"minimum"`
			Maximum *float64 `json:"maximum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tl.Schema(), &s); err != nil {
		t.Fatal(err)
	}
	ts := s.Properties["timeout_seconds"]
	got := []any{s.Type, s.Required, ts.Minimum, ts.Maximum}
	one, max := 1.0, 14400.0
	if diff := cmp.Diff([]any{"object", []string{"command"}, &one, &max}, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s\n%s", diff, tl.Schema())
	}
	for _, want := range []string{"/bin/bash -lc", "600 seconds", "14400 seconds", "/dev/null", `"exit_code"`} {
		if !strings.Contains(tl.Description(), want) {
			t.Errorf("description lacks %q:\n%s", want, tl.Description())
		}
	}
}

// TestRefusedBeforeApproval: bad input never reaches a plan, so no approval
// is asked and nothing runs.
func TestRefusedBeforeApproval(t *testing.T) {
	r := newRegistry(t, Options{MaxTimeout: 14400 * time.Second})
	tests := []struct {
		args string
		want tool.Result
	}{
		{args("make", 20000), tool.Result{Error: tool.InvalidArguments, Output: "invalid arguments: `timeout_seconds` is 20000, above the maximum 14400"}},
		{args("make", 0), tool.Result{Error: tool.InvalidArguments, Output: "invalid arguments: `timeout_seconds` is 0, below the minimum 1"}},
		{`{}`, tool.Result{Error: tool.InvalidArguments, Output: "invalid arguments: missing required field `command`"}},
		{args("  \n"), tool.Result{Error: tool.InvalidArguments, Output: "`command` is empty; give the shell command to run"}},
		{`{"command":"ls","cwd":"/"}`, tool.Result{Error: tool.InvalidArguments, Output: "invalid arguments: unknown field `cwd`"}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, res, ok := r.Prepare(callEnv(t), "bash", json.RawMessage(tt.args))
			if ok {
				t.Fatal("Prepare accepted the call")
			}
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanRiskAndSummary(t *testing.T) {
	r := newRegistry(t, Options{DefaultTimeout: 600 * time.Second, MaxTimeout: 14400 * time.Second})
	env := callEnv(t)
	tests := []struct {
		args, summary string
	}{
		{args("cargo test --workspace"), "cargo test --workspace\n(in " + env.Workspace + ", timeout 600 s, not sandboxed)"},
		{args("make -j2 &&\n  make check", 900), "make -j2 &&\n  make check\n(in " + env.Workspace + ", timeout 900 s, not sandboxed)"},
		{args("sleep 1", 14400), "sleep 1\n(in " + env.Workspace + ", timeout 14400 s, not sandboxed)"},
	}
	for _, tt := range tests {
		p := plan(t, r, env, tt.args)
		if diff := cmp.Diff([]any{tool.Process, tt.summary}, []any{p.Risk, p.Summary}); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
		// The command is what a session grant's prefix is matched against.
		var a struct{ Command string }
		_ = json.Unmarshal([]byte(tt.args), &a)
		if p.Command != a.Command || p.NoGrant {
			t.Errorf("plan command %q (no grant %v), want %q", p.Command, p.NoGrant, a.Command)
		}
	}
}

func TestRun(t *testing.T) {
	r := newRegistry(t, Options{})
	tests := []struct {
		name, command string
		want          decoded
	}{
		{"success", "echo hi", decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "hi\n"}}},
		{"non-zero exit fails with the object", "echo oops >&2; exit 3", decoded{Error: tool.Failed, JSON: true, Out: Result{ExitCode: intp(3), Output: "oops\n"}}},
		{"signal death has a null exit code", "echo bye; kill -KILL $$", decoded{Error: tool.Failed, JSON: true, Out: Result{Output: "bye\n"}}},
		{"stdout and stderr combined in order", "echo a; echo b >&2; echo c", decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "a\nb\nc\n"}}},
		{"stdin is /dev/null", "cat; readlink /proc/self/fd/0", decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "/dev/null\n"}}},
		{"environment from Options", `echo "$FOO"`, decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "bar baz\n"}}},
		{"login shell", "shopt -q login_shell && echo login", decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "login\n"}}},
		{"own process group", `read -r -a f < /proc/$$/stat; [ "${f[4]}" = "$$" ] && echo leader`, decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "leader\n"}}},
		{"bash syntax", "a=(x y); echo ${#a[@]} $((2**10))", decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "2 1024\n"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := plan(t, r, callEnv(t), args(tt.command)).Run(t.Context())
			if diff := cmp.Diff(tt.want, decode(t, res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunsInWorkspace(t *testing.T) {
	env := callEnv(t)
	if err := os.WriteFile(filepath.Join(env.Workspace, "marker.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := plan(t, newRegistry(t, Options{}), env, args("pwd -P; ls")).Run(t.Context())
	want := decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: env.Workspace + "\nmarker.txt\n"}}
	if diff := cmp.Diff(want, decode(t, res)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestMissingWorkspaceFails(t *testing.T) {
	env := callEnv(t)
	env.Workspace = filepath.Join(env.Workspace, "gone")
	res := plan(t, newRegistry(t, Options{}), env, args("true")).Run(t.Context())
	if res.Success || res.Error != tool.Failed || !strings.Contains(res.Output, "gone") {
		t.Errorf("result = %+v, want a failure naming the workspace", res)
	}
}

func TestTruncation(t *testing.T) {
	env := callEnv(t)
	env.OutputLimit = 1000
	res := plan(t, newRegistry(t, Options{}), env, args("seq 1 100000")).Run(t.Context())
	d := decode(t, res)
	out := d.Out.Output
	if !d.Success || !d.Truncated || !d.Out.Truncated {
		t.Errorf("result %+v, want success with truncated set in the result and the object", d)
	}
	if len(out) > 1000 || !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "99999\n100000\n") {
		t.Errorf("output (%d bytes) does not keep head and tail within 1000 bytes: %q", len(out), out)
	}
	total := 0
	for i := 1; i <= 100000; i++ {
		total += len(strconv.Itoa(i)) + 1
	}
	head, rest, ok := strings.Cut(out, "\n[… ")
	count, tail, ok2 := strings.Cut(rest, " bytes cut …]\n")
	if n, err := strconv.Atoi(count); !ok || !ok2 || err != nil || n != total-len(head)-len(tail) {
		t.Errorf("marker %q does not name the %d bytes left out", count, total-len(head)-len(tail))
	}
}

// TestNotTruncatedAtTheLimit: the limit applies to the encoded result; a
// result of exactly the limit is whole, one byte less cuts it.
func TestNotTruncatedAtTheLimit(t *testing.T) {
	env := callEnv(t)
	whole, _ := tool.EncodeJSON(Result{ExitCode: intp(0), Output: "0123456789"})
	env.OutputLimit = len(whole)
	res := plan(t, newRegistry(t, Options{}), env, args("printf 0123456789")).Run(t.Context())
	want := decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "0123456789"}}
	if diff := cmp.Diff(want, decode(t, res)); diff != "" || res.Output != whole {
		t.Errorf("result (-want +got):\n%s\noutput %q, want %q", diff, res.Output, whole)
	}
	env.OutputLimit = len(whole) - 1
	res = plan(t, newRegistry(t, Options{}), env, args("printf 0123456789")).Run(t.Context())
	if len(res.Output) > env.OutputLimit || !res.Truncated {
		t.Errorf("at limit-1: %d bytes, truncated %v: %q", len(res.Output), res.Truncated, res.Output)
	}
}

func TestTimeoutKillsEverything(t *testing.T) {
	env := callEnv(t)
	pidfile := filepath.Join(env.Workspace, "pid")
	tests := []struct {
		name string
		opts Options
		args string
	}{
		{"explicit timeout", Options{}, args("sleep 600 & echo $! > pid; echo started; wait", 1)},
		{"default timeout", Options{DefaultTimeout: time.Second}, args("sleep 600 & echo $! > pid; echo started; wait")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(pidfile)
			res := plan(t, newRegistry(t, tt.opts), env, tt.args).Run(t.Context())
			want := decoded{Error: tool.Limit, JSON: true, Out: Result{TimedOut: true, Output: "started\n"}}
			if diff := cmp.Diff(want, decode(t, res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if pid := testutil.WaitPID(t, pidfile, 10*time.Second); testutil.Running(pid) {
				t.Errorf("background sleep %d alive after the timeout", pid)
			}
		})
	}
}

func TestCancelled(t *testing.T) {
	env := callEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := plan(t, newRegistry(t, Options{}), env, args("trap '' TERM; sleep 600 & echo $! > pid; echo started; wait"))
	done := make(chan tool.Result, 1)
	go func() { done <- p.Run(ctx) }()
	pid := testutil.WaitPID(t, filepath.Join(env.Workspace, "pid"), 10*time.Second)
	cancel()
	var res tool.Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	want := decoded{Error: tool.Cancelled, JSON: true, Out: Result{Output: "started\n"}}
	if diff := cmp.Diff(want, decode(t, res)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if testutil.Running(pid) {
		t.Errorf("TERM-ignoring sleep %d alive after cancellation", pid)
	}
}

// TestBackgroundChild is `sleep 600 & echo started` (a background child
// must not keep a call alive): it returns
// within about 2 s and leaves no sleep alive.
func TestBackgroundChild(t *testing.T) {
	env := callEnv(t)
	start := time.Now()
	res := plan(t, newRegistry(t, Options{}), env, args("sleep 600 & echo $! > pid; echo started")).Run(t.Context())
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("took %v, want about 2 s at most", took)
	}
	wantStartedChildGone(t, env, res, "background sleep")
}

// wantStartedChildGone checks a call that started a child (its pid in the
// workspace's file pid) and echoed started: it succeeded, and the child
// is gone.
func wantStartedChildGone(t *testing.T, env tool.Env, res tool.Result, child string) {
	t.Helper()
	want := decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: "started\n"}}
	if diff := cmp.Diff(want, decode(t, res)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if pid := testutil.WaitPID(t, filepath.Join(env.Workspace, "pid"), 10*time.Second); testutil.Running(pid) {
		t.Errorf("%s %d alive after the call", child, pid)
	}
}

// TestSetsidDescendantStopped: a descendant that left the group with setsid
// (and the pipe) is still stopped when the command ends.
func TestSetsidDescendantStopped(t *testing.T) {
	env := callEnv(t)
	res := plan(t, newRegistry(t, Options{}), env, args("setsid sleep 600 >/dev/null 2>&1 & echo $! > pid; echo started")).Run(t.Context())
	wantStartedChildGone(t, env, res, "setsid sleep")
}

func TestProgress(t *testing.T) {
	env := callEnv(t)
	var mu sync.Mutex
	var lines []string
	var at []time.Time
	env.Progress = func(s string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, s)
		at = append(at, time.Now())
	}
	res := plan(t, newRegistry(t, Options{}), env, args("for i in 1 2 3; do echo step $i; sleep 0.8; done; printf '10%%\\r20%%\\r'")).Run(t.Context())
	if !res.Success {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"step 1", "step 2", "step 3", "20%"}, lines); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
	for i := 1; i < len(at); i++ {
		if d := at[i].Sub(at[i-1]); d < progressEvery {
			t.Errorf("progress lines %d and %d only %v apart", i-1, i, d)
		}
	}
}

func TestLastLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"\n\n", ""},
		{"one\ntwo\n", "two"},
		{"one\ntwo", "two"},
		{"one\n  \n", "one"},
		{"10%\r20%\r", "20%"},
		{"  padded  \n", "padded"},
		{strings.Repeat("é", 150), strings.Repeat("é", 150)},
		{strings.Repeat("é", 600), strings.Repeat("é", 512)}, // progressMax bytes, whole characters
	}
	for _, tt := range tests {
		if got := lastLine([]byte(tt.in)); got != tt.want {
			t.Errorf("lastLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestOutputFlood prints 100 MB through the tool and checks that the memory
// allocated meanwhile stays far below that.
func TestOutputFlood(t *testing.T) {
	env := callEnv(t)
	p := plan(t, newRegistry(t, Options{}), env, args("echo first; head -c 100000000 /dev/zero | tr '\\0' x; echo; echo last"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := p.Run(t.Context())
	runtime.ReadMemStats(&after)
	d := decode(t, res)
	if !d.Success || !d.Truncated || !d.Out.Truncated || len(d.Out.Output) > env.OutputLimit {
		t.Errorf("result success=%v truncated=%v/%v len=%d", d.Success, d.Truncated, d.Out.Truncated, len(d.Out.Output))
	}
	if out := d.Out.Output; !strings.HasPrefix(out, "first\nxxx") || !strings.HasSuffix(out, "xxx\nlast\n") {
		t.Errorf("output does not keep head and tail")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("allocated %d bytes for 100 MB of output; memory is not bounded", alloc)
	}
}

// TestThousandCalls: 1,000 sequential calls leave no zombie child and no
// open descriptor behind.
func TestThousandCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 processes")
	}
	r := newRegistry(t, Options{})
	env := callEnv(t)
	fds := testutil.OpenFDs(t)
	for i := range 1000 {
		command := "echo $$"
		if i%100 == 0 {
			command = "sleep 600 & echo $$"
		}
		if res := plan(t, r, env, args(command)).Run(t.Context()); !res.Success {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	if z := zombieChildren(t); len(z) != 0 {
		t.Errorf("zombie children left: %v", z)
	}
	if after := testutil.OpenFDs(t); after != fds {
		t.Errorf("open descriptors %d before, %d after 1,000 calls", fds, after)
	}
}

// zombieChildren lists this process's children that exited unreaped.
func zombieChildren(t *testing.T) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[0] == "Z" && fields[1] == self {
			out = append(out, f)
		}
	}
	return out
}

// TestMain lets the test binary be the sandbox helper, as SCV's binary is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		os.Exit(sandbox.Main(os.Args[2:], os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// The login shell is the default; NoLogin (tools.bash_login = false) runs
// a plain `bash -c` and says so in the description and the schema.
func TestLoginShellOption(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		out, inv string
	}{
		{"default", Options{}, "login\n", "/bin/bash -lc"},
		{"no login", Options{NoLogin: true}, "plain\n", "/bin/bash -c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, tc.opts)
			res := plan(t, r, callEnv(t), args("shopt -q login_shell && echo login || echo plain")).Run(t.Context())
			want := decoded{Success: true, JSON: true, Out: Result{ExitCode: intp(0), Output: tc.out}}
			if diff := cmp.Diff(want, decode(t, res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			tl := New(tc.opts)
			if !strings.Contains(tl.Description(), "`"+tc.inv+"`") || !strings.Contains(string(tl.Schema()), "run with "+tc.inv+" in the workspace") {
				t.Errorf("description or schema do not name %q:\n%s\n%s", tc.inv, tl.Description(), tl.Schema())
			}
		})
	}
}
