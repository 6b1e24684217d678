package proc

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scv-agent/scv/internal/testutil"
)

const bash = "/bin/bash"

var ignoreDuration = cmpopts.IgnoreFields(Result{}, "Duration")

func intp(i int) *int { return &i }

// runBash runs script under bash -c with a combined capture.
func runBash(t *testing.T, ctx context.Context, script string, mod func(*Spec)) (Result, *Capture) {
	t.Helper()
	c := NewCapture(64 * 1024)
	s := Spec{Path: bash, Args: []string{"-c", script}, Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, Stdout: c, Stderr: c}
	if mod != nil {
		mod(&s)
	}
	res, err := Run(ctx, s)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res, c
}

func TestRunExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   Result
		out    string
	}{
		{"success", "echo hi", Result{ExitCode: intp(0)}, "hi\n"},
		{"failure", "echo oops >&2; exit 3", Result{ExitCode: intp(3)}, "oops\n"},
		{"255", "exit 255", Result{ExitCode: intp(255)}, ""},
		{"killed by a signal", "echo before; kill -KILL $$", Result{Signal: "killed"}, "before\n"},
		{"terminated", "kill -TERM $$", Result{Signal: "terminated"}, ""},
		{"segfault", "kill -SEGV $$", Result{Signal: "segmentation fault"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, c := runBash(t, t.Context(), tt.script, nil)
			if diff := cmp.Diff(tt.want, res, ignoreDuration); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if got := c.String(); got != tt.out {
				t.Errorf("output = %q, want %q", got, tt.out)
			}
			if res.Duration <= 0 {
				t.Errorf("Duration = %v, want > 0", res.Duration)
			}
		})
	}
}

// stdinFile is an open file holding text, read from its start.
func stdinFile(t *testing.T, text string) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRunEnvironmentDirStdin(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"env is exactly Spec.Env", Spec{Path: "/usr/bin/env", Env: []string{"A=1", "B=two words"}}, "A=1\nB=two words\n"},
		{"tag is appended", Spec{Path: "/usr/bin/env", Env: []string{"A=1"}, Tag: "T=x"}, "A=1\nT=x\n"},
		{"tag replaces an inherited one", Spec{Path: "/usr/bin/env", Env: []string{"T=outer", "A=1"}, Tag: "T=x"}, "A=1\nT=x\n"},
		{"nil env is empty", Spec{Path: "/usr/bin/env"}, ""},
		{"dir", Spec{Path: "/bin/pwd", Args: []string{"-P"}, Dir: dir}, dir + "\n"},
		{"stdin is /dev/null", Spec{Path: "/usr/bin/readlink", Args: []string{"/proc/self/fd/0"}}, "/dev/null\n"},
		{"stdin reads EOF", Spec{Path: "/usr/bin/wc", Args: []string{"-c"}}, "0\n"},
		{"stdin from a file", Spec{Path: "/bin/cat", Stdin: stdinFile(t, "given input\n")}, "given input\n"},
		{"own process group", Spec{Path: bash, Args: []string{"-c", `read -r -a f < /proc/$$/stat; [ "${f[4]}" = "$$" ] && echo leader`}, Env: []string{"PATH=/usr/bin:/bin"}}, "leader\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCapture(4096)
			s := tt.spec
			s.Stdout, s.Stderr = c, c
			res, err := Run(t.Context(), s)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(Result{ExitCode: intp(0)}, res, ignoreDuration); diff != "" {
				t.Errorf("result (-want +got):\n%s\noutput: %s", diff, c)
			}
			if got := c.String(); got != tt.want {
				t.Errorf("output = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunSeparateAndDiscardedStreams(t *testing.T) {
	script := "echo out; echo err >&2"
	out, errc := NewCapture(100), NewCapture(100)
	_, _ = runBash(t, t.Context(), script, func(s *Spec) { s.Stdout, s.Stderr = out, errc })
	if diff := cmp.Diff([]string{"out\n", "err\n"}, []string{out.String(), errc.String()}); diff != "" {
		t.Errorf("separate streams (-want +got):\n%s", diff)
	}
	only := NewCapture(100)
	_, _ = runBash(t, t.Context(), script, func(s *Spec) { s.Stdout, s.Stderr = nil, only })
	if got := only.String(); got != "err\n" {
		t.Errorf("stderr only = %q, want %q", got, "err\n")
	}
}

func TestRunStartFailure(t *testing.T) {
	for _, s := range []Spec{
		{Path: "/nonexistent/binary"},
		{Path: bash, Dir: "/nonexistent/dir"},
	} {
		if _, err := Run(t.Context(), s); err == nil {
			t.Errorf("Run(%+v) = nil error, want a start error", s)
		}
	}
}

func TestRunAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	marker := filepath.Join(t.TempDir(), "ran")
	res, _ := runBash(t, ctx, "touch "+marker, nil)
	if diff := cmp.Diff(Result{Cancelled: true}, res, ignoreDuration); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although ctx was already done")
	}
}

func TestRunOnStartAndAfterExit(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "bg")
	var started int
	var bgAliveAfterExit bool
	res, c := runBash(t, t.Context(), `sleep 600 & echo $! > `+pidfile+`; echo $$`, func(s *Spec) {
		s.OnStart = func(pid int) { started = pid }
		s.AfterExit = func() { bgAliveAfterExit = testutil.AnyRunning(readPids(t, pidfile, 1)...) }
	})
	if diff := cmp.Diff(Result{ExitCode: intp(0)}, res, ignoreDuration); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if got := strings.TrimSpace(c.String()); got != strconv.Itoa(started) {
		t.Errorf("OnStart got pid %d, the shell says it is %s", started, got)
	}
	if bgAliveAfterExit {
		t.Error("the background child was still alive when AfterExit ran; the group should be stopped first")
	}
}

// TestRunOutputFlood pushes 100 MB through a 64 KiB capture and checks that
// memory allocated during the call stays far below the volume printed.
func TestRunOutputFlood(t *testing.T) {
	const volume = 100_000_000
	const limit = 64 * 1024
	c := NewCapture(limit)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Run(t.Context(), Spec{
		Path: bash, Args: []string{"-c", "echo first; head -c " + strconv.Itoa(volume) + " /dev/zero | tr '\\0' x; echo; echo last"},
		Env: []string{"PATH=/usr/bin:/bin"}, Stdout: c, Stderr: c,
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(Result{ExitCode: intp(0)}, res, ignoreDuration); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	out := c.String()
	wantTotal := int64(len("first\n") + volume + len("\nlast\n"))
	if c.Total() != wantTotal || !c.Truncated() || len(out) > limit {
		t.Errorf("Total=%d (want %d) Truncated=%v len=%d (limit %d)", c.Total(), wantTotal, c.Truncated(), len(out), limit)
	}
	if !strings.HasPrefix(out, "first\nxxx") || !strings.HasSuffix(out, "xxx\nlast\n") {
		t.Errorf("output does not keep head and tail: %q … %q", out[:20], out[len(out)-20:])
	}
	if m := markerRE.FindStringSubmatch(out); m == nil || m[1] != strconv.FormatInt(c.Cut(), 10) {
		t.Errorf("marker %v does not name the %d bytes cut", m, c.Cut())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("allocated %d bytes while capturing %d; memory is not bounded", alloc, volume)
	}
}
