package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/proto"
)

// writeBenchDB fills in's session database with the store's generated
// realistic turns (internal/store's TestWriteBenchDB): kind resume1000 is
// one session "bench-1000" of 1,000 turns in in.ws.
func writeBenchDB(b *testing.B, in *instance, kind string) {
	b.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("go", "test", "./internal/store", "-count=1", "-run", "^TestWriteBenchDB$", "-args",
		"-bench-db="+in.home, "-bench-db-kind="+kind, "-bench-db-workspace="+in.ws)
	cmd.Dir = filepath.Dir(string(out[:len(out)-1]))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("write the benchmark database: %v\n%s", err, out)
	}
}

// BenchmarkResume1000 is the time from session.resume to session.resumed
// for a session of 1,000 realistic turns (33 MiB of database, 12 MiB of
// history) in the real daemon: the lease, the session's tools and model
// client, the history (every message) and the newest 50 turns with their
// events; then session.close. It reports the size of the session.resumed
// line.
func BenchmarkResume1000(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a 33 MiB database")
	}
	in := benchInstance(b, b.TempDir(), providerConfig("http://127.0.0.1:9"))
	writeBenchDB(b, in, "resume1000")
	_, c, stop := benchDaemon(b, in)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var size int
	var turns int
	for b.Loop() {
		ev, err := client.CallFor[*proto.SessionResumed](ctx, c, &proto.SessionResume{SessionID: "bench-1000"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		line, _ := proto.EncodeEvent(ev)
		size, turns = len(line), len(ev.Turns)
		if _, err := c.Call(ctx, &proto.SessionClose{SessionID: "bench-1000"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(size)/(1<<20), "resumed-MiB")
	b.ReportMetric(float64(turns), "turns-sent")
	if fi, err := os.Stat(filepath.Join(in.home, "state", "scv.db")); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "db-MiB")
	}
}
