package store

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/testutil"
)

// TestWritesRefusedOnceTheFileIsGone: removing the database files (or
// putting another file at the path) while the store is open makes every
// later write fail with ErrGone, naming the path and what to do, and logs
// one error; nothing is written into the orphaned file meanwhile, reads
// still work, and the next Open starts a new database at the path.
func TestWritesRefusedOnceTheFileIsGone(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			logs := &testutil.LockedBuffer{}
			p := filepath.Join(t.TempDir(), "state", "scv.db")
			s := openAt(t, p, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
			mustSession(t, s, "s")
			runTurn(t, s, "s", "t1", "before the removal", "kept", 0)
			// The read pool holds a connection, as in a serving process
			// (WarmUp): reads go on from the removed file through it.
			if _, err := s.Session(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{p, p + "-wal", p + "-shm"} {
				if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
			}
			if how == "replaced" {
				if err := os.WriteFile(p, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := s.BeginTurn(ctx, "s", "t2", "after the removal")
			if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "scv stop, then scv start") {
				t.Fatalf("BeginTurn after the file was %s: %v, want ErrGone naming %s and the restart", how, err, p)
			}
			if err := s.Rename(ctx, "s", "x"); !errors.Is(err, ErrGone) {
				t.Errorf("a later write: %v, want ErrGone", err)
			}
			if n := strings.Count(logs.String(), "store database file removed or replaced"); n != 1 {
				t.Errorf("%d log lines about the file, want 1:\n%s", n, logs)
			}
			if x, err := s.Session(ctx, "s"); err != nil || x.Turns != 1 {
				t.Errorf("read after the removal: %+v, %v", x, err)
			}
			s.Close()
			fresh := openAt(t, p, nil)
			if page, err := fresh.ListSessions(ctx, ListOptions{}); err != nil || len(page.Sessions) != 0 {
				t.Errorf("the next open: %d sessions, %v; want a new, empty database", len(page.Sessions), err)
			}
			mustSession(t, fresh, "s2")
		})
	}
}

// BenchmarkCheckFile is the check every write transaction pays: one stat
// of the database path.
func BenchmarkCheckFile(b *testing.B) {
	s := openTemp(b)
	for b.Loop() {
		if err := s.checkFile(); err != nil {
			b.Fatal(err)
		}
	}
}
