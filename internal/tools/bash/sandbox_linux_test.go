package bash

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/sandbox"
	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

const python = "/usr/bin/python3"

// secret is what every hidden file holds: output containing it is a breach.
const secret = "SECRET-"

// fixture is one escape attempt's world, built fresh for each run: a
// workspace, a fake user home with every default hidden path, an SCV home
// with a database, config and socket, a directory outside, an extra
// writable root, and listeners and a victim process the attempt tries to
// reach.
type fixture struct {
	root, ws, home, scvHome, outside, extra, tmpMark string
	tcp, abs, sock                                   *testutil.Listener
	udp                                              *udpCounter
	victim                                           *exec.Cmd
	victimGone                                       chan struct{}
	cfg                                              sandbox.Config
	// helper is an executable that runs `sandbox-exec` as SCV's does
	// (this test binary).
	helper string
}

type udpCounter struct {
	pc   net.PacketConn
	n    atomic.Int64
	wg   sync.WaitGroup
	mu   sync.Mutex
	from map[string]bool // senders seen, so settled can find its probe
}

func countDatagrams(t *testing.T) *udpCounter {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &udpCounter{pc: pc, from: map[string]bool{}}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			c.mu.Lock()
			c.from[from.String()] = true
			c.mu.Unlock()
			if string(buf[:n]) != udpProbe {
				c.n.Add(1)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); c.wg.Wait() })
	return c
}

const udpProbe = "scv-escape-probe"

// settled is the count once every datagram already sent has been read: a
// probe sent now queues behind them, so when the reader has seen it, it
// has seen them.
func (c *udpCounter) settled(t *testing.T) int64 {
	t.Helper()
	conn, err := net.Dial("udp4", c.pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(udpProbe)); err != nil {
		t.Fatal(err)
	}
	from := conn.LocalAddr().String()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		done := c.from[from]
		c.mu.Unlock()
		if done {
			return c.n.Load()
		}
		if time.Now().After(deadline) {
			t.Fatal("the test's own UDP socket did not receive a probe within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func newFixture(t *testing.T, mode sandbox.Mode) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{root: root, ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), scvHome: filepath.Join(root, "home", ".scv"),
		outside: filepath.Join(root, "outside"), extra: filepath.Join(root, "extra"),
		tmpMark: filepath.Join(os.TempDir(), "scv-escape-"+rand.Text())}
	t.Cleanup(func() { os.Remove(f.tmpMark) })
	for _, d := range []string{f.ws, f.home, f.scvHome, f.outside, f.extra} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.ws, "a.txt"), "hello\n")
	write(filepath.Join(f.outside, "file"), "outside\n")
	write(filepath.Join(f.home, ".bashrc"), "# rc\n")
	write(filepath.Join(f.scvHome, "scv.db"), secret+"db")
	write(filepath.Join(f.scvHome, "config.toml"), secret+"config")
	for _, p := range hiddenFiles(f.home) {
		write(p, secret+filepath.Base(p))
	}
	var deny []string
	for _, d := range sandbox.DefaultDenyRead {
		deny = append(deny, filepath.Join(f.home, d))
	}
	deny = append(deny, f.scvHome)
	f.cfg = sandbox.Config{Mode: mode, WritableRoots: []string{f.extra}, DenyRead: deny}
	f.helper = testutil.Executable(t)
	f.tcp = testutil.ListenOn(t, "tcp4", "127.0.0.1:0")
	f.abs = testutil.ListenOn(t, "unix", "@scv-escape-"+rand.Text())
	f.sock = testutil.ListenOn(t, "unix", filepath.Join(f.scvHome, "server.sock"))
	f.udp = countDatagrams(t)
	f.victim = exec.Command("sleep", "600")
	f.victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.victim.Start(); err != nil {
		t.Fatal(err)
	}
	f.victimGone = make(chan struct{})
	go func() { f.victim.Wait(); close(f.victimGone) }()
	t.Cleanup(func() { f.victim.Process.Kill(); <-f.victimGone })
	return f
}

// hiddenFiles is one file in (or at) each default deny_read path.
func hiddenFiles(home string) []string {
	var out []string
	for _, d := range sandbox.DefaultDenyRead {
		p := filepath.Join(home, d)
		if !strings.Contains(filepath.Base(d), ".") || strings.HasPrefix(filepath.Base(d), ".") && !strings.ContainsAny(filepath.Base(d)[1:], ".") && isDirEntry(d) {
			p = filepath.Join(p, "key")
		}
		out = append(out, p)
	}
	return out
}

// isDirEntry says a default deny_read entry names a directory.
func isDirEntry(d string) bool {
	switch d {
	case ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials":
		return false
	}
	return true
}

func (f *fixture) expand(s string) string {
	return strings.NewReplacer("{WS}", f.ws, "{HOME}", f.home, "{SCVHOME}", f.scvHome, "{OUT}", f.outside,
		"{EXTRA}", f.extra, "{TMPMARK}", f.tmpMark, "{PY}", python,
		"{TCP}", f.tcp.Port(),
		"{UDP}", strconv.Itoa(f.udp.pc.LocalAddr().(*net.UDPAddr).Port),
		"{ABS}", strings.TrimPrefix(f.abs.NetAddr().String(), "@"),
		"{SOCK}", filepath.Join(f.scvHome, "server.sock"),
		"{VICTIM}", strconv.Itoa(f.victim.Process.Pid),
		"{HELPER}", f.helper).Replace(s)
}

// breaches lists what the attempt reached that the sandbox must keep out
// of reach. The listeners are read once settled: a connection the attempt
// made just before it exited may not have been accepted yet.
func (f *fixture) breaches(t *testing.T, output string) []string {
	t.Helper()
	var out []string
	if strings.Contains(output, secret) {
		out = append(out, "read a hidden file: "+output)
	}
	ents, _ := os.ReadDir(f.outside)
	if len(ents) != 1 {
		out = append(out, "created a file outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "file")); string(b) != "outside\n" {
		out = append(out, "changed a file outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(f.home, ".bashrc")); string(b) != "# rc\n" {
		out = append(out, "changed ~/.bashrc")
	}
	if _, err := os.Lstat(f.tmpMark); err == nil {
		out = append(out, "wrote to /tmp")
	}
	if _, err := os.Stat(filepath.Join(f.ws, "a.txt")); err != nil {
		out = append(out, "moved a workspace file out")
	}
	select {
	case <-f.victimGone:
		out = append(out, "killed a process outside the sandbox")
	default:
	}
	for name, n := range map[string]int64{"TCP": f.tcp.Settled(t), "abstract unix": f.abs.Settled(t), "SCV socket": f.sock.Settled(t), "UDP": f.udp.settled(t)} {
		if n != 0 {
			out = append(out, strconv.FormatInt(n, 10)+" "+name+" connection(s) reached the test's listener")
		}
	}
	return out
}

// escapes are the attempts: each must fail in the sandbox, and each
// succeeds (exit 0, with a breach the fixture sees) without it.
func escapes() []struct{ name, script string } {
	e := []struct{ name, script string }{
		{"write absolute path", "echo x > {OUT}/new"},
		{"write through ..", "echo x > ../outside/new"},
		{"write through a symlink in the workspace", "ln -s {OUT} link && echo x > link/new"},
		{"hard link out", "ln {OUT}/file hl && echo x >> hl"},
		{"mv out", "mv a.txt {OUT}/"},
		{"write /tmp", "echo x > {TMPMARK}"},
		{"overwrite ~/.bashrc", "echo x >> ~/.bashrc"},
		{"truncate outside", "truncate -s 0 {OUT}/file"},
		{"read SCV's database", "cat {SCVHOME}/scv.db"},
		{"read SCV's config", "cat {SCVHOME}/config.toml"},
		{"tcp via /dev/tcp", "exec 3<>/dev/tcp/127.0.0.1/{TCP}"},
		// The listener closes each connection at once: curl reports an
		// empty reply (52) or, when the close races its request, a reset
		// (56); a refused connection is 7.
		{"tcp via curl", "curl -sS --max-time 10 http://127.0.0.1:{TCP}/ ; rc=$?; test $rc -eq 52 -o $rc -eq 56"},
		{"tcp via python", `{PY} -c "import socket; socket.create_connection(('127.0.0.1', {TCP}))"`},
		{"udp sendto via python", `{PY} -c "import socket, time; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {UDP})); time.sleep(0.2)"`},
		{"udp via /dev/udp", "echo x > /dev/udp/127.0.0.1/{UDP} && sleep 0.2"},
		{"kill the daemon", "kill -TERM {VICTIM} && sleep 0.5"},
		{"abstract unix socket", `{PY} -c "import socket; socket.socket(socket.AF_UNIX).connect('\0{ABS}')"`},
		{"SCV's unix socket", `{PY} -c "import socket; socket.socket(socket.AF_UNIX).connect('{SOCK}')"`},
		{"setsid", "setsid -w bash -c 'echo x > {OUT}/new'"},
		{"double fork", "( ( echo x > {OUT}/new ) & wait ) ; sleep 0.1; test -e {OUT}/new"},
		{"exec another shell", "exec /bin/sh -c 'echo x > {OUT}/new'"},
		{"run scv's helper again", `{HELPER} sandbox-exec '--policy={"mode":"workspace-write","network":true,"workspace":"/","best_effort":true}' -- /bin/sh -c 'echo x > {OUT}/new'`},
	}
	for _, p := range hiddenFiles("{HOME}") {
		name := strings.TrimPrefix(p, "{HOME}/")
		e = append(e,
			struct{ name, script string }{"cat ~/" + name, "cat " + p},
			struct{ name, script string }{"python open ~/" + name, `{PY} -c "print(open('` + p + `').read())"`},
			struct{ name, script string }{"cp ~/" + name, "cp " + p + " {WS}/stolen && cat {WS}/stolen"},
		)
	}
	return e
}

// exitText is an exit code for a message: the number, or "none".
func exitText(code *int) string {
	if code == nil {
		return "none"
	}
	return strconv.Itoa(*code)
}

func requireSandbox(t *testing.T) {
	t.Helper()
	if rep := sandbox.Probe(); !rep.Available {
		t.Skipf("the kernel cannot sandbox, so the escape suite cannot run: %s", rep.Reason)
	}
	if _, err := os.Stat(python); err != nil {
		t.Skipf("the escape suite needs %s: %v", python, err)
	}
}

// runCall runs command as a bash tool call of a registry with f's sandbox
// in mode and returns the decoded result.
func (f *fixture) runCall(t *testing.T, mode sandbox.Mode, command string) (Result, tool.Result) {
	t.Helper()
	cfg := f.cfg
	cfg.Mode = mode
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + f.home}
	r := newRegistry(t, Options{Env: env, Sandbox: cfg})
	p := plan(t, r, tool.Env{Workspace: f.ws, SessionID: "s", CallID: "c", OutputLimit: 65536}, args(f.expand(command)))
	res := p.Run(t.Context())
	var out Result
	if err := json.Unmarshal([]byte(res.Output), &out); err != nil {
		t.Fatalf("result of %q is not the bash object: %v\n%s", command, err, res.Output)
	}
	return out, res
}

// TestEscapeSuite: exit 0 means breached. Every attempt runs twice, each
// time in a fresh fixture: without the sandbox it must succeed and breach
// (so the attempt is real), in workspace-write without network it must
// fail and breach nothing.
func TestEscapeSuite(t *testing.T) {
	requireSandbox(t)
	for _, e := range escapes() {
		t.Run(e.name, func(t *testing.T) {
			f := newFixture(t, sandbox.ModeOff)
			out, _ := f.runCall(t, sandbox.ModeOff, e.script)
			if b := f.breaches(t, out.Output); out.ExitCode == nil || *out.ExitCode != 0 || len(b) == 0 {
				t.Fatalf("without the sandbox the attempt did not breach (exit %s, breaches %v), so it proves nothing:\n%s", exitText(out.ExitCode), b, out.Output)
			}
			f = newFixture(t, sandbox.ModeWorkspaceWrite)
			out, _ = f.runCall(t, sandbox.ModeWorkspaceWrite, e.script)
			if out.ExitCode != nil && *out.ExitCode == 0 {
				t.Errorf("exit 0: the sandbox was breached\n%s", out.Output)
			}
			if b := f.breaches(t, out.Output); len(b) > 0 {
				t.Errorf("breached: %s\noutput:\n%s", strings.Join(b, "; "), out.Output)
			}
		})
	}
}

// TestSandboxAllows: what a sandboxed command is meant to do still works.
func TestSandboxAllows(t *testing.T) {
	requireSandbox(t)
	allowed := []struct{ name, script string }{
		{"write in the workspace", "echo x > f && mkdir -p d/e && mv f d/e/ && cat d/e/f && rm -r d"},
		{"write in a writable root", "echo x > {EXTRA}/f && cat {EXTRA}/f"},
		{"read the workspace", "cat a.txt"},
		{"temp dir", `echo x > "$TMPDIR/t" && cat "$TMPDIR/t"`},
		{"devices", "echo x > /dev/null && head -c 4 /dev/urandom > /dev/null && echo err >&2"},
		{"read outside", "cat {OUT}/file ~/.bashrc"},
		{"signal own children", "sleep 30 & kill $! && wait $! ; test $? -eq 143"},
	}
	for _, a := range allowed {
		t.Run(a.name, func(t *testing.T) {
			f := newFixture(t, sandbox.ModeWorkspaceWrite)
			out, _ := f.runCall(t, sandbox.ModeWorkspaceWrite, a.script)
			if out.ExitCode == nil || *out.ExitCode != 0 {
				t.Errorf("failed in the sandbox (exit %v):\n%s", out.ExitCode, out.Output)
			}
			if b := f.breaches(t, out.Output); len(b) > 0 {
				t.Errorf("breached: %s", strings.Join(b, "; "))
			}
		})
	}
}

// TestReadOnlyMode: read-only keeps the workspace readable and unwritable.
func TestReadOnlyMode(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t, sandbox.ModeReadOnly)
	if out, _ := f.runCall(t, sandbox.ModeReadOnly, "cat a.txt && echo x > \"$TMPDIR/t\""); out.ExitCode == nil || *out.ExitCode != 0 {
		t.Errorf("reading the workspace failed in read-only mode:\n%s", out.Output)
	}
	for _, s := range []string{"echo x > b.txt", "rm a.txt", "echo x > {EXTRA}/f"} {
		out, _ := f.runCall(t, sandbox.ModeReadOnly, s)
		if out.ExitCode != nil && *out.ExitCode == 0 {
			t.Errorf("%q succeeded in read-only mode", s)
		}
	}
	if _, err := os.Stat(filepath.Join(f.ws, "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only mode let a file be created: %v", err)
	}
}

// TestBlockedNote: a command the sandbox refused gets a note saying what
// was blocked, and the approval summary says how the call runs.
func TestBlockedNote(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t, sandbox.ModeWorkspaceWrite)
	cases := []struct{ script, want string }{
		{"echo x > {OUT}/new", "blocked by the sandbox: write outside the workspace (" + f.outside + "/new)"},
		{"cat {HOME}/.ssh/key", "blocked by the sandbox: read of " + f.home + "/.ssh/key, hidden by sandbox.deny_read"},
		{"curl -sS --max-time 10 http://127.0.0.1:{TCP}/", "blocked by the sandbox: network access (sandbox.network = false)"},
		{"kill -TERM {VICTIM}", "blocked by the sandbox: signal to a process outside the sandbox"},
		{"exit 3", ""},
	}
	for _, c := range cases {
		out, res := f.runCall(t, sandbox.ModeWorkspaceWrite, c.script)
		if out.Sandbox != c.want {
			t.Errorf("%q: sandbox note %q, want %q (output %q)", c.script, out.Sandbox, c.want, out.Output)
		}
		if res.Success {
			t.Errorf("%q succeeded", c.script)
		}
	}
	if d := New(Options{Sandbox: f.cfg}).Description(); !strings.Contains(d, "Commands run in an OS sandbox (workspace-write, no network)") || !strings.Contains(d, f.extra) {
		t.Errorf("the description does not tell the model about the sandbox:\n%s", d)
	}
	if d := New(Options{}).Description(); strings.Contains(d, "OS sandbox") {
		t.Errorf("unsandboxed description mentions the sandbox:\n%s", d)
	}
	r := newRegistry(t, Options{Sandbox: f.cfg})
	p := plan(t, r, tool.Env{Workspace: f.ws}, args("make"))
	if want := "make\n(in " + f.ws + ", timeout 600 s, sandboxed: workspace-write, no network)"; p.Summary != want || !p.Confined {
		t.Errorf("plan summary %q confined %v, want %q and confined", p.Summary, p.Confined, want)
	}
	f.cfg.Network = true
	r = newRegistry(t, Options{Sandbox: f.cfg})
	if p := plan(t, r, tool.Env{Workspace: f.ws}, args("make")); p.Confined || !strings.HasSuffix(p.Summary, "sandboxed: workspace-write, network allowed)") {
		t.Errorf("with network: summary %q confined %v", p.Summary, p.Confined)
	}
}

// TestSandboxGoBuild: a Go build of a tiny module in the workspace, with a
// private build cache there, works in the sandbox (it compiles the runtime
// from scratch: some ten seconds of CPU).
func TestSandboxGoBuild(t *testing.T) {
	requireSandbox(t)
	if testing.Short() {
		t.Skip("-short: a cold Go build takes a while")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not in PATH")
	}
	f := newFixture(t, sandbox.ModeWorkspaceWrite)
	script := "printf 'module tiny\\n\\ngo 1.21\\n' > go.mod && printf 'package main\\n\\nfunc main() { println(\\\"built\\\") }\\n' > main.go && " +
		"GOCACHE={WS}/.gocache GOPATH={WS}/.gopath GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off GOFLAGS= " + goBin + " build -o app . && ./app"
	out, _ := f.runCall(t, sandbox.ModeWorkspaceWrite, script)
	if out.ExitCode == nil || *out.ExitCode != 0 || !strings.Contains(out.Output, "built") {
		t.Errorf("go build failed in the sandbox (exit %v):\n%s", out.ExitCode, out.Output)
	}
	if b := f.breaches(t, out.Output); len(b) > 0 {
		t.Errorf("breached: %s", strings.Join(b, "; "))
	}
}
