package proc

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threads is this process's thread count, from /proc/self/status.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestWaitHoldsNoThread: 40 running children cost this process no thread
// each (os/exec's Wait alone would block 40 threads in waitid), and every
// one of them is still collected with its status when it is stopped.
func TestWaitHoldsNoThread(t *testing.T) {
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("no pidfd_open on this kernel (%v): the wait falls back to a thread per child", err)
	} else {
		unix.Close(fd)
	}
	const n = 40
	before := threads(t)
	kids := make([]*Child, n)
	for i := range kids {
		kids[i] = startChild(t, "exec sleep 60", nil)
	}
	time.Sleep(200 * time.Millisecond) // let every watcher reach its wait
	if grew := threads(t) - before; grew >= n/2 {
		t.Errorf("%d running children took %d more threads, want far fewer than one each", n, grew)
	}
	for _, c := range kids {
		c.Stop()
	}
	for _, c := range kids {
		waitDone(t, c, 10*time.Second)
		if r := c.Result(); !r.Cancelled || (r.Signal == "" && r.ExitCode == nil) {
			t.Errorf("child %d: result %+v, want cancelled with a status", c.PID(), r)
		}
	}
}

// TestWaitSeesQuickExits: children that exit at once, before their pidfd
// is registered with the poller, are still seen to exit. 400 runs of
// /bin/true, 8 at a time, must all return with exit 0; the context only
// bounds a hang, it is not a timing assertion.
func TestWaitSeesQuickExits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	sem := make(chan struct{}, 8)
	for range 400 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := Run(ctx, Spec{Path: "/bin/true", Args: []string{"true"}})
			switch {
			case err != nil:
				errs <- err.Error()
			case res.Cancelled:
				errs <- "a wait hung until the test's bound"
			case res.ExitCode == nil || *res.ExitCode != 0:
				errs <- "result " + strconv.Quote(resString(res))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func resString(r Result) string {
	if r.ExitCode != nil {
		return "exit " + strconv.Itoa(*r.ExitCode)
	}
	return "signal " + r.Signal
}
