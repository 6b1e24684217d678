package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

type agentsEnv struct {
	env     Env
	scvHome string
	user    string
}

func newAgentsEnv(t *testing.T) *agentsEnv {
	t.Helper()
	root := t.TempDir()
	e := &agentsEnv{scvHome: filepath.Join(root, "scv"), user: filepath.Join(root, "user")}
	os.MkdirAll(e.user, 0o700)
	e.env = Env{"SCV_HOME": e.scvHome, "HOME": e.user, "PATH": os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": "sk-ant-planted", "OPENAI_API_KEY": "sk-openai-planted"}
	return e
}

func (e *agentsEnv) run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(t.Context(), args, Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb}, e.env)
	return code, out.String(), errb.String()
}

func (e *agentsEnv) writeConfig(t *testing.T, body string) {
	t.Helper()
	os.MkdirAll(e.scvHome, 0o700)
	if err := os.WriteFile(filepath.Join(e.scvHome, "config.toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func noSecret(t *testing.T, secret string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, secret) {
			t.Errorf("output contains the key %q:\n%s", secret, s)
		}
	}
}

func TestAgentsPsKill(t *testing.T) {
	e := newAgentsEnv(t)
	if code, out, _ := e.run(t, "", "agents", "ps"); code != 0 || out != "no delegations\n" {
		t.Errorf("empty ps: %d %q", code, out)
	}
	if code, _, _ := e.run(t, "", "agents", "kill"); code != ExitUsage {
		t.Errorf("kill without a handle: exit %d", code)
	}
	if code, _, _ := e.run(t, "", "agents", "kill", "codex-123456", "--orphans"); code != ExitUsage {
		t.Errorf("kill with both: exit %d", code)
	}
	dir := filepath.Join(e.scvHome, "run", "delegations")
	tr, err := delegation.New(delegation.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := tr.NewHandle("codex")
	done := make(chan proc.Result, 1)
	var pid int
	started := make(chan struct{})
	go func() {
		res, _ := proc.Run(t.Context(), proc.Spec{
			Path: "/bin/bash", Args: []string{"-c", "setsid sleep 300 & sleep 300"},
			Env: []string{"PATH=" + os.Getenv("PATH"), delegation.EnvParent + "=" + delegation.Tag("", "i", "s", h)},
			OnStart: func(p int) {
				pid = p
				tr.Start(delegation.Record{Handle: h, Agent: "codex", Session: "s", Cwd: "/", Depth: 1, PID: p})
				close(started)
			},
			AfterExit: func() { tr.Sweep(h) },
		})
		tr.Finish(h)
		done <- res
	}()
	<-started
	code, out, _ := e.run(t, "", "agents", "ps")
	if code != 0 || !strings.Contains(out, h) || !strings.Contains(out, "running") {
		t.Errorf("ps: %d\n%s", code, out)
	}
	time.Sleep(100 * time.Millisecond) // let the setsid child start
	code, out, stderr := e.run(t, "", "agents", "kill", h)
	if code != 0 || out != "stopped "+h+"\n" {
		t.Errorf("kill: %d %q %q", code, out, stderr)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("killed run did not end")
	}
	_ = pid
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) && tagged(h) {
		time.Sleep(20 * time.Millisecond)
	}
	if tagged(h) {
		t.Errorf("processes tagged %s survived kill", h)
	}

	// An orphan: a record whose owner is gone.
	rec := delegation.Record{Handle: "pi-abcdef", Agent: "pi", OwnerPID: 1 << 22, OwnerStart: 1, StartedAt: time.Now()}
	b, _ := json.Marshal(rec)
	os.WriteFile(filepath.Join(dir, "pi-abcdef.json"), b, 0o600)
	if _, out, _ := e.run(t, "", "agents", "ps"); strings.Contains(out, "pi-abcdef") {
		t.Errorf("ps without --all lists the orphan:\n%s", out)
	}
	if _, out, _ := e.run(t, "", "agents", "ps", "--all"); !strings.Contains(out, "pi-abcdef") || !strings.Contains(out, "orphan") {
		t.Errorf("ps --all:\n%s", out)
	}
	if code, out, _ := e.run(t, "", "agents", "kill", "--orphans"); code != 0 || out != "stopped 1 orphaned delegation(s)\n" {
		t.Errorf("kill --orphans: %d %q", code, out)
	}
	if _, out, _ := e.run(t, "", "agents", "ps", "--all", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("records left: %s", out)
	}
}

// TestAgentsKillOrphansStopsCalls: `kill --orphans` stops a bash call
// recorded by an SCV process that died (its leader's group and the
// processes carrying its tag, one that left the group included), removes
// its record and says so on stderr (the output counts delegations only).
// The cgroup leaves' half is the kill-orphans case of the e2e
// TestKilledDaemonLeafReapedOnRestart.
func TestAgentsKillOrphansStopsCalls(t *testing.T) {
	e := newAgentsEnv(t)
	const tag = "SCV_BASH_CALL=orphanedcall0123456789"
	cmd := exec.Command("/bin/bash", "-c", "setsid sleep 300 & exec sleep 300")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), tag}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		proc.StopTagged(tag, 0)
		<-waited
	})
	start, err := proc.StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for countTagged(tag) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // the setsid child starts
	}
	dir := filepath.Join(e.scvHome, "run", "calls")
	os.MkdirAll(dir, 0o700)
	rec := delegation.CallRecord{ID: "0123456789abcdef", Tag: tag, Session: "s", CallID: "c1", PID: cmd.Process.Pid, PIDStart: start,
		OwnerPID: 1 << 22, OwnerStart: 1, StartedAt: time.Now()}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, rec.ID+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := e.run(t, "", "agents", "kill", "--orphans")
	if code != 0 || out != "stopped 0 orphaned delegation(s)\n" {
		t.Errorf("kill --orphans: %d %q %q", code, out, stderr)
	}
	if !strings.Contains(stderr, "stopped the processes of calls whose SCV process died") {
		t.Errorf("stderr does not say a call was stopped: %q", stderr)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the orphaned call's leader still runs")
	}
	for deadline := time.Now().Add(2500 * time.Millisecond); taggedBy(tag) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if taggedBy(tag) {
		t.Error("the orphaned call's setsid child survived kill --orphans")
	}
	if _, err := os.Stat(filepath.Join(dir, rec.ID+".json")); !os.IsNotExist(err) {
		t.Errorf("call record left: %v", err)
	}
}

// tagged says some live process carries handle in SCV_PARENT.
func tagged(handle string) bool { return taggedBy("/" + handle) }

// taggedBy says some live process's environment holds entry (a whole
// entry, or the end of one).
func taggedBy(entry string) bool { return countTagged(entry) > 0 }

// countTagged counts the live processes whose environment holds entry.
func countTagged(entry string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(entry+"\x00")) {
			st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err == nil && !bytes.Contains(st, []byte(") Z ")) {
				n++
			}
		}
	}
	return n
}

func TestAgentsLoginDsh(t *testing.T) {
	e := newAgentsEnv(t)
	const key = "sk-dsh-secret-42"
	code, out, errs := e.run(t, key+"\n", "agents", "login", "dsh")
	if code != 0 {
		t.Fatalf("login dsh: %d %s %s", code, out, errs)
	}
	p := filepath.Join(e.scvHome, "adapters", "dsh", ".dsh", ".credentials.yaml")
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), "DEEPSEEK_API_KEY: \""+key+"\"") {
		t.Errorf("credential file: %q %v", b, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	_, sout, serr := e.run(t, "", "agents", "status", "dsh")
	if !strings.Contains(sout, "dsh: not installed; signed in (credentials stored)") {
		t.Errorf("status: %q", sout)
	}
	noSecret(t, key, out, errs, sout, serr)
	if code, _, _ := e.run(t, "", "agents", "login", "dsh", "--", key); code != ExitUsage {
		t.Errorf("a key as an argument was accepted: exit %d", code)
	}
	if code, out, _ := e.run(t, "", "agents", "logout", "dsh"); code != 0 || out != "dsh: key removed\n" {
		t.Errorf("logout: %d %q", code, out)
	}
	if _, out, _ := e.run(t, "", "agents", "status", "dsh"); !strings.Contains(out, "dsh: not installed; not signed in") {
		t.Errorf("status after logout: %q", out)
	}
}

func TestAgentsPiOpenAICompatible(t *testing.T) {
	e := newAgentsEnv(t)
	const key = "sk-pi-relay-777"
	code, out, errs := e.run(t, key+"\n", "agents", "login", "pi", "--openai-compatible",
		"--base-url", "https://relay.example/v1", "--wire-api", "responses", "--model", "gpt-5.1")
	if code != 0 {
		t.Fatalf("login: %d %s %s", code, out, errs)
	}
	if out != "pi: default scv/gpt-5.1 (openai-responses at relay.example); sign-ins: scv\n" {
		t.Errorf("login output %q", out)
	}
	_, sout, serr := e.run(t, "", "agents", "status", "pi")
	noSecret(t, key, out, errs, sout, serr)
	// Prompts instead of flags (stdin is not a terminal: plain lines).
	e2 := newAgentsEnv(t)
	code, out, errs = e2.run(t, "http://127.0.0.1:9/v1\nchat\nlocal-model\n"+key+"\n", "agents", "login", "pi", "--openai-compatible")
	if code != 0 || !strings.Contains(out, "default scv/local-model (openai-completions at 127.0.0.1:9)") {
		t.Errorf("prompted login: %d %q %q", code, out, errs)
	}
	noSecret(t, key, out, errs)
	code, out, _ = e.run(t, "", "agents", "logout", "pi")
	if code != 0 || !strings.Contains(out, "removed auth.json") {
		t.Errorf("logout: %d %q", code, out)
	}
}

func TestAgentsImportPiFromProvider(t *testing.T) {
	e := newAgentsEnv(t)
	e.writeConfig(t, `[provider]
active = "relay"

[providers.relay]
wire_api = "chat"
base_url = "https://relay.example/v1"
model = "relay-model"
api_key_env = "RELAY_KEY"
`)
	const key = "sk-from-env-9"
	e.env["RELAY_KEY"] = key
	code, out, errs := e.run(t, "", "agents", "import", "pi", "--from-scv-provider")
	if code != 0 || out != "pi: default scv/relay-model (openai-completions at relay.example); sign-ins: scv\n" {
		t.Errorf("import: %d %q %q", code, out, errs)
	}
	noSecret(t, key, out, errs)
	auth, _ := os.ReadFile(filepath.Join(e.scvHome, "adapters", "pi", ".pi", "agent", "auth.json"))
	if !strings.Contains(string(auth), key) {
		t.Errorf("auth.json lacks the key read at import time")
	}
	delete(e.env, "RELAY_KEY")
	if code, _, errs := e.run(t, "", "agents", "import", "pi", "--from-scv-provider"); code == 0 || !strings.Contains(errs, "RELAY_KEY") {
		t.Errorf("import without the key: %d %q", code, errs)
	}
}

func TestAgentsImportCodex(t *testing.T) {
	e := newAgentsEnv(t)
	from := filepath.Join(e.user, ".codex")
	os.MkdirAll(from, 0o700)
	os.WriteFile(filepath.Join(from, "config.toml"), []byte("model = \"gpt-5.1-codex\"\nmodel_provider = \"relay\"\n[model_providers.relay]\nbase_url = \"https://r.example/v1\"\nenv_key = \"RELAY_API_KEY\"\n"), 0o600)
	const key = "sk-codex-import-5"
	os.WriteFile(filepath.Join(from, "auth.json"), []byte(`{"OPENAI_API_KEY":"`+key+`"}`), 0o600)
	code, out, errs := e.run(t, "", "agents", "import", "codex")
	if code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errs)
	}
	for _, want := range []string{"copied config.toml (model gpt-5.1-codex, provider relay", "copied auth.json (API key)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "relay (RELAY_API_KEY)") || !strings.Contains(errs, "env_key") {
		t.Errorf("no env_key warning:\n%s", errs)
	}
	noSecret(t, key, out, errs)
	if b, _ := os.ReadFile(filepath.Join(e.scvHome, "adapters", "codex", "auth.json")); !strings.Contains(string(b), key) {
		t.Error("auth.json not copied")
	}
	if code, _, errs := e.run(t, "", "agents", "import", "codex", "--from", t.TempDir()); code == 0 || !strings.Contains(errs, "no Codex setup") {
		t.Errorf("empty --from: %d %q", code, errs)
	}
}

// The agent's own login/status commands run with the private home and the
// cleaned environment. The fake CLI is /bin/bash (configured as the
// command) whose BASH_ENV start-up file plays the agent and exits before
// bash would look for a script, so no freshly written file is executed.
func TestAgentsLoginRunsOwnCommand(t *testing.T) {
	e := newAgentsEnv(t)
	fake := filepath.Join(t.TempDir(), "fake.sh")
	os.WriteFile(fake, []byte(`if [ "$1" = status ]; then
  if [ "$0" = auth ]; then echo '{"loggedIn":true,"authMethod":"claude.ai","email":"me@example.com","subscriptionType":"pro"}'
  else echo 'Logged in using an API key - sk-proj-***WXYZ'; fi
  exit 0
fi
printf 'argv:%s\n' "$0" "$@"
printf 'home:%s\n' "$HOME"
printf 'codex_home:%s\n' "$CODEX_HOME"
printf 'anthropic:%s\n' "${ANTHROPIC_API_KEY:-unset}"
printf 'lab:%s\n' "${LAB_TOKEN:-unset}"
exit 0
`), 0o600)
	e.env["BASH_ENV"] = fake
	// A provider key in a variable the _API_KEY rule would miss: the
	// config names it, so the agent's login never sees it either.
	e.env["LAB_TOKEN"] = "lab-secret"
	e.writeConfig(t, "[providers.openai]\napi_key_env = \"LAB_TOKEN\"\n[agents.claude]\ncommand = \"/bin/bash\"\n[agents.codex]\ncommand = \"/bin/bash\"\n")
	code, out, errs := e.run(t, "", "agents", "login", "codex", "--", "--device-auth")
	if code != 0 {
		t.Fatalf("login: %d %s %s", code, out, errs)
	}
	home := filepath.Join(e.scvHome, "adapters", "codex")
	want := "argv:login\nargv:--device-auth\nhome:" + home + "\ncodex_home:" + home + "\nanthropic:unset\nlab:unset\n"
	if out != want {
		t.Errorf("login ran:\n%s\nwant:\n%s", out, want)
	}
	if code, _, _ := e.run(t, "", "agents", "login", "codex", "--device-auth"); code != ExitUsage {
		t.Errorf("extra argument without --: exit %d", code)
	}
	code, out, errs = e.run(t, "", "agents", "status", "claude")
	if code != 0 || out != "claude: signed in (Claude account, pro)\n" {
		t.Errorf("status claude: %d %q %q", code, out, errs)
	}
	code, out, _ = e.run(t, "", "agents", "status", "codex")
	if code != 0 || out != "codex: signed in (API key)\n" {
		t.Errorf("status codex: %d %q", code, out)
	}
	noSecret(t, "me@example.com", out)
	noSecret(t, "WXYZ", out)
}

// orphanFixture is a workspace whose agent_codex is a fake that leaves a
// setsid descendant (the escapee, its PID written to pidFile) and works
// until killed, and the environment of an scv child process running it.
type orphanFixture struct {
	ws, pidFile, recDir string
	env                 []string
}

func (e *agentsEnv) orphanFixture(t *testing.T, fm *modeltest.Server) orphanFixture {
	t.Helper()
	root := t.TempDir()
	f := orphanFixture{ws: filepath.Join(root, "ws"), pidFile: filepath.Join(root, "escapee.pid"), recDir: filepath.Join(e.scvHome, "run", "delegations")}
	os.MkdirAll(f.ws, 0o755)
	script := filepath.Join(root, "fake-codex.sh")
	os.WriteFile(script, []byte("setsid sleep 300 & echo $! > \"$FAKE_PIDFILE\"; sleep 300\n"), 0o600)
	e.writeConfig(t, fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n\n[agents.codex]\ncommand = \"/bin/bash\"\nargs = [%q]\n", fm.URL(), script))
	f.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.user, "SCV_HOME=" + e.scvHome, "OPENAI_API_KEY=sk-test", "FAKE_PIDFILE=" + f.pidFile}
	return f
}

// record waits up to d for the one delegation record and returns it (empty
// when none appeared).
func (f orphanFixture) record(d time.Duration) delegation.Record {
	var rec delegation.Record
	for deadline := time.Now().Add(d); rec.Handle == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ents, _ := os.ReadDir(f.recDir); len(ents) == 1 {
			b, _ := os.ReadFile(filepath.Join(f.recDir, ents[0].Name()))
			json.Unmarshal(b, &rec)
		}
	}
	return rec
}

// start starts owner; when the test ends, an owner not waited for yet
// (orphan waits for it) is SIGKILLed with its process group.
func (f orphanFixture) start(t *testing.T, owner *exec.Cmd) {
	t.Helper()
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if owner.ProcessState == nil {
			syscall.Kill(-owner.Process.Pid, syscall.SIGKILL)
			owner.Wait()
		}
	})
}

// orphan SIGKILLs the owner of rec alone and waits for it: the agent, in
// a process group of its own, survives as an orphan, and so does its
// escapee (the fake agent's descendant), whose PID and start time it
// returns. It fails the test unless both still run.
func (f orphanFixture) orphan(t *testing.T, owner *exec.Cmd, rec delegation.Record) (int, uint64) {
	t.Helper()
	esc := testutil.WaitPID(t, f.pidFile, 5*time.Second)
	escStart, err := proc.StartTime(esc)
	if err != nil {
		t.Fatalf("escapee: %v", err)
	}
	syscall.Kill(owner.Process.Pid, syscall.SIGKILL)
	owner.Wait()
	if !proc.Alive(rec.PID, rec.PIDStart) || !proc.Alive(esc, escStart) {
		t.Fatalf("the delegation died with its owner (%s); nothing to reap", owner.Args[1])
	}
	return esc, escStart
}

// assertReaped fails unless the orphaned agent and its escapee are gone
// (within d) and no record is left; it kills survivors.
func (f orphanFixture) assertReaped(t *testing.T, rec delegation.Record, esc int, escStart uint64, d time.Duration, after string) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && (proc.Alive(rec.PID, rec.PIDStart) || proc.Alive(esc, escStart)); {
		time.Sleep(20 * time.Millisecond)
	}
	if proc.Alive(rec.PID, rec.PIDStart) || proc.Alive(esc, escStart) {
		t.Errorf("orphan survived %s (agent %d, escapee %d)", after, rec.PID, esc)
		syscall.Kill(rec.PID, syscall.SIGKILL)
		syscall.Kill(esc, syscall.SIGKILL)
	}
	if ents, _ := os.ReadDir(f.recDir); len(ents) != 0 {
		t.Errorf("records left: %v", ents)
	}
}

// command is this test binary run as scv (testscript.Main dispatches on
// argv[0]) in the fixture's workspace and environment, in a process group
// of its own.
func (f orphanFixture) command(t *testing.T, stderr io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Args[0] = "scv"
	cmd.Dir, cmd.Env = f.ws, f.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = stderr
	return cmd
}

// TestOrphanOfKilledStdioServer is the real scenario: `scv server --stdio`
// (this test binary run as scv) delegates to a fake codex that leaves a
// setsid descendant, is SIGKILLed mid-delegation, and the next
// `scv server --stdio` reconciles at start: the agent, its descendant and
// the record are gone 2.5 s later.
func TestOrphanOfKilledStdioServer(t *testing.T) {
	e := newAgentsEnv(t)
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("d1", "agent_codex", `{"prompt":"work for a long time"}`))
	f := e.orphanFixture(t, fm)
	var stderr bytes.Buffer
	server := f.command(t, &stderr, "server", "--stdio")
	stdin, _ := server.StdinPipe()
	stdout, _ := server.StdoutPipe()
	f.start(t, server)
	c := client.NewConn(stdout, stdin)
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, "agents-test", "0"); err != nil {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	started, err := c.StartSession(ctx, proto.SessionStart{Cwd: f.ws})
	if err != nil {
		t.Fatal(err)
	}
	sid := started.SessionID
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: "delegate"}); err != nil {
		t.Fatal(err)
	}
events:
	for ev := range c.Events() {
		switch ev := ev.(type) {
		case *proto.ApprovalRequested:
			if ev.Risk != "delegate" || !strings.Contains(ev.Summary, "/bin/bash") {
				t.Errorf("approval request %+v", ev)
			}
			c.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: ev.ApprovalID, Approved: true})
		case *proto.ToolStarted, *proto.TurnCompleted, *proto.TurnFailed:
			break events
		}
	}
	rec := f.record(10 * time.Second)
	if rec.Handle == "" || rec.OwnerPID != server.Process.Pid || rec.Session != sid {
		t.Fatalf("record %+v (server pid %d)\n%s", rec, server.Process.Pid, stderr.String())
	}
	esc, escStart := f.orphan(t, server, rec)
	if _, out, _ := e.run(t, "", "agents", "ps", "--all"); !strings.Contains(out, rec.Handle) || !strings.Contains(out, "orphan") {
		t.Errorf("ps --all:\n%s", out)
	}
	// The next server reconciles once at start; EOF on stdin ends it.
	next := f.command(t, nil, "server", "--stdio")
	next.Stdin = strings.NewReader("")
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("second server: %v\n%s", err, out)
	}
	f.assertReaped(t, rec, esc, escStart, 2500*time.Millisecond, "reconcile")
}

// TestAgentsPsShowsControlCharacters: a record whose fields hold escape
// sequences (the cwd comes from the model; the files can be edited) is
// listed with them made visible.
func TestAgentsPsShowsControlCharacters(t *testing.T) {
	e := newAgentsEnv(t)
	dir := filepath.Join(e.scvHome, "run", "delegations")
	os.MkdirAll(dir, 0o700)
	rec := delegation.Record{Handle: "pi-abcdef", Agent: "pi\x1b[2J", Session: "s\x1b]0;t\x07", Cwd: "/w/\x1b[8mhidden\x1b[0m\rX",
		OwnerPID: 1 << 22, OwnerStart: 1, StartedAt: time.Now()}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, "pi-abcdef.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, _ := e.run(t, "", "agents", "ps", "--all")
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Fatalf("ps printed a raw control character:\n%q", out)
	}
	for _, want := range []string{"pi␛[2J", "s␛]0;t␇", "/w/␛[8mhidden␛[0m␍X"} {
		if !strings.Contains(out, want) {
			t.Errorf("ps does not show %q:\n%s", want, out)
		}
	}
}

// TestOrphanOfKilledExec: `scv exec` runs its server in its own process,
// so it owns the delegations of its turn. SIGKILLed mid-delegation it leaves
// the agent (and the agent's setsid descendant) running as an orphan whose
// record names the dead exec; the next `scv exec` reconciles before its turn
// and stops them, and the record goes.
func TestOrphanOfKilledExec(t *testing.T) {
	e := newAgentsEnv(t)
	fm := modeltest.New(t)
	fm.Script(modeltest.ToolCall("d1", "agent_codex", `{"prompt":"work for a long time"}`))
	fm.Script(modeltest.Text("done"))
	f := e.orphanFixture(t, fm)
	var stderr bytes.Buffer
	first := f.command(t, &stderr, "exec", "--yes", "delegate")
	f.start(t, first)
	rec := f.record(20 * time.Second)
	if rec.Handle == "" || rec.OwnerPID != first.Process.Pid {
		t.Fatalf("record %+v (exec pid %d)\n%s", rec, first.Process.Pid, stderr.String())
	}
	esc, escStart := f.orphan(t, first, rec)
	next := f.command(t, nil, "exec", "--yes", "hi")
	out, err := next.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "done") {
		t.Fatalf("second exec: %v\n%s", err, out)
	}
	f.assertReaped(t, rec, esc, escStart, 0, "the next exec's reconcile")
}

// TestAgentsStatusNotInstalledOneWay: an agent whose CLI is missing is
// "not installed" first, in the same words for every agent, with what is
// stored after it, and one line says how to fix it.
func TestAgentsStatusNotInstalledOneWay(t *testing.T) {
	e := newAgentsEnv(t)
	e.env["PATH"] = t.TempDir() // no agent CLI anywhere
	code, out, errs := e.run(t, "", "agents", "status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	hint := lines[len(lines)-1]
	if !strings.HasPrefix(hint, "(not installed: put the agent's CLI on PATH") {
		t.Errorf("no hint after the list:\n%s", out)
	}
	for _, l := range lines[:len(lines)-1] {
		_, st, _ := strings.Cut(l, ": ")
		if st != "not installed" && !strings.HasPrefix(st, "not installed; ") {
			t.Errorf("status line %q does not begin with \"not installed\"", l)
		}
	}
	if len(lines) < 6 {
		t.Errorf("expected every agent and the hint:\n%s", out)
	}
}
