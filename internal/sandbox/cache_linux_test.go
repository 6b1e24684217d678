package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// cacheFixture is a home holding a hidden ~/.ssh with a key, beside a
// workspace and the temp dir (TMPDIR) the commands' temp dirs are made in,
// in a fresh directory. (With TMPDIR a directory that holds hidden paths,
// every command's temp dir would change a listed directory.)
type cacheFixture struct {
	root, home, ws string
	c              Config
}

func newCacheFixture(t testing.TB) cacheFixture {
	t.Helper()
	root := t.TempDir()
	f := cacheFixture{root: root, home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws")}
	t.Setenv("TMPDIR", filepath.Join(root, "tmp"))
	for _, d := range []string{filepath.Join(f.home, ".ssh"), f.ws, filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(f.home, ".ssh", "id"), "KEY")
	write(t, filepath.Join(f.ws, "in"), "inside")
	f.c = Config{Mode: ModeWorkspaceWrite, DenyRead: []string{filepath.Join(f.home, ".ssh")}}
	return f
}

func write(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs script confined from a thread of this process (the way the
// cache serves) and returns its output and exit code.
func (f cacheFixture) run(script string) (string, int, error) {
	cmd, err := Wrap(f.c, f.ws, "/bin/bash", []string{"-c", script}, []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		return "", 0, err
	}
	defer cmd.Close()
	x := exec.Command(cmd.Path, cmd.Args...)
	var out bytes.Buffer
	x.Env, x.Dir, x.Stdout, x.Stderr = cmd.Env, f.ws, &out, &out
	if err := startConfined(x, cmd.Confine); err != nil {
		return "", 0, err
	}
	err = x.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		return "", 0, err
	}
	return out.String(), x.ProcessState.ExitCode(), nil
}

func (f cacheFixture) must(t *testing.T, script string, allow bool) {
	t.Helper()
	out, code, err := f.run(script)
	if err != nil {
		t.Fatal(err)
	}
	if allow && code != 0 {
		t.Errorf("%q failed (%d), want it allowed:\n%s", script, code, out)
	}
	if !allow && code == 0 {
		t.Errorf("%q succeeded: the sandbox was breached\n%s", script, out)
	}
}

func builds() int {
	rules.mu.Lock()
	defer rules.mu.Unlock()
	return rules.builds
}

// cached makes sure the fixture's read layer is kept: it waits until the
// directories are older than racyWindow and runs commands until one is
// served without deriving the rules again (other programs' entries in the
// shared temp dir can change it meanwhile).
func (f cacheFixture) cached(t *testing.T) {
	t.Helper()
	for range 10 {
		time.Sleep(2 * racyWindow) // not an assertion: lets the listed directories age
		f.must(t, "true", true)
		n := builds()
		f.must(t, "true", true)
		if builds() == n {
			return
		}
	}
	t.Fatal("the read layer was never kept: the listed directories kept changing")
}

// TestCacheSeesChanges checks that a kept read layer is revalidated: a
// sibling created after it is visible to the next command, and a hidden
// directory replaced, or another directory renamed into its place, stays
// hidden.
func TestCacheSeesChanges(t *testing.T) {
	requireLandlock(t)
	f := newCacheFixture(t)
	write(t, filepath.Join(f.home, "a"), "A")
	f.cached(t)
	f.must(t, "cat "+f.home+"/a && ! cat "+f.home+"/.ssh/id", true)

	write(t, filepath.Join(f.home, "b"), "B")
	f.must(t, "cat "+f.home+"/b", true)
	if err := os.Mkdir(filepath.Join(f.home, "newdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.must(t, "echo x > "+f.ws+"/y && ls "+f.home+"/newdir", true)

	f.cached(t)
	ssh := filepath.Join(f.home, ".ssh")
	if err := os.RemoveAll(ssh); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ssh, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ssh, "id"), "KEY2")
	f.must(t, "cat "+ssh+"/id", false)
	f.must(t, "ls "+ssh, false)

	// A directory granted as a sibling (its inode has a rule) renamed
	// into the hidden path.
	other := filepath.Join(f.home, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(other, "id"), "KEY3")
	f.cached(t)
	f.must(t, "cat "+other+"/id", true)
	if err := os.RemoveAll(ssh); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, ssh); err != nil {
		t.Fatal(err)
	}
	f.must(t, "cat "+ssh+"/id", false)
	f.must(t, "echo x > "+ssh+"/w", false)

	// The workspace replaced: the new one is writable, not the old rule's.
	f.cached(t)
	if err := os.Rename(f.ws, f.ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	f.must(t, "echo x > "+f.ws+"/new", true)
	f.must(t, "echo x > "+f.ws+".old/in", false)
}

// TestCacheWritesOnlyOwnTempDir checks the write layer: a command writes
// its own temp dir, not another command's beside it.
func TestCacheWritesOnlyOwnTempDir(t *testing.T) {
	requireLandlock(t)
	f := newCacheFixture(t)
	other, err := Wrap(f.c, f.ws, "/bin/true", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	f.must(t, `echo x > "$TMPDIR/f" && cat "$TMPDIR/f" && ls `+other.TempDir, true)
	f.must(t, "echo x > "+other.TempDir+"/f", false)
	f.must(t, "mkdir "+other.TempDir+"/d", false)
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestCacheKeepsFDsBounded checks that many confined commands leave the
// process's descriptors as they were (one kept ruleset per policy), and
// that more policies than the cache keeps do not add more.
func TestCacheKeepsFDsBounded(t *testing.T) {
	requireLandlock(t)
	f := newCacheFixture(t)
	f.cached(t)
	before := openFDs(t)
	for i := range 30 {
		if i%10 == 5 {
			write(t, filepath.Join(f.home, "n"+strconv.Itoa(i)), "") // a rebuild
		}
		f.must(t, "true", true)
	}
	f.cached(t)
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after 30 confined commands, %d before", n, before)
	}
	for i := range 2 * cacheSize {
		g := f
		g.ws = filepath.Join(f.root, "ws"+strconv.Itoa(i))
		if err := os.Mkdir(g.ws, 0o755); err != nil {
			t.Fatal(err)
		}
		g.must(t, "true", true)
	}
	if n := openFDs(t); n > before+cacheSize {
		t.Errorf("%d descriptors open after %d policies, %d before: the cache keeps at most %d", n, 2*cacheSize, before, cacheSize)
	}
}

// TestCacheConcurrent runs many confined commands at once while entries
// come and go beside the hidden path (so layers are rebuilt and dropped
// under the commands' feet): each must see the rules.
func TestCacheConcurrent(t *testing.T) {
	requireLandlock(t)
	f := newCacheFixture(t)
	stop := make(chan struct{})
	churned := make(chan struct{})
	go func() {
		defer close(churned)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := filepath.Join(f.home, "churn"+strconv.Itoa(i%4))
			_ = os.WriteFile(p, nil, 0o644)
			_ = os.Remove(p)
			time.Sleep(time.Millisecond)
		}
	}()
	script := "cat " + f.ws + "/in && echo x > \"$TMPDIR/f\" && ! cat " + f.home + "/.ssh/id && ! echo x > " + f.home + "/x"
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 2 * runtime.GOMAXPROCS(0) * 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				out, code, err := f.run(script)
				if err == nil && code != 0 {
					err = fmt.Errorf("goroutine %d: exit %d:\n%s", g, code, out)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-churned
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkConfineCrowded is the cost of deriving and applying the rules
// of one command (Wrap, then Command.Confine on a fresh locked thread, no
// child) when the hidden paths lie in a directory of 250 other entries,
// as the homes of the exec benchmarks do in a shared temp dir.
func BenchmarkConfineCrowded(b *testing.B) {
	if rep := Probe(); !rep.Available {
		b.Skipf("the kernel cannot sandbox: %s", rep.Reason)
	}
	f := newCacheFixture(b)
	for i := range 250 {
		if err := os.Mkdir(filepath.Join(f.root, fmt.Sprintf("entry%03d", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // the directories age past any racy window
	for b.Loop() {
		cmd, err := Wrap(f.c, f.ws, "/bin/true", nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the confined thread ends with the goroutine
			done <- cmd.Confine()
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		cmd.Close()
	}
}
