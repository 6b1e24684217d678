// Package testutil holds the helpers the tests of several packages share:
// fixture trees (txtar archives or maps), golden txtar archives (their
// sections, the want section -update rewrites, a fake model scripted by
// one), locked buffers, line logs of a served stream, a counting loopback
// listener, process and PID-file waits, descriptor and RSS readings,
// building the scv binary, result checks and the -update flag.
// Nothing but tests (and the measurement programs under bench/) imports it;
// it imports no SCV package that imports it back.
package testutil

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/tools/txtar"
)

// Tree builds the fixture archive file below dir: every file of the txtar
// archive is written (mode 0644, parents created), and the directive lines
// of its comment make what a txtar file cannot hold:
//
//	link PATH TARGET   a symbolic link PATH → TARGET
//	fifo PATH          a named pipe
//	dir PATH           an empty directory
//
// $NAME in a TARGET is replaced by vars[NAME] (absolute paths the test
// made, such as a secret outside the workspace). Other comment lines are
// prose. It fails the test on any problem, naming the line.
func Tree(t testing.TB, archive, dir string, vars map[string]string) {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(a.Comment))
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		bad := func() { t.Fatalf("%s:%d: bad directive %q", archive, n, sc.Text()) }
		var p string
		if len(fields) > 1 {
			p = filepath.Join(dir, filepath.FromSlash(fields[1]))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		switch fields[0] {
		case "link":
			if len(fields) != 3 {
				bad()
			}
			target := os.Expand(fields[2], func(k string) string {
				v, ok := vars[k]
				if !ok {
					t.Fatalf("%s:%d: no value for $%s", archive, n, k)
				}
				return v
			})
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		case "fifo":
			if len(fields) != 2 {
				bad()
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		case "dir":
			if len(fields) != 2 {
				bad()
			}
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			if !strings.HasPrefix(fields[0], "#") {
				bad()
			}
		}
	}
}
