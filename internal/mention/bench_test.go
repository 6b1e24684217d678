package mention

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system time so far: with the machine
// shared, it says what the work costs where wall time says how loaded the
// machine was.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchTree makes 100,000 files: 100 packages × 10 directories × 100
// files, plus a .gitignore in each package (dir 9 ignored), so the walk
// judges patterns as it would in a real repository.
func benchTree(b *testing.B) string {
	b.Helper()
	ws := b.TempDir()
	for p := range 100 {
		pkg := filepath.Join(ws, fmt.Sprintf("pkg%03d", p))
		for d := range 10 {
			dir := filepath.Join(pkg, fmt.Sprintf("dir%d", d))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range 100 {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file_%03d.go", f)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(pkg, ".gitignore"), []byte("dir9/\n*.tmp\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkMentionFirstResults is the time from `@` to the first ranked
// paths over a 100,000-file tree: open the walk, collect its first batch
// (what the TUI's first walk command does) and rank it.
func BenchmarkMentionFirstResults(b *testing.B) {
	ws := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for b.Loop() {
		w, err := NewWalker(ws, WalkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		batch, err := w.Next(b.Context(), 4096)
		if err != nil {
			b.Fatal(err)
		}
		var ix Index
		ix.Add(batch)
		if got := ix.Find("file_05", 8); len(got) == 0 {
			b.Fatal("no first results")
		}
		w.Close()
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkMentionWalk walks the whole 100,000-file tree into an index
// and reports the index's retained heap (index-bytes).
func BenchmarkMentionWalk(b *testing.B) {
	ws := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	var retained uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w, err := NewWalker(ws, WalkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var ix Index
		for !w.Done() {
			batch, err := w.Next(b.Context(), 4096)
			if err != nil {
				b.Fatal(err)
			}
			ix.Add(batch)
		}
		w.Close()
		runtime.GC()
		runtime.ReadMemStats(&after)
		retained = after.HeapAlloc - before.HeapAlloc
		if ix.Len() != 100*9*100+100*9+100+100 {
			b.Fatalf("walked %d paths", ix.Len())
		}
		runtime.KeepAlive(&ix)
	}
	b.ReportMetric(float64(retained), "index-bytes")
}

// BenchmarkMentionFind ranks a full index of 100,000 paths for one
// keystroke.
func BenchmarkMentionFind(b *testing.B) {
	var ix Index
	for p := range 100 {
		for d := range 10 {
			for f := range 100 {
				ix.Add([]string{fmt.Sprintf("pkg%03d/dir%d/file_%03d.go", p, d, f)})
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if got := ix.Find("p42d3f7", 8); len(got) == 0 {
			b.Fatal("no match")
		}
	}
}
