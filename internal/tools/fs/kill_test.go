package fs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

const helperEnv = "SCV_FS_TEST_HELPER_WS"

func TestMain(m *testing.M) {
	if ws := os.Getenv(helperEnv); ws != "" {
		os.Exit(writeHelper(ws))
	}
	os.Exit(m.Run())
}

const (
	oldSize = 2 << 20
	newSize = 4 << 20
)

// writeHelper is the child process of TestWriteKilled: it replaces d/big.txt
// with newSize bytes through the write tool, slowed down per chunk so that
// the parent's SIGKILL lands in the middle, and says "started" on stdout
// once the first chunk is in the temporary file.
func writeHelper(ws string) int {
	chunks := 0
	wr := newWrite(Options{MaxWriteBytes: newSize}, func() {
		chunks++
		if chunks == 1 {
			fmt.Println("started")
		}
		time.Sleep(3 * time.Millisecond)
	})
	args := testutil.JSON(map[string]any{"path": "d/big.txt", "mode": "replace", "content": strings.Repeat("N", newSize)})
	p, err := wr.Plan(tool.Env{Workspace: ws}, []byte(args))
	if err != nil {
		fmt.Println(err)
		return 2
	}
	res := p.Run(contextBackground())
	fmt.Println("done", res.Success, res.Output)
	return 0
}

// TestWriteKilled kills a real writer process with SIGKILL at different
// moments of a large replace: the target always holds exactly the old or the
// new content, leftover temporary files are refused by read, and later writes
// are not disturbed by them.
func TestWriteKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	target := filepath.Join(ws, "d", "big.txt")
	if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	old := bytes.Repeat([]byte("O"), oldSize)
	if err := os.WriteFile(target, old, 0o640); err != nil {
		t.Fatal(err)
	}
	rd := NewRead(Options{})
	outcomes := map[string]int{}
	for i, delay := range []time.Duration{0, 0, 20 * time.Millisecond, 60 * time.Millisecond, 120 * time.Millisecond, -1} {
		cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+ws)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() || lines.Text() != "started" {
			t.Fatalf("child %d: want \"started\", got %q", i, lines.Text())
		}
		if delay < 0 {
			// Let the last child finish: the write must then be complete.
			if !lines.Scan() || !strings.HasPrefix(lines.Text(), "done true") {
				t.Fatalf("child %d: want \"done true\", got %q", i, lines.Text())
			}
		} else {
			time.Sleep(delay)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
		_ = cmd.Wait()
		got, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case bytes.Equal(got, old):
			outcomes["old"]++
		case len(got) == newSize && bytes.Count(got, []byte("N")) == newSize:
			outcomes["new"]++
			old = got
		default:
			t.Fatalf("child %d: target holds a mix: %d bytes, %d of them new", i, len(got), bytes.Count(got, []byte("N")))
		}
		if i == 0 && !bytes.Equal(got, bytes.Repeat([]byte("O"), oldSize)) {
			t.Fatalf("child killed right after its first chunk, yet the target changed")
		}
		left := tempFiles(t, ws)
		if i == 0 && len(left) == 0 {
			t.Fatal("a writer killed mid-write left no temporary file; the kill did not land mid-write")
		}
		for _, p := range left {
			if filepath.Dir(p) != filepath.Dir(target) {
				t.Errorf("temporary file %s is not in the destination directory", p)
			}
			rel, _ := filepath.Rel(ws, p)
			_, res := call(t, rd, ws, testutil.JSON(map[string]any{"path": rel}))
			if res.Success || !strings.Contains(res.Output, "reserved prefix") {
				t.Errorf("read of leftover %s: %+v", rel, res)
			}
		}
	}
	if outcomes["new"] == 0 || outcomes["old"] == 0 {
		t.Errorf("outcomes %v: want both old and new seen", outcomes)
	}
	// Stale temporary files do not disturb later writes.
	wr := NewWrite(Options{})
	for _, mode := range []string{"replace", "create"} {
		name := map[string]string{"replace": "d/big.txt", "create": "d/next.txt"}[mode]
		_, res := call(t, wr, ws, testutil.JSON(map[string]any{"path": name, "mode": mode, "content": "after"}))
		if !res.Success {
			t.Fatalf("%s after killed writers: %+v", mode, res)
		}
		if got := readString(t, filepath.Join(ws, name)); got != "after" {
			t.Errorf("%s holds %q", name, got)
		}
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("target mode after replaces: %v %v", fi.Mode(), err)
	}
	t.Logf("outcomes %v, leftover temporary files %d", outcomes, len(tempFiles(t, ws)))
}

func contextBackground() context.Context { return context.Background() }
