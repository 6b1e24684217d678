package proc

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	rest := " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 424242 1 2 3" // fields 7–21, then 22
	tests := []struct {
		name    string
		line    string
		want    stat
		wantErr bool
	}{
		{"plain", "123 (bash) S 1 123 123" + rest, stat{state: 'S', ppid: 1, pgrp: 123, start: 424242}, false},
		{"spaces and parentheses in the name", "7 (a) (b c) x)) Z 5 6 7" + rest, stat{state: 'Z', ppid: 5, pgrp: 6, start: 424242}, false},
		{"kernel thread flags", "2 (kthreadd) S 0 0 0 0 0 2129984 0 0 0 0 0 0 0 0 0 0 0 0 77 1 2 3", stat{state: 'S', flags: 2129984, start: 77}, false},
		{"no name", "7 bash S 1 2 3", stat{}, true},
		{"too few fields", "7 (bash) S 1 2 3", stat{}, true},
		{"not a number", "7 (bash) S x 2 3" + rest, stat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.line))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(stat{})); diff != "" {
				t.Errorf("stat (-want +got):\n%s", diff)
			}
		})
	}
}

// Kernel threads are told apart by PF_KTHREAD, which the tag scan skips
// (kthreadd is PID 2 on Linux); this process is not one.
func TestKernelThreadFlag(t *testing.T) {
	self, err := readStat(os.Getpid())
	if err != nil || self.kthread() {
		t.Errorf("this process: %+v, %v; want a user process", self, err)
	}
	if st, err := readStat(2); err == nil && !st.kthread() {
		if b, _ := os.ReadFile("/proc/2/comm"); strings.TrimSpace(string(b)) == "kthreadd" {
			t.Errorf("kthreadd's flags %#x lack PF_KTHREAD", st.flags)
		}
	}
}

func TestStartTimeOfSelf(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseStat(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := StartTime(os.Getpid())
	if err != nil || got != want.start || got == 0 {
		t.Errorf("StartTime(self) = %d, %v; want %d", got, err, want.start)
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if _, err := StartTime(pid); err == nil {
			t.Errorf("StartTime(%d) = nil error", pid)
		}
	}
}

func TestAliveAndSignalVerified(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pid := cmd.Process.Pid
	start, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(pid, start) || Alive(pid, start+1) {
		t.Fatalf("Alive(pid, start)=%v Alive(pid, start+1)=%v; want true, false", Alive(pid, start), Alive(pid, start+1))
	}
	if err := SignalVerified(pid, start+1, syscall.SIGKILL); !errors.Is(err, ErrGone) {
		t.Errorf("SignalVerified with a wrong start time = %v, want ErrGone", err)
	}
	time.Sleep(50 * time.Millisecond)
	if !Alive(pid, start) {
		t.Fatal("a process with a different start time was signalled")
	}
	if err := SignalVerified(pid, start, syscall.SIGKILL); err != nil {
		t.Fatalf("SignalVerified = %v", err)
	}
	// Until it is reaped the killed process is a zombie, which is not alive.
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid, start) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(pid, start) {
		t.Error("still alive after SIGKILL")
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("Wait = %v, want killed by SIGKILL", err)
	}
	if err := SignalVerified(pid, start, syscall.SIGKILL); !errors.Is(err, ErrGone) {
		t.Errorf("SignalVerified after reaping = %v, want ErrGone", err)
	}
}
