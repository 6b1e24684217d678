package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInjectedWriteFailure: a failing write surfaces as an error of the
// call, and nothing is lost or half-applied: the turn stays running with its
// events buffered, and can still be ended once writes work again.
func TestInjectedWriteFailure(t *testing.T) {
	ctx := context.Background()
	injected := errors.New("injected: no space left on device")
	failing := ""
	s := openTemp(t)
	s.opts.Fault = func(op string) error {
		if op == failing {
			return injected
		}
		return nil
	}
	mustSession(t, s, "s1")
	seq := runTurn(t, s, "s1", "t1", "p1", "a1", 0)
	tl, err := s.BeginTurn(ctx, "s1", "t2", "p2")
	if err != nil {
		t.Fatal(err)
	}
	failing = "write turn events"
	if err := tl.Append(ctx, ev(seq+1, "turn.started", "")); err != nil {
		t.Fatal(err)
	}
	if err := tl.Flush(ctx); !errors.Is(err, injected) || !strings.Contains(err.Error(), "write turn events") {
		t.Fatalf("flush error = %v, want the injected one naming the operation", err)
	}
	failing = "complete turn"
	err = tl.Complete(ctx, Completion{Events: []Event{ev(seq+2, "turn.completed", "")}, History: HistoryUpdate{Append: []json.RawMessage{msg("user", "p2")}}})
	if !errors.Is(err, injected) || !strings.Contains(err.Error(), "complete turn") {
		t.Fatalf("complete error = %v, want the injected one", err)
	}
	got, err := s.Turn(ctx, "s1", "t2")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != TurnRunning || len(got.Events) != 0 {
		t.Errorf("after the failed complete: %s with %d events stored, want running with none", got.State, len(got.Events))
	}
	if h, _ := s.History(ctx, "s1"); len(h) != 2 {
		t.Errorf("history changed by a failed complete: %d messages", len(h))
	}
	// Writes work again: ending the turn stores the buffered event too.
	failing = ""
	if err := tl.End(ctx, TurnEnd{State: TurnFailed, Code: "internal_error", Message: "store write failed", Events: []Event{ev(seq+2, "turn.failed", "")}}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Turn(ctx, "s1", "t2")
	if got.State != TurnFailed || len(got.Events) != 2 {
		t.Errorf("after End: %s with %d events, want failed with 2", got.State, len(got.Events))
	}
}

// TestDiskFull runs a writer whose file size limit (RLIMIT_FSIZE) stops
// the database from growing, as a full disk does: its write fails with an
// error saying so, and every turn completed before is intact.
func TestDiskFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scv.db")
	s := openAt(t, path, func(o *Options) { o.Alive = processAlive })
	mustSession(t, s, "full")
	if err := s.Release(context.Background(), "full"); err != nil {
		t.Fatal(err)
	}
	s.Checkpoint(context.Background())
	cmd, lines := startChild(t, "diskfull", path, "full", 0)
	var out []string
	completed := 0
	for l := range lines {
		out = append(out, l)
		if strings.HasPrefix(l, "completed") {
			completed++
		}
	}
	err := cmd.Wait()
	last := out[len(out)-1]
	if err == nil || !strings.HasPrefix(last, "error") {
		t.Fatalf("writer past the size limit: %v, output:\n%s", err, strings.Join(out, "\n"))
	}
	if !strings.Contains(last, "disk") {
		t.Errorf("error %q does not say the disk is full or failing", last)
	}
	t.Logf("%d turns before: %s", completed, last)
	if completed == 0 {
		t.Fatal("the limit left no room for a single turn; the test proves nothing")
	}
	if _, err := s.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkFileIntegrity(t, path)
	l, err := s.Load(context.Background(), "full", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range l.Turns {
		if tr.State == TurnCompleted {
			n++
			if len(tr.Events) != childEvents {
				t.Errorf("completed turn %s has %d events", tr.ID, len(tr.Events))
			}
		} else if tr.State != TurnInterrupted {
			t.Errorf("turn %s is %s", tr.ID, tr.State)
		}
	}
	if n != completed || len(l.History) != 2*n {
		t.Errorf("%d turns stored completed with %d history messages; the writer completed %d", n, len(l.History), completed)
	}
}

// readOnly makes path unwritable for this process: by its mode, or, for
// root (whom modes do not stop), by the file system's immutable flag. It
// undoes it at cleanup.
func readOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(path, fi.Mode().Perm()) })
		return
	}
	setImmutable(t, path)
}

func TestReadOnlyDirectory(t *testing.T) {
	for _, existing := range []bool{false, true} {
		t.Run(map[bool]string{false: "new file", true: "existing file"}[existing], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			path := filepath.Join(dir, "scv.db")
			if existing {
				s := openAt(t, path, nil)
				mustSession(t, s, "s1")
				s.Close()
			} else if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			readOnly(t, dir)
			// An existing file opens, but its WAL cannot be created beside it.
			want := map[bool]string{false: "writable", true: "-wal/-shm"}[existing]
			_, err := Open(context.Background(), Options{Path: path})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
				t.Fatalf("open in a read-only directory: %v, want an error naming the file and %q", err, want)
			}
			t.Log(err)
		})
	}
}

func TestReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scv.db")
	s := openAt(t, path, nil)
	mustSession(t, s, "s1")
	s.Checkpoint(context.Background())
	s.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	readOnly(t, path)
	_, err := Open(context.Background(), Options{Path: path})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("open of a read-only database: %v", err)
	}
	t.Log(err)
}
