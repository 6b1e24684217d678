package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestResumedSessionsKeepTheirEndpoint is the whole sequence in the real
// TUI: the daemon is started without a key and without SCV_BASE_URL, its
// configuration pointing at server B; `scv` runs with SCV_BASE_URL=A and
// A's key. The first session, `--continue`, a Ctrl+R rewind, the picker
// of `--resume`, and the automatic reconnection after `scv stop` and a new
// daemon all send to A with A's key; B receives nothing until
// `--base-url B` moves the session there, which the transcript announces
// before the first request.
func TestResumedSessionsKeepTheirEndpoint(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	const keyA, keyB = "sk-tui-a-5150", "sk-tui-b-6160"
	a, b := modeltest.New(t), modeltest.New(t)
	config := "[provider]\nactive = \"openai\"\n\n[providers.openai]\nbase_url = \"" + b.URL() + "\"\nmodel = \"fake-model\"\nwire_api = \"responses\"\napi_key_env = \"OPENAI_API_KEY\"\nmax_retries = 0\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, scv, home)
	run := func(env, flags string) *pane {
		return startPane(t, 110, 40, "cd "+shellQuote(ws)+" && env "+env+" "+shellQuote(scv)+" --scv-home "+shellQuote(home)+" "+flags)
	}
	atA := "SCV_BASE_URL=" + shellQuote(a.URL()) + " OPENAI_API_KEY=" + keyA
	ask := func(p *pane, fm *modeltest.Server, prompt, answer string) {
		t.Helper()
		fm.Script(modeltest.Text(answer))
		p.submit(prompt)
		p.waitFor(answer, "ready")
	}
	// released waits until no session is live in the daemon any more (it
	// releases a session when it sees its TUI's connection end), so the
	// next TUI's resume does not find it busy.
	released := func() {
		t.Helper()
		var out []byte
		var err error
		if !waitUntil(20*time.Second, 50*time.Millisecond, func() bool {
			out, err = scvCommand(t, scv, home, "sessions", "list", "--json").Output()
			return err == nil && !strings.Contains(string(out), `"live_in"`)
		}) {
			t.Fatalf("a session is still live 20 s after its TUI ended: %v\n%s", err, out)
		}
	}
	check := func(step string, nA, nB int) {
		t.Helper()
		for i, r := range a.Requests() {
			if got := r.Header.Get("Authorization"); got != "Bearer "+keyA {
				t.Errorf("%s: request %d at A carried %q", step, i+1, got)
			}
		}
		if len(a.Requests()) != nA || len(b.Requests()) != nB {
			t.Fatalf("%s: A received %d requests, B %d; want %d and %d", step, len(a.Requests()), len(b.Requests()), nA, nB)
		}
	}

	p := run(atA, "")
	p.waitFor("fake-model", "connected", "ready")
	ask(p, a, "first question", "Alpha one.")
	p.quit()
	released()
	check("new session", 1, 0)

	p = run(atA, "--continue")
	p.waitFor("Alpha one.", "ready")
	ask(p, a, "second question", "Alpha two.")
	check("--continue", 2, 0)

	p.keys("C-r")
	p.waitFor("Rewind: pick an earlier prompt", "second question")
	p.keys("Enter")
	p.waitFor("rewinding to turn 2")
	p.keys("C-u")
	a.Script(modeltest.Text("Alpha fork."))
	p.submit("edited second question")
	p.waitFor("Alpha fork.", "rewound: a new session forked", "ready")
	p.quit()
	released()
	check("rewind", 3, 0)

	p = run(atA, "--resume")
	p.waitFor("Sessions in", "enter open")
	p.keys("Enter") // newest first: the fork
	p.waitFor("Alpha fork.", "ready")
	ask(p, a, "picked question", "Alpha picked.")
	check("picker", 4, 0)

	stopDaemon(t, scv, home)
	p.waitFor("daemon disconnected, reconnecting…")
	startDaemon(t, scv, home)
	p.waitFor("reconnected to the daemon", "● connected")
	ask(p, a, "after the restart", "Alpha reconnected.")
	p.quit()
	released()
	check("reconnect", 5, 0)

	// Only an explicit override moves the session; the move is shown.
	p = run("OPENAI_API_KEY="+keyB, "--base-url "+shellQuote(b.URL())+" --continue")
	s := p.waitFor("Alpha reconnected.", "ready")
	if want := "endpoint changed: " + a.URL() + " → " + b.URL(); !strings.Contains(s, want) {
		t.Errorf("the moved session does not say %q:\n%s", want, s)
	}
	check("moved, before its first request", 5, 0)
	ask(p, b, "at b now", "Bravo.")
	p.quit()
	released()
	check("moved", 5, 1)
	if got := b.Requests()[0].Header.Get("Authorization"); got != "Bearer "+keyB {
		t.Errorf("the request at B carried %q, want B's key", got)
	}
}
