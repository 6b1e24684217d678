package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/testutil"
)

// settle waits for the leaves being made or removed in the background
// (nothing else may use c meanwhile).
func (c *Containment) settle() { c.plat.pool.wg.Wait() }

// leavesIn lists the cgroups directly under dir.
func leavesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func runTrue(t *testing.T, c *Containment) error {
	t.Helper()
	res, err := Run(t.Context(), Spec{Path: "/bin/true", Contain: c})
	if err == nil && (res.ExitCode == nil || *res.ExitCode != 0) {
		err = fmt.Errorf("result %+v", res)
	}
	return err
}

// After a run the pool holds poolReady empty leaves and nothing else is
// left; Close removes them.
func TestLeafPoolReadyAndClose(t *testing.T) {
	c, dir := testCgroup(t)
	for range 3 {
		if err := runTrue(t, c); err != nil {
			t.Fatal(err)
		}
	}
	c.settle()
	if got := leavesIn(t, dir); len(got) != poolReady {
		t.Errorf("leaves after the runs: %v, want %d ready ones", got, poolReady)
	}
	c.Close()
	if got := leavesIn(t, dir); len(got) != 0 {
		t.Errorf("leaves after Close: %v", got)
	}
	// After Close a run still works, making and removing its leaf itself.
	if err := runTrue(t, c); err != nil {
		t.Fatal(err)
	}
	if got := leavesIn(t, dir); len(got) != 0 {
		t.Errorf("leaves after a run after Close: %v", got)
	}
}

// More runs at once than the pool holds: the others make their leaves on
// the spot, every escapee is gone when its Run returns, and Close, called
// at once, leaves no leaf behind (removals still pending are waited for).
func TestLeafPoolExhaustedConcurrent(t *testing.T) {
	c, dir := testCgroup(t)
	const n = 3 * poolReady
	tmp := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			pidFile := filepath.Join(tmp, fmt.Sprint(i))
			res, err := Run(t.Context(), Spec{Path: bash, Args: []string{"-c", escapeScript(pidFile)},
				Env: []string{"PATH=/usr/bin:/bin"}, Contain: c})
			if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
				errs <- fmt.Errorf("run %d: %+v %v", i, res, err)
				return
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				errs <- err
				return
			}
			var pid int
			fmt.Sscan(strings.TrimSpace(string(b)), &pid)
			if testutil.Running(pid) {
				errs <- fmt.Errorf("run %d: escapee %d running when Run returned", i, pid)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c.Close()
	if got := leavesIn(t, dir); len(got) != 0 {
		t.Errorf("leaves after Close: %v", got)
	}
}

// A child left behind that ignores TERM is KILLed before Run returns,
// though the rmdir of its leaf is left to the background.
func TestLeafPoolKillBeforeResult(t *testing.T) {
	c, dir := testCgroup(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := fmt.Sprintf(`env -i setsid sh -c 'trap "" TERM; echo $$ > %[1]s; while :; do sleep 0.05; done' >/dev/null 2>&1 &
while [ ! -s %[1]s ]; do sleep 0.01; done`, pidFile)
	res, err := Run(t.Context(), Spec{Path: bash, Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
		Contain: c, Grace: 200 * time.Millisecond})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("run: %+v %v", res, err)
	}
	pid := testutil.WaitPID(t, pidFile, 5*time.Second)
	if testutil.Running(pid) {
		t.Errorf("the TERM-ignoring escapee %d is running when Run returned", pid)
	}
	c.Close()
	if got := leavesIn(t, dir); len(got) != 0 {
		t.Errorf("leaves after Close: %v", got)
	}
}

// The leaves made in advance disappear with the cgroup they were in: a run
// then fails to make its leaf, saying so, and starts nothing; once the
// cgroup is back, runs work again.
func TestLeafPoolRootGone(t *testing.T) {
	c, dir := testCgroup(t)
	if err := runTrue(t, c); err != nil {
		t.Fatal(err)
	}
	c.settle()
	for _, l := range leavesIn(t, dir) {
		if err := os.Remove(filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	_, err := Run(t.Context(), Spec{Path: bash, Args: []string{"-c", "echo > " + marker}, Contain: c})
	if err == nil || !strings.Contains(err.Error(), "cgroup") {
		t.Errorf("run with the cgroup gone: %v, want an error about the cgroup", err)
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Error("the command ran outside any cgroup")
	}
	c.settle()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := runTrue(t, c); err != nil {
			t.Errorf("run with the cgroup back: %v", err)
		}
	}
	c.Close()
	if got := leavesIn(t, dir); len(got) != 0 {
		t.Errorf("leaves after Close: %v", got)
	}
}
