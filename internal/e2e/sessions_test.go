package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
)

// listed is `scv sessions list --json` of the instance (every workspace).
func (in *instance) listed() []proto.StoredSession {
	in.t.Helper()
	r := in.run(in.env, "", "sessions", "list", "--all", "--json")
	if r.code != 0 {
		in.t.Fatalf("sessions list: exit %d: %s", r.code, r.stderr)
	}
	var out []proto.StoredSession
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l == "" {
			continue
		}
		var s proto.StoredSession
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			in.t.Fatalf("sessions list line %q: %v", l, err)
		}
		out = append(out, s)
	}
	return out
}

// TestExecSessionsEndToEnd drives the stored sessions through the real
// binary: scv exec saves a session, --continue adds turns to it with the
// earlier conversation sent to the model, --resume names one, search finds
// prompts and answers with the matching line, export writes Markdown and
// JSONL, rename and rm change and delete, and prune applies [history].
func TestExecSessionsEndToEnd(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	fm.Script(modeltest.Text("The capital of Freedonia is Fredville."))
	r := in.run(in.env, "", "exec", "What is the capital of Freedonia?\nanswer briefly")
	if r.code != 0 {
		t.Fatalf("exec: exit %d: %s", r.code, r.stderr)
	}
	list := in.listed()
	if len(list) != 1 || list[0].Title != "What is the capital of Freedonia?" || list[0].Origin != "exec" || list[0].Turns != 1 {
		t.Fatalf("after one exec: %+v", list)
	}
	first := list[0].SessionID

	fm.Script(modeltest.Text("Its population is 12,000."))
	r = in.run(in.env, "", "exec", "--continue", "And its population?")
	if r.code != 0 || !strings.Contains(r.stdout, "12,000") {
		t.Fatalf("exec --continue: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	reqs := fm.Requests()
	if got := userTexts(reqs[1]); !slices.Equal(got, []string{"What is the capital of Freedonia?\nanswer briefly", "And its population?"}) {
		t.Errorf("--continue sent the user messages %q; want the first turn's prompt before the new one", got)
	}
	if !strings.Contains(string(reqs[1].Raw), "Fredville") {
		t.Errorf("--continue did not send the first answer to the model")
	}

	// A second, separate session; --resume goes back to the first.
	fm.Script(modeltest.Text("Unrelated."))
	if r = in.run(in.env, "", "exec", "Something else entirely"); r.code != 0 {
		t.Fatalf("exec: %s", r.stderr)
	}
	fm.Script(modeltest.Text("Third answer."))
	if r = in.run(in.env, "", "exec", "--resume", first, "One more thing"); r.code != 0 {
		t.Fatalf("exec --resume: %s", r.stderr)
	}
	if got := userTexts(fm.Requests()[3]); len(got) != 3 || got[2] != "One more thing" {
		t.Errorf("--resume sent %q", got)
	}
	list = in.listed()
	if len(list) != 2 || list[0].SessionID != first || list[0].Turns != 3 {
		t.Fatalf("after --resume: %+v", list)
	}

	// Search: ranked hits with the matching line.
	r = in.run(in.env, "", "sessions", "search", "fredville")
	if r.code != 0 || !strings.Contains(r.stdout, first) || !strings.Contains(r.stdout, "answer: The capital of Freedonia is Fredville.") {
		t.Errorf("search: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = in.run(in.env, "", "sessions", "search", "nosuchwordanywhere"); r.code != 1 || !strings.Contains(r.stdout, "no match") {
		t.Errorf("search without a match: exit %d, %q", r.code, r.stdout)
	}

	// Show and export.
	r = in.run(in.env, "", "sessions", "show", first)
	for _, want := range []string{"title     What is the capital of Freedonia?", "> And its population?", "Its population is 12,000."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	md := filepath.Join(in.ws, "out.md")
	if r = in.run(in.env, "", "sessions", "export", first, "-o", md); r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	b, err := os.ReadFile(md)
	if err != nil || !bytes.Contains(b, []byte("# What is the capital of Freedonia?")) || !bytes.Contains(b, []byte("> And its population?")) {
		t.Errorf("markdown export:\n%s (%v)", b, err)
	}
	if fi, err := os.Stat(md); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode: %v %v", fi.Mode(), err)
	}
	r = in.run(in.env, "", "sessions", "export", first, "--format", "jsonl")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	types := map[string]int{}
	for _, l := range lines {
		var h struct{ Type string }
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatalf("jsonl line %q: %v", l, err)
		}
		types[h.Type]++
	}
	if types["scv.session"] != 1 || types["scv.turn"] != 3 || types["turn.completed"] != 3 {
		t.Errorf("jsonl export has %v", types)
	}

	// Rename, then rm; an unknown id fails with a clear message.
	if r = in.run(in.env, "", "sessions", "rename", first, "Freedonia facts"); r.code != 0 || !strings.Contains(r.stdout, "Freedonia facts") {
		t.Errorf("rename: %q %s", r.stdout, r.stderr)
	}
	if r = in.run(in.env, "", "sessions", "rm", first, "s_nosuch"); r.code != 1 || !strings.Contains(r.stderr, `no session "s_nosuch"`) {
		t.Errorf("rm with an unknown id: exit %d, %s", r.code, r.stderr)
	}
	if list = in.listed(); len(list) != 1 || list[0].SessionID == first {
		t.Errorf("after rm: %+v", list)
	}
	if r = in.run(in.env, "", "exec", "--resume", first, "hello?"); r.code != 1 || !strings.Contains(r.stderr, "no stored session") {
		t.Errorf("exec --resume of a deleted session: exit %d, %s", r.code, r.stderr)
	}

	// Prune: max_sessions = 1 keeps the newest.
	fm.Script(modeltest.Text("Newest."))
	if r = in.run(in.env, "", "exec", "Newest session"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if err := os.WriteFile(filepath.Join(in.home, "config.toml"), []byte(providerConfig(fm.URL(), "[history]\nmax_sessions = 1")), 0o600); err != nil {
		t.Fatal(err)
	}
	if r = in.run(in.env, "", "sessions", "prune"); r.code != 0 || !strings.Contains(r.stdout, "pruned 1 sessions") {
		t.Errorf("prune: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if list = in.listed(); len(list) != 1 || list[0].Title != "Newest session" {
		t.Errorf("after prune: %+v", list)
	}
	// exec --continue in a workspace without sessions says so.
	other := t.TempDir()
	r = in.run(in.env, "", "exec", "--workspace", other, "--continue", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "no earlier session in") {
		t.Errorf("--continue without a session: exit %d, %s", r.code, r.stderr)
	}
}

// TestExecResumeOfALiveSessionIsBusy: a session open in the daemon cannot
// be resumed by scv exec; the error names the daemon, and nothing runs.
func TestExecResumeOfALiveSessionIsBusy(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("hi"))
	in := newInstance(t, providerConfig(fm.URL()))
	d := in.startDaemon(in.env)
	c := in.connect()
	started := in.startSession(c, proto.SessionStart{Origin: proto.OriginTUI})
	sendTurn(t, c, started.SessionID, "hello")
	until(t, c, proto.EventTurnCompleted)
	r := in.run(in.env, "", "exec", "--resume", started.SessionID, "take it over")
	if r.code != 1 || !strings.Contains(r.stderr, "session_busy") || !strings.Contains(r.stderr, "daemon (pid ") {
		t.Errorf("exec --resume of a live session: exit %d, stderr %s", r.code, r.stderr)
	}
	if n := len(fm.Requests()); n != 1 {
		t.Errorf("the model got %d requests; the refused resume must not run a turn", n)
	}
	_ = d
	// Once the TUI's connection ends, the session is free again.
	c.Close()
	fm.Script(modeltest.Text("resumed"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		r = in.run(in.env, "", "exec", "--resume", started.SessionID, "now?")
		if r.code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "resumed") {
		t.Errorf("exec --resume after the connection ended: exit %d: %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c2, err := in.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	st, err := client.CallFor[*proto.DaemonStatusReply](ctx, c2, &proto.DaemonStatusRequest{})
	if err != nil || st.Status.Database == nil || st.Status.Database.Sessions != 1 || st.Status.Database.Turns != 2 {
		t.Errorf("daemon.status database = %+v, %v", st.Status, err)
	}
	if r = in.run(in.env, "", "status"); !strings.Contains(r.stdout, "database:") || !strings.Contains(r.stdout, "1 session, 2 turns") {
		t.Errorf("scv status:\n%s", r.stdout)
	}
}

// TestDaemonPrunesAtStart: the daemon applies [history] max_sessions when
// it starts (the newest sessions stay), and its status shows the result.
func TestDaemonPrunesAtStart(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	for i := range 3 {
		fm.Script(modeltest.Text("ok"))
		if r := in.run(in.env, "", "exec", "session number "+string(rune('1'+i))); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(in.home, "config.toml"), []byte(providerConfig(fm.URL(), "[history]\nmax_sessions = 2")), 0o600); err != nil {
		t.Fatal(err)
	}
	in.startDaemon(in.env)
	var titles []string
	for _, s := range in.listed() {
		titles = append(titles, s.Title)
	}
	if !slices.Equal(titles, []string{"session number 3", "session number 2"}) {
		t.Errorf("after the daemon started: %q, want the two newest", titles)
	}
	if r := in.run(in.env, "", "status"); !strings.Contains(r.stdout, "2 sessions, 2 turns") {
		t.Errorf("status:\n%s", r.stdout)
	}
}
