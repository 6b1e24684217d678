package testutil

import (
	"bufio"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// LineLog keeps the lines of a stream that a goroutine of its own reads,
// for a test that writes requests and waits for what answers them.
type LineLog struct {
	mu      sync.Mutex
	kept    []string
	arrived chan struct{}
	done    chan struct{}
}

// ReadLines reads r's lines (up to 16 MiB each) until it ends. keep gets
// each line, under the log's lock, and says what to keep of it (false:
// nothing); it may update the test's own state, which Locked then reads.
func ReadLines(r io.Reader, keep func(line string) (string, bool)) *LineLog {
	l := &LineLog{arrived: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			l.mu.Lock()
			if k, ok := keep(sc.Text()); ok {
				l.kept = append(l.kept, k)
			}
			l.mu.Unlock()
			select {
			case l.arrived <- struct{}{}:
			default:
			}
		}
	}()
	return l
}

// Locked runs f under the log's lock, the one keep runs under.
func (l *LineLog) Locked(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// WaitFor waits until ok, called under the log's lock with the lines kept
// so far, holds; it fails the test, showing those lines, when d passes
// first.
func (l *LineLog) WaitFor(t testing.TB, what string, d time.Duration, ok func(kept []string) bool) {
	t.Helper()
	deadline := time.After(d)
	for {
		l.mu.Lock()
		done := ok(l.kept)
		l.mu.Unlock()
		if done {
			return
		}
		select {
		case <-l.arrived:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("timed out waiting for %s; got so far:\n%s", what, strings.Join(l.kept, "\n"))
		}
	}
}

// Wait waits for the end of the stream and returns the lines kept.
func (l *LineLog) Wait() []string {
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept
}

// WaitServed waits up to d for what a serving goroutine returns on served
// once its input has ended; an error, or d passing first, fails the test.
func WaitServed(t testing.TB, served <-chan error, d time.Duration) {
	t.Helper()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(d):
		t.Fatal("Serve did not return after EOF")
	}
}
