package store

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
)

// Databases for the benchmarks of other packages (resuming a long session
// through the daemon and the TUI, `scv sessions search` as a process):
//
//	go test ./internal/store -run '^TestWriteBenchDB$' -args \
//	    -bench-db=HOME -bench-db-kind=resume1000|search10000 [-bench-db-workspace=DIR]
//
// writes HOME/state/scv.db with generated realistic turns (gen_test.go).
// resume1000: one session "bench-1000" of 1,000 turns in DIR; search10000:
// 10,000 sessions of three turns in 20 workspaces (as BenchmarkSearch).
var (
	benchDB          = flag.String("bench-db", "", "write a benchmark database into this instance home")
	benchDBKind      = flag.String("bench-db-kind", "resume1000", "resume1000 or search10000")
	benchDBWorkspace = flag.String("bench-db-workspace", "/tmp", "the workspace of the resume1000 session")
)

func TestWriteBenchDB(t *testing.T) {
	if *benchDB == "" {
		t.Skip("writes a benchmark database only when -bench-db is given")
	}
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(*benchDB, "state", "scv.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.opts.Holder = self // a writer must hold the sessions it fills
	s.bulk = true
	g := newGen(5)
	fill := func(sid, ws string, turns int, small bool) {
		if _, err := s.CreateSession(ctx, NewSession{ID: sid, Workspace: ws, Provider: "openai", Model: "gpt-4.1-mini", Origin: OriginTUI}); err != nil {
			t.Fatal(err)
		}
		for j := range turns {
			tn := g.turn(sid, j, false)
			if small {
				tn.Events = tn.Events[len(tn.Events)-1:]
				tn.History = tn.History[:1]
			}
			persist(t, s, sid, tn)
		}
		if err := s.Release(ctx, sid); err != nil {
			t.Fatal(err)
		}
	}
	switch *benchDBKind {
	case "resume1000":
		fill("bench-1000", *benchDBWorkspace, 1000, false)
	case "search10000":
		for i := range 10000 {
			fill(fmt.Sprintf("s%05d", i), fmt.Sprintf("/home/u/p%d", i%20), 3, true)
		}
	default:
		t.Fatalf("unknown -bench-db-kind %q", *benchDBKind)
	}
	s.Compact(ctx)
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d sessions, %d turns, %.1f MiB; search words by rank: 0 %q, 50 %q, 1000 %q", st.Path, st.Sessions, st.Turns,
		float64(st.FileBytes)/(1<<20), genVocab[0], genVocab[50], genVocab[1000])
}
