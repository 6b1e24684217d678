package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as an SCV process writing to the store: tests
// start it with STORE_TEST_CHILD=<mode> and the database path, kill it,
// and check the file.
func TestMain(m *testing.M) {
	if mode := os.Getenv("STORE_TEST_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	code := m.Run()
	if searchDir != "" {
		os.RemoveAll(searchDir)
	}
	os.Exit(code)
}

// processAlive is the real liveness check: a killed and reaped child's PID
// no longer exists (the tests are too short for PID reuse to matter).
func processAlive(h Holder) bool {
	return h.PID > 0 && syscall.Kill(h.PID, 0) == nil
}

func childStore(path string) (*Store, error) {
	return Open(context.Background(), Options{
		Path:   path,
		Holder: Holder{Instance: "test", PID: os.Getpid(), Start: time.Now().UnixNano(), Name: "child"},
		Alive:  processAlive,
	})
}

func child(mode string) int {
	path := os.Getenv("STORE_TEST_DB")
	sid := os.Getenv("STORE_TEST_SESSION")
	turns, _ := strconv.Atoi(os.Getenv("STORE_TEST_TURNS"))
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	fail := func(err error) int {
		say("error %v", err)
		return 1
	}
	if mode == "diskfull" {
		// Writes beyond the limit fail with EFBIG, as on a full disk.
		signal.Ignore(syscall.SIGXFSZ)
		fi, err := os.Stat(path)
		if err != nil {
			return fail(err)
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, fileSizeLimit(fi.Size()+512<<10)); err != nil {
			return fail(err)
		}
	}
	s, err := childStore(path)
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Session(ctx, sid); errors.Is(err, ErrNotFound) {
		if _, err := s.CreateSession(ctx, NewSession{ID: sid, Workspace: "/ws", Origin: OriginExec}); err != nil {
			return fail(err)
		}
	}
	x, err := s.Acquire(ctx, sid)
	if err != nil {
		return fail(err)
	}
	seq := x.LastSeq
	say("ready %d", x.Turns)
	for i := x.Turns + 1; turns == 0 || i <= turns; i++ {
		tid := fmt.Sprintf("%s-t%d", sid, i)
		var err error
		seq, err = childTurn(ctx, s, sid, tid, i, seq, mode == "diskfull", say)
		if err != nil {
			return fail(err)
		}
		say("completed %s", tid)
	}
	if err := s.Release(ctx, sid); err != nil {
		return fail(err)
	}
	say("done")
	return 0
}

// childEvents is the number of events of one child turn.
const childEvents = 12

// childTurn stores turn i: begin, events flushed in two batches, complete
// with two history messages naming the turn.
// It says "begun TID" once the turn is begun and "flushed TID SEQ" once the
// events up to SEQ are flushed: what the server sends a client only after
// those calls returned (turn.started, an approval request).
func childTurn(ctx context.Context, s *Store, sid, tid string, i int, seq uint64, big bool, say func(string, ...any)) (uint64, error) {
	tl, err := s.BeginTurn(ctx, sid, tid, fmt.Sprintf("prompt %d of %s", i, sid))
	if err != nil {
		return seq, err
	}
	say("begun %s", tid)
	pad := 200
	if big {
		pad = 8 << 10
	}
	for j := range childEvents - 1 {
		seq++
		if err := tl.Append(ctx, ev(seq, "tool.completed", fmt.Sprintf(`,"output":%q`, strings.Repeat("o", pad)))); err != nil {
			return seq, err
		}
		if j == childEvents/2 {
			if err := tl.Flush(ctx); err != nil {
				return seq, err
			}
			say("flushed %s %d", tid, seq)
		}
	}
	seq++
	err = tl.Complete(ctx, Completion{
		Events:  []Event{ev(seq, "turn.completed", "")},
		History: HistoryUpdate{Append: []json.RawMessage{msg("user", tid), msg("assistant", tid)}},
		Answer:  "answer of " + tid,
	})
	return seq, err
}

// startChild starts the test binary in mode against path; lines carries
// its stdout lines until it exits.
func startChild(t *testing.T, mode, path, sid string, turns int) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STORE_TEST_CHILD="+mode, "STORE_TEST_DB="+path, "STORE_TEST_SESSION="+sid, "STORE_TEST_TURNS="+strconv.Itoa(turns))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A test that stops early must not leave its child running.
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}
