package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
)

// benchServer is one in-process server of BenchmarkTurn10Steps.
type benchServer struct {
	fake *modeltest.Server
	c    *client.Conn
	ws   string
	st   *store.Store
}

func newBenchServer(b *testing.B, withStore bool) *benchServer {
	bs := &benchServer{fake: modeltest.New(b)}
	home := b.TempDir()
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	bs.ws = ws
	src := make([]byte, 4096)
	for i := range src {
		src[i] = "abcdefghij klmnopqrstuvwxyz\n"[i%28]
	}
	if err := os.WriteFile(filepath.Join(ws, "a.go"), src, 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n", bs.fake.URL())
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	opts := server.Options{Factory: app.New(app.Options{Layout: paths.Layout{Home: home}, Env: map[string]string{"OPENAI_API_KEY": "sk-test", "HOME": home}})}
	if withStore {
		bs.st = openTestStore(b, home, nil)
		opts.Store = bs.st
	}
	bs.c, _ = connect(b, server.New(opts))
	return bs
}

// turn runs one 10-step turn in a new session whose first turn (one
// request, not measured) has already run, and returns its time from
// turn.start to turn.completed: the turn of a session in progress, with a
// small history, so the fake server's work stays the same in every turn.
func (bs *benchServer) turn(b *testing.B) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	started, err := bs.c.StartSession(b.Context(), proto.SessionStart{Cwd: bs.ws})
	if err != nil {
		b.Fatal(err)
	}
	bs.fake.Script(modeltest.Text("Hello."))
	if _, ok := turn(b, bs.c, started.SessionID, "hello").(*proto.TurnCompleted); !ok {
		b.Fatal("the first turn did not complete")
	}
	for i := range 10 {
		bs.fake.Script(modeltest.ToolCall(fmt.Sprint("c", i), "read", `{"path":"a.go"}`))
	}
	bs.fake.Script(modeltest.Text("All ten files read; the answer is short."), modeltest.Usage(3000, 20))
	b.StartTimer()
	t0 := time.Now()
	if _, ok := turn(b, bs.c, started.SessionID, "read a.go ten times").(*proto.TurnCompleted); !ok {
		b.Fatal("the turn did not complete")
	}
	d := time.Since(t0)
	b.StopTimer()
	if _, err := bs.c.Call(b.Context(), &proto.SessionClose{SessionID: started.SessionID}); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkTurn10Steps is the cost of persistence per turn: a turn of 10
// tool steps (a read of a 4 KiB file each) and a final answer, the second
// turn of a session, through the in-process server against the scripted
// fake model, once with the session database (the turn begun, every event
// appended, a durable completion with the history before turn.completed)
// and once without it, in turn, so both see the same machine load. It
// reports both times per turn, their ratio, and the database's size per
// session (the 10-step turn and its short first turn).
func BenchmarkTurn10Steps(b *testing.B) {
	mem, disk := newBenchServer(b, false), newBenchServer(b, true)
	var tm, ts time.Duration
	n := 0
	for b.Loop() {
		tm += mem.turn(b)
		ts += disk.turn(b)
		n++
	}
	b.ReportMetric(float64(tm.Microseconds())/float64(n)/1000, "memory-ms/turn")
	b.ReportMetric(float64(ts.Microseconds())/float64(n)/1000, "store-ms/turn")
	b.ReportMetric(float64(ts)/float64(tm), "store/memory")
	disk.st.Checkpoint(b.Context())
	if stats, err := disk.st.Stats(b.Context()); err == nil {
		// The short first turns add ≈ 2 KiB each.
		b.ReportMetric(float64(stats.FileBytes)/float64(n)/1024, "db-KiB/session")
	}
}
