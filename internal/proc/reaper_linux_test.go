package proc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// helperEnv re-executes the test binary as a subreaper helper process.
const helperEnv = "SCV_PROC_TEST_SUBREAPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(subreaperHelper(mode))
	}
	if v := os.Getenv(helperContainEnv); v != "" {
		mode, dir, _ := strings.Cut(v, ":")
		os.Exit(containHelper(mode, dir))
	}
	goleak.VerifyTestMain(m)
}

// helperReport is what the helper prints.
type helperReport struct {
	Zombies     int // zombie children left at the end
	ReapedSome  bool
	WrongStatus int // Run children whose exit status was stolen
}

// subreaperHelper becomes a child subreaper, starts double-forking commands
// through Run (their grandchildren are orphaned and reparented to it) and,
// with mode "reap", runs a Reaper alongside. It prints a helperReport.
func subreaperHelper(mode string) int {
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Reaper{Interval: 200 * time.Millisecond}
	stopped := make(chan struct{})
	if mode == "reap" {
		go func() { r.Run(ctx); close(stopped) }()
	} else {
		close(stopped)
	}
	var rep helperReport
	for range 20 {
		// The inner subshell exits at once, orphaning its background child;
		// setsid keeps that child out of the group Run stops, so it ends by
		// itself after the leader is gone.
		res, err := Run(ctx, Spec{Path: bash, Args: []string{"-c", "( setsid sleep 0.05 & ); exit 7"}, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil || res.ExitCode == nil || *res.ExitCode != 7 {
			rep.WrongStatus++
		}
	}
	time.Sleep(700 * time.Millisecond)
	cancel()
	<-stopped
	rep.Zombies = len(zombieChildren(os.Getpid()))
	rep.ReapedSome = r.Reaped() > 0
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

func TestSubreaperReapsOrphans(t *testing.T) {
	tests := []struct {
		mode string
		want func(helperReport) bool
		desc string
	}{
		// Without a Reaper the orphans stay zombies of the subreaper: this
		// proves they were really reparented to it.
		{"noreap", func(r helperReport) bool { return r.Zombies >= 10 && !r.ReapedSome && r.WrongStatus == 0 }, "zombies left, nothing reaped"},
		{"reap", func(r helperReport) bool { return r.Zombies == 0 && r.ReapedSome && r.WrongStatus == 0 }, "no zombie left, Run statuses intact"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+tt.mode)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper: %v", err)
			}
			var rep helperReport
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("helper output %q: %v", out, err)
			}
			if !tt.want(rep) {
				t.Errorf("helper report %+v, want %s", rep, tt.desc)
			}
		})
	}
}

func TestStartTrackedIsNotReaped(t *testing.T) {
	cmd := exec.Command(bash, "-c", "exit 5")
	untrack, err := StartTracked(cmd)
	if err != nil {
		t.Fatal(err)
	}
	// Let it become a zombie, then reap as hard as we can: a tracked child
	// must be left to cmd.Wait.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if s, err := readStat(cmd.Process.Pid); err == nil && s.state == 'Z' {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	var r Reaper
	if n := r.ReapOnce(); n != 0 {
		t.Errorf("ReapOnce reaped %d tracked children", n)
	}
	_ = cmd.Wait()
	untrack()
	if diff := cmp.Diff(5, cmd.ProcessState.ExitCode()); diff != "" {
		t.Errorf("exit code (-want +got):\n%s", diff)
	}
}
