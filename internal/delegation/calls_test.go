package delegation

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/testutil"
)

// startOwner runs a stand-in for an SCV process that owns calls: a sleep
// the test SIGKILLs to play the crash.
func startOwner(t *testing.T) *exec.Cmd {
	t.Helper()
	owner := exec.Command("sleep", "300")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
	return owner
}

// TestCallOfDeadOwnerReaped: a call recorded by an owner that is then
// SIGKILLed leaves a shell, a background child and a setsid escapee, all
// carrying the call's tag. Reconcile by another process stops all of them
// and removes the record; a call whose owner lives is left alone.
func TestCallOfDeadOwnerReaped(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "run", "delegations")
	owner := startOwner(t)
	dead, err := New(Options{Dir: dir, OwnerPID: owner.Process.Pid, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tag := "SCV_BASH_CALL=" + rand.Text()
	started, _, err := dead.BeginCall(tag, "s1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(home, "pids")
	work := exec.Command("/bin/bash", "-c", `sleep 301 & echo $! >> "$1"; setsid sh -c 'echo $$ >> "$1"; exec sleep 302' x "$1" & sleep 303`, "x", pidFile)
	work.Env = []string{"PATH=" + os.Getenv("PATH"), tag}
	work.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { work.Wait(); close(waited) }()
	started(work.Process.Pid)
	testutil.KillAtCleanup(t, work.Process.Pid)
	pids := append([]int{work.Process.Pid}, testutil.WaitPIDs(t, pidFile, 2, 5*time.Second)...)
	if len(pids) < 3 {
		t.Fatalf("the call's processes did not start: %v", pids)
	}

	live, err := New(Options{Dir: dir, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if !testutil.Running(p) {
			t.Fatalf("reconcile stopped process %d while its owner lives", p)
		}
	}

	owner.Process.Signal(syscall.SIGKILL)
	owner.Wait()
	if _, err := live.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-waited
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && testutil.AnyRunning(pids...); {
		time.Sleep(20 * time.Millisecond)
	}
	if testutil.AnyRunning(pids...) {
		t.Errorf("processes of the dead owner's call survived reconcile: %v", pids)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "run", "calls")); len(ents) != 0 {
		t.Errorf("call records left: %v", ents)
	}
}

// TestTamperedCallRecordIgnored: a record naming a tag that is not a
// call tag (HOME=… would match every process of the user) is reported and
// never acted on.
func TestTamperedCallRecordIgnored(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "run", "calls")
	os.MkdirAll(dir, 0o700)
	victim := exec.Command("sleep", "300")
	victim.Env = []string{"HOME=/tampered-test-home"}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	rec := CallRecord{ID: "0123456789abcdef", Tag: "HOME=/tampered-test-home", OwnerPID: 1 << 22, OwnerStart: 1}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, rec.ID+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{Dir: filepath.Join(home, "run", "delegations"), Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if !testutil.Running(victim.Process.Pid) {
		t.Fatal("a tampered record's tag stopped an unrelated process")
	}
	if _, _, err := tr.BeginCall("HOME=/x", "s", "c"); err == nil {
		t.Error("BeginCall accepted a tag that is not a call tag")
	}
}

// TestCallFormsMatchTheirRegexps: the hand-written checks (nothing built at
// start-up) accept exactly what the regexps they replace accept.
func TestCallFormsMatchTheirRegexps(t *testing.T) {
	tagRE := regexp.MustCompile(`^SCV_[A-Z0-9_]+=[A-Za-z0-9]{16,64}$`)
	idRE := regexp.MustCompile(`^[0-9a-f]{16}$`)
	long := strings.Repeat("a", 64)
	for _, s := range []string{
		"SCV_BASH_CALL=0123456789abcdef", "SCV_BASH_CALL=" + long, "SCV_BASH_CALL=" + long + "a",
		"SCV_BASH_CALL=0123456789abcde", "SCV_=0123456789abcdef", "SCV_bash=0123456789abcdef",
		"HOME=/home/me", "SCV_X=0123456789abcdef=", "SCV_X=0123456789abcde-", "SCV_X", "", "SCV_9_=ABCDEFGHIJKLMNOP",
		"0123456789abcdef", "0123456789ABCDEF", "0123456789abcdeg", "0123456789abcde",
	} {
		if got, want := validCallTag(s), tagRE.MatchString(s); got != want {
			t.Errorf("validCallTag(%q) = %v, regexp says %v", s, got, want)
		}
		if got, want := validCallID(s), idRE.MatchString(s); got != want {
			t.Errorf("validCallID(%q) = %v, regexp says %v", s, got, want)
		}
	}
}
