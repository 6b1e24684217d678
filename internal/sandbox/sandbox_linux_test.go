package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// requireLandlock skips a test on a kernel without Landlock, saying so.
func requireLandlock(t *testing.T) Report {
	t.Helper()
	rep := Probe()
	if !rep.Available {
		t.Skipf("the kernel cannot sandbox: %s", rep.Reason)
	}
	return rep
}

func helper(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// starters are the two ways a confined command starts: from a thread of
// this process confined by Command.Confine (what SCV does), and through
// the helper, `scv sandbox-exec` (this test binary plays SCV's).
var starters = []string{"thread", "helper"}

// runIn runs argv under c in workspace, started as how says (one of
// starters), and returns its combined output and exit code.
func runIn(t *testing.T, how string, c Config, workspace string, argv ...string) (string, int) {
	t.Helper()
	cmd, err := Wrap(c, workspace, argv[0], argv[1:], []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Close()
	x := exec.Command(cmd.Path, cmd.Args...)
	if how == "helper" {
		p := Policy{Mode: c.Mode, Network: c.Network, Workspace: workspace, WritableRoots: c.WritableRoots,
			DenyRead: c.DenyRead, TempDir: cmd.TempDir, BestEffort: c.BestEffort}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		x = exec.Command(helper(t), append([]string{HelperCommand, "--policy=" + string(js), "--"}, argv...)...)
	}
	var out bytes.Buffer
	x.Env, x.Dir, x.Stdout, x.Stderr = cmd.Env, workspace, &out, &out
	if how == "helper" {
		err = x.Start()
	} else {
		err = startConfined(x, cmd.Confine)
	}
	if err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	err = x.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %v: %v", argv, err)
	}
	return out.String(), x.ProcessState.ExitCode()
}

// startConfined starts x from a fresh locked thread that confine restricts
// first, as proc.Spec.Confine does.
func startConfined(x *exec.Cmd, confine func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := confine(); err != nil {
			done <- err
			return
		}
		done <- x.Start()
	}()
	return <-done
}

// TestSeccompSyscalls runs each filtered system call, and some that must
// stay allowed, inside the sandbox and checks what the kernel answered.
func TestSeccompSyscalls(t *testing.T) {
	rep := requireLandlock(t)
	if !rep.Seccomp {
		t.Skip("no seccomp filter for this architecture")
	}
	const ok, eperm, notEPERM = "ok", "operation not permitted", "!eperm"
	unixWant := eperm
	if rep.ABI >= minABIUnix {
		unixWant = ok
	}
	tcpWant := ok
	if rep.ABI < minABINet {
		tcpWant = eperm
	}
	cases := []struct {
		probe        string
		noNet, inNet string
	}{
		{"socket-unix-stream", unixWant, unixWant},
		{"socket-unix-dgram", unixWant, unixWant},
		{"socketpair-unix", ok, ok},
		{"socket-inet-stream", tcpWant, ok},
		{"socket-inet-stream-cloexec", tcpWant, ok},
		{"socket-inet-tcp", tcpWant, ok},
		{"socket-inet6-stream", tcpWant, ok},
		{"socket-inet-mptcp", eperm, notEPERM},
		{"socket-inet-dgram", eperm, ok},
		{"socket-inet6-dgram", eperm, ok},
		{"socket-inet-raw", eperm, ""},
		{"socket-inet-icmp-dgram", eperm, ""},
		{"socket-netlink", eperm, ok},
		{"socket-packet", eperm, ""},
		{"socket-vsock", eperm, ""},
		{"sendto-fastopen", eperm, notEPERM},
		{"sendmsg-fastopen", eperm, notEPERM},
		{"sendto-plain-pair", ok, ok},
		{"io_uring_setup", eperm, eperm},
		{"getpid", ok, ok},
	}
	ws := t.TempDir()
	exe := helper(t)
	for _, network := range []bool{false, true} {
		for _, c := range cases {
			want := c.noNet
			if network {
				want = c.inNet
			}
			if want == "" {
				continue // decided by the kernel and our privileges, not the filter
			}
			for _, how := range starters {
				t.Run(how+"/"+map[bool]string{false: "no-network/", true: "network/"}[network]+c.probe, func(t *testing.T) {
					out, _ := runIn(t, how, Config{Mode: ModeWorkspaceWrite, Network: network}, ws, exe, "probe", c.probe)
					got := strings.TrimSpace(out)
					switch want {
					case notEPERM:
						if got == eperm {
							t.Errorf("%s: refused with EPERM, want the kernel's own answer", c.probe)
						}
					default:
						if got != want {
							t.Errorf("%s = %q, want %q", c.probe, got, want)
						}
					}
				})
			}
		}
	}
}

// TestFilesystemRules checks each filesystem rule with a real shell.
func TestFilesystemRules(t *testing.T) {
	requireLandlock(t)
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	extra := filepath.Join(root, "extra")
	outside := filepath.Join(root, "outside")
	home := filepath.Join(root, "home")
	for _, d := range []string{ws, extra, outside, filepath.Join(home, ".ssh"), filepath.Join(home, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(home, ".ssh", "id_ed25519"): "KEY",
		filepath.Join(home, ".bashrc"):            "rc",
		filepath.Join(outside, "f"):               "outside",
		filepath.Join(ws, "in"):                   "inside",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ww := Config{Mode: ModeWorkspaceWrite, WritableRoots: []string{extra}, DenyRead: []string{filepath.Join(home, ".ssh")}}
	ro := ww
	ro.Mode = ModeReadOnly
	cases := []struct {
		name   string
		c      Config
		script string
		allow  bool
	}{
		{"write in the workspace", ww, "echo x > in2 && mkdir d && mv in2 d/ && rm -r d", true},
		{"write in a writable root", ww, "echo x > " + extra + "/f", true},
		{"write in the temp dir", ww, `echo x > "$TMPDIR/f" && cat "$TMPDIR/f"`, true},
		{"write to /dev/null", ww, "echo x > /dev/null && echo x >/dev/stderr", true},
		{"read outside", ww, "cat " + outside + "/f " + home + "/.bashrc", true},
		{"write outside", ww, "echo x > " + outside + "/g", false},
		{"overwrite outside", ww, "echo x >> " + outside + "/f", false},
		{"truncate outside", ww, "truncate -s 0 " + outside + "/f", false},
		{"mv out", ww, "mv in " + outside + "/", false},
		{"hard link out", ww, "ln " + outside + "/f ./link && echo x >> ./link", false},
		{"read a hidden file", ww, "cat " + home + "/.ssh/id_ed25519", false},
		{"list a hidden dir", ww, "ls " + home + "/.ssh", false},
		{"read-only: read the workspace", ro, "cat in", true},
		{"read-only: write the workspace", ro, "echo x > in3", false},
		{"read-only: write a writable root", ro, "echo x > " + extra + "/g", false},
		{"read-only: temp dir", ro, `echo x > "$TMPDIR/f"`, true},
	}
	for _, how := range starters {
		for _, c := range cases {
			t.Run(how+"/"+c.name, func(t *testing.T) {
				out, code := runIn(t, how, c.c, ws, "/bin/bash", "-c", c.script)
				if c.allow && code != 0 {
					t.Errorf("%q failed (%d), want it allowed:\n%s", c.script, code, out)
				}
				if !c.allow && code == 0 {
					t.Errorf("%q succeeded: the sandbox was breached\n%s", c.script, out)
				}
			})
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "outside" {
		t.Errorf("the file outside changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "g")); err == nil {
		t.Error("a file was created outside the workspace")
	}
}

func TestWrapOffIsUnchanged(t *testing.T) {
	cmd, err := Wrap(Config{Mode: ModeOff}, "/ws", "/bin/bash", []string{"-c", "true"}, []string{"A=1"})
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != "/bin/bash" || strings.Join(cmd.Args, " ") != "-c true" || strings.Join(cmd.Env, " ") != "A=1" || cmd.TempDir != "" || cmd.Confine != nil {
		t.Errorf("sandbox off changed the command: %+v", cmd)
	}
}

func TestWrapKeepsTheCommandLine(t *testing.T) {
	requireLandlock(t)
	cmd, err := Wrap(Config{Mode: ModeReadOnly}, "/ws", "/bin/bash", []string{"-c", "true"}, []string{"TMPDIR=/old", "A=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Close()
	if cmd.Path != "/bin/bash" || strings.Join(cmd.Args, " ") != "-c true" || cmd.Confine == nil {
		t.Errorf("sandboxed command: %q %q, confine set %v", cmd.Path, cmd.Args, cmd.Confine != nil)
	}
	if strings.Join(cmd.Env, " ") != "A=1 TMPDIR="+cmd.TempDir {
		t.Errorf("env %q, want TMPDIR replaced by the command's temp dir %s", cmd.Env, cmd.TempDir)
	}
	js, _ := json.Marshal(Policy{Mode: ModeReadOnly, Workspace: "/ws", TempDir: cmd.TempDir})
	p, argv, err := parseHelperArgs([]string{"--policy=" + string(js), "--", "/bin/bash", "-c", "true"})
	if err != nil || p.Mode != ModeReadOnly || p.Workspace != "/ws" || p.TempDir != cmd.TempDir || len(argv) != 3 {
		t.Errorf("helper policy round trip: %+v %q %v", p, argv, err)
	}
	dir := cmd.TempDir
	cmd.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the temp dir %s: %v", dir, err)
	}
}
