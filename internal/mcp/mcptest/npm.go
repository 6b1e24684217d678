package mcptest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NPM locates the installed npm MCP servers.
type NPM struct {
	// Node is the node executable.
	Node string
	// Everything is the entry script of server-everything (argument:
	// stdio or streamableHttp).
	Everything string
	// Filesystem is the entry script of server-filesystem (arguments: the
	// allowed directories).
	Filesystem string
	// Loopback is the preload script that keeps a Node server on
	// 127.0.0.1.
	Loopback string
}

// InstallHint is what to run when the npm servers are missing or stale.
const InstallHint = "run .ci/npm-install internal/mcp/testdata/npm (.ci/run does) to install them into .cache/mcp-npm"

// RequireNPM finds the npm servers. It skips the test when Node.js is not
// installed, and fails it, saying what to run, when Node is there but the
// servers are not installed or their install is older than the lock file:
// tests never reach the network themselves.
func RequireNPM(t testing.TB) NPM {
	t.Helper()
	node, src, dest := RequireLockedInstall(t, "internal/mcp/testdata/npm", ".cache/mcp-npm",
		"the tests against the npm MCP servers", "the npm MCP servers", InstallHint)
	mods := filepath.Join(dest, "node_modules", "@modelcontextprotocol")
	n := NPM{Node: node, Everything: filepath.Join(mods, "server-everything", "dist", "index.js"),
		Filesystem: filepath.Join(mods, "server-filesystem", "dist", "index.js"), Loopback: filepath.Join(src, "loopback.cjs")}
	for _, f := range []string{n.Everything, n.Filesystem} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("npm MCP server missing (%v): %s", err, InstallHint)
		}
	}
	return n
}

// RequireLockedInstall checks an npm install made by a test-data install
// script: src (relative to the module root) holds the locked package.json
// and package-lock.json, dest the install with a .stamp of the lock's
// SHA-256. It skips the test when Node.js is not installed (naming
// skipping) and fails it with hint when the install is missing or older
// than the lock: tests never reach the network themselves. It returns the
// node executable and the absolute src and dest.
func RequireLockedInstall(t testing.TB, src, dest, skipping, what, hint string) (node, srcDir, destDir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("Node.js is not installed: skipping " + skipping)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, dest = filepath.Join(root, filepath.FromSlash(src)), filepath.Join(root, filepath.FromSlash(dest))
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	stamp, _ := os.ReadFile(filepath.Join(dest, ".stamp"))
	if strings.TrimSpace(string(stamp)) != hex.EncodeToString(sum[:]) {
		t.Fatalf("%s in %s are missing or older than %s/package-lock.json: %s", what, dest, src, hint)
	}
	return node, src, dest
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = up
	}
}

// StartEverythingHTTP runs server-everything's streamable HTTP mode on
// 127.0.0.1 (a free port) and returns its endpoint. The server and its
// process group are killed when the test ends.
func (n NPM) StartEverythingHTTP(t testing.TB) string {
	t.Helper()
	cmd := exec.Command(n.Node, "--require", n.Loopback, n.Everything, "streamableHttp")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT=0", "HOME=" + t.TempDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	port := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "SCV_LOOPBACK_PORT="); ok {
				select {
				case port <- p:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case p := <-port:
		return fmt.Sprintf("http://127.0.0.1:%s/mcp", p)
	case <-done:
		t.Fatal("server-everything (streamableHttp) exited before listening")
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything (streamableHttp) did not listen within 30 s")
	}
	return ""
}
