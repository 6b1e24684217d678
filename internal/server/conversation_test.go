package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/tools/txtar"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/server"
	"github.com/scv-agent/scv/internal/store"
	"github.com/scv-agent/scv/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestConversations replays each testdata/conversations/*.txtar: client
// lines in, every server line out (ids and paths normalised), compared
// with the file's want section.
//
// Sections: config.toml (appended to a user config pointing at the fake
// model; $MODEL_URL is the fake's base URL), model.json (modeltest.LoadScript format),
// store-fault (store write operations that fail, one per line), no-store
// (present: the server keeps sessions in memory only), files.txtar-like
// "ws/<name>" sections (workspace files) and "home/<name>" ones (files of
// the SCV home), models (ids the fake lists on
// GET /models), script (the conversation), want, model-requests (optional:
// how many requests the fake model must have received when the
// conversation ends), want-request-models (optional: the "model" and
// "reasoning" of each request the fake received, one line each),
// want-request-paths (optional: the method and path of each, one line
// each), want-last-request-has (optional: text the last request's body holds),
// want-requests-have (optional: `N TEXT` or `N !TEXT` per line: request N,
// from 1, holds TEXT or does not),
// want-ws (optional: the workspace at the end, `NAME "content"` or
// `NAME absent` per line).
// Script lines: "> JSON" sends a line (with $S1, $T1, $A1, $Q1, $WORK and
// $REPEAT(c,n) substituted), "wait TYPE" waits for the next unseen event of
// that type, "raw TEXT" sends TEXT verbatim, `file NAME "content"` writes
// a workspace file (Go-quoted content).
func TestConversations(t *testing.T) {
	testutil.RunArchives(t, "testdata/conversations/*.txtar", runConversation)
}

// storeFault is the store's fault injector of a conversation: its
// store-fault section lists the write operations that fail, one per line,
// as a full disk would make them.
func storeFault(a *txtar.Archive) func(op string) error {
	text, ok := testutil.Section(a, "store-fault")
	if !ok {
		return nil
	}
	fail := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			fail[l] = true
		}
	}
	return func(op string) error {
		if fail[op] {
			return errors.New("disk I/O error (simulated: the disk is full)")
		}
		return nil
	}
}

func runConversation(t *testing.T, file string) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fake := modeltest.New(t)
	if js, ok := testutil.Section(a, "model.json"); ok {
		testutil.ScriptModel(t, fake, js)
	}
	if ids, ok := testutil.Section(a, "models"); ok {
		fake.Models = strings.Fields(ids)
	}
	home := t.TempDir()
	ws := testutil.TempDir(t)
	testutil.ArchiveFiles(t, a, "ws/", ws)
	testutil.ArchiveFiles(t, a, "home/", home)
	extra, _ := testutil.Section(a, "config.toml")
	extra = strings.ReplaceAll(extra, "$MODEL_URL", fake.URL())
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n%s", fake.URL(), extra)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key", "ANTHROPIC_API_KEY": "sk-ant-test-key", "HOME": home, "PATH": os.Getenv("PATH")}
	layout := paths.Layout{Home: home}
	ap := app.New(app.Options{Layout: layout, Env: env})
	loaded, err := ap.LoadConfig("", app.NoOverrides)
	if err != nil {
		t.Fatal(err)
	}
	pc := loaded.Config.Protocol
	var st *store.Store
	if _, ok := testutil.Section(a, "no-store"); !ok {
		st = openTestStore(t, home, storeFault(a))
	}
	srv := server.New(server.Options{Factory: ap, Version: "test", MaxClientFrame: pc.MaxClientFrameBytes,
		MaxServerFrame: pc.MaxServerFrameBytes, MaxSessionsPerConn: pc.MaxSessionsPerConnection, MaxSessions: pc.MaxSessions,
		Store: st, Name: "test server"})

	script, _ := testutil.Section(a, "script")
	got := converse(t, srv, ws, home, fake.URL(), script)
	if n, ok := testutil.Section(a, "model-requests"); ok {
		if want := strings.TrimSpace(n); strconv.Itoa(len(fake.Requests())) != want {
			t.Errorf("the fake model got %d requests, want %s", len(fake.Requests()), want)
		}
	}
	if w, ok := testutil.Section(a, "want-ws"); ok {
		checkWorkspace(t, ws, w)
	}
	if w, ok := testutil.Section(a, "want-request-models"); ok {
		var got []string
		for _, r := range fake.Requests() {
			got = append(got, fmt.Sprintf("%v %v", r.Body["model"], r.Body["reasoning"]))
		}
		if g := strings.Join(got, "\n"); g != strings.TrimSpace(w) {
			t.Errorf("the fake model's requests named the models\n%s\nwant\n%s", g, strings.TrimSpace(w))
		}
	}
	if w, ok := testutil.Section(a, "want-request-paths"); ok {
		var got []string
		for _, r := range fake.Requests() {
			got = append(got, r.Method+" "+r.Path)
		}
		if g := strings.Join(got, "\n"); g != strings.TrimSpace(w) {
			t.Errorf("the fake model got the requests\n%s\nwant\n%s", g, strings.TrimSpace(w))
		}
	}
	if w, ok := testutil.Section(a, "want-last-request-has"); ok {
		reqs := fake.Requests()
		if len(reqs) == 0 || !strings.Contains(string(reqs[len(reqs)-1].Raw), strings.TrimSpace(w)) {
			t.Errorf("the fake model's last request does not contain %q", strings.TrimSpace(w))
		}
	}
	if w, ok := testutil.Section(a, "want-requests-have"); ok {
		checkRequests(t, fake.Requests(), w)
	}
	testutil.GoldenSection(t, file, a, "want", got)
}

// converse runs the script against one Serve call and returns the
// normalised server lines.
func converse(t *testing.T, srv *server.Server, ws, home, modelURL, script string) string {
	t.Helper()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(ctx, cr, sw)
		sw.Close()
	}()
	n := newNormaliser(ws, home)
	n.modelURL = modelURL
	seen := map[string]int{} // events by type, tool.progress too
	out := testutil.ReadLines(sr, func(line string) (string, bool) {
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(line), &ev)
		if err := n.checkSeq(line); err != nil {
			t.Error(err)
		}
		seen[ev.Type]++
		if ev.Type == "tool.progress" {
			return "", false
		}
		return n.normalise(line), true
	})
	waited := map[string]int{}
	for _, raw := range strings.Split(script, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "> "):
			send(t, cw, n.expand(strings.TrimPrefix(line, "> ")))
		case strings.HasPrefix(line, "file "):
			name, content, _ := strings.Cut(strings.TrimPrefix(line, "file "), " ")
			text, err := strconv.Unquote(content)
			if err != nil {
				t.Fatalf("bad file line %q: %v", line, err)
			}
			if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "raw "):
			send(t, cw, n.expand(strings.TrimPrefix(line, "raw ")))
		case strings.HasPrefix(line, "wait "):
			typ := strings.TrimPrefix(line, "wait ")
			waited[typ]++
			want := waited[typ]
			out.WaitFor(t, typ, 20*time.Second, func([]string) bool { return seen[typ] >= want })
		default:
			t.Fatalf("bad script line %q", line)
		}
	}
	cw.Close()
	testutil.WaitServed(t, served, 20*time.Second)
	return strings.Join(out.Wait(), "\n") + "\n"
}

// checkRequests checks want's lines against the fake model's requests:
// `N TEXT` says request N (from 1) holds TEXT, `N !TEXT` that it does not.
func checkRequests(t *testing.T, reqs []modeltest.Recorded, want string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		num, text, _ := strings.Cut(strings.TrimSpace(l), " ")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 {
			t.Fatalf("bad want-requests-have line %q", l)
		}
		if n > len(reqs) {
			t.Errorf("the fake model got %d requests; want-requests-have names request %d", len(reqs), n)
			continue
		}
		absent, ok := strings.CutPrefix(text, "!")
		if has := strings.Contains(string(reqs[n-1].Raw), absent); ok && has {
			t.Errorf("request %d holds %q, which it must not", n, absent)
		} else if !ok && !strings.Contains(string(reqs[n-1].Raw), text) {
			t.Errorf("request %d does not hold %q", n, text)
		}
	}
}

// checkWorkspace compares the workspace with want's lines: `NAME "content"`
// (Go-quoted) or `NAME absent`.
func checkWorkspace(t *testing.T, ws, want string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		name, content, _ := strings.Cut(strings.TrimSpace(l), " ")
		b, err := os.ReadFile(filepath.Join(ws, name))
		if content == "absent" {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: want no file, got %q (%v)", name, b, err)
			}
			continue
		}
		text, qerr := strconv.Unquote(content)
		if qerr != nil {
			t.Fatalf("bad want-ws line %q: %v", l, qerr)
		}
		if err != nil || string(b) != text {
			t.Errorf("%s: got %q (%v), want %q", name, b, err, text)
		}
	}
}

func send(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// normaliser maps volatile ids to stable names ($S1, $T1, $A1) and back,
// and renumbers seq without the (timing-dependent) tool.progress events
// after checking the raw numbers rise by exactly one.
type normaliser struct {
	mu   sync.Mutex
	ws   string
	home string
	// modelURL is the fake model server's URL, written $MODEL_URL.
	modelURL string
	rawSeq   map[string]uint64 // session → last raw seq
	outSeq   map[string]uint64 // session → last renumbered seq
	names    map[string]string // real → stable
	reals    map[string]string // stable → real
	counts   map[string]int
}

var (
	idRE     = regexp.MustCompile(`\b(s|t|ap)_[0-9a-f-]{6,}`)
	tokensRE = regexp.MustCompile(`about [0-9]+ tokens`) // depends on the length of $WORK
	ctxRE    = regexp.MustCompile(`"context_tokens":[0-9]+`)
	// The estimates of a compaction count the system prompt, which names
	// the test's temporary workspace (its length varies from run to run).
	compactRE = regexp.MustCompile(`"(before|after)_tokens":[0-9]+`)
	timeRE    = regexp.MustCompile(`"(created|updated|started|ended)":"[^"]*"`)
	bytesRE   = regexp.MustCompile(`"bytes":[0-9]+`)
	pidRE     = regexp.MustCompile(`pid [0-9]+`)
)

func newNormaliser(ws, home string) *normaliser {
	return &normaliser{ws: ws, home: home, names: map[string]string{}, reals: map[string]string{}, counts: map[string]int{},
		rawSeq: map[string]uint64{}, outSeq: map[string]uint64{}}
}

var seqRE = regexp.MustCompile(`"seq":([0-9]+)`)

// checkSeq verifies the seq rule: session.started has seq 0 and every
// later event of the session adds exactly 1.
func (n *normaliser) checkSeq(line string) error {
	var ev struct {
		Type      string  `json:"type"`
		SessionID string  `json:"session_id"`
		Seq       *uint64 `json:"seq"`
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		return fmt.Errorf("server line is not JSON: %v: %s", err, line)
	}
	switch ev.Type {
	case "session.listed", "session.turns", "session.renamed", "session.deleted":
		return nil // stored sessions' answers: no seq of their own
	}
	if ev.SessionID == "" {
		return nil
	}
	if ev.Seq == nil {
		return fmt.Errorf("event with session_id but no seq: %s", line)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	last, started := n.rawSeq[ev.SessionID]
	switch {
	case ev.Type == "session.started" && *ev.Seq != 0:
		return fmt.Errorf("session.started has seq %d, want 0", *ev.Seq)
	case ev.Type == "session.resumed":
		// A resumed session continues after its stored events.
	case ev.Type != "session.started" && (!started || *ev.Seq != last+1):
		return fmt.Errorf("seq %d after %d: %s", *ev.Seq, last, line)
	}
	n.rawSeq[ev.SessionID] = *ev.Seq
	return nil
}

func (n *normaliser) normalise(line string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	line = strings.ReplaceAll(line, n.ws, "$WORK")
	line = strings.ReplaceAll(line, n.home, "$HOME")
	if n.modelURL != "" {
		line = strings.ReplaceAll(line, n.modelURL, "$MODEL_URL")
	}
	line = pidRE.ReplaceAllString(line, "pid N")
	line = tokensRE.ReplaceAllString(line, "about N tokens")
	line = ctxRE.ReplaceAllString(line, `"context_tokens":"N"`)
	line = compactRE.ReplaceAllString(line, `"${1}_tokens":"N"`)
	line = timeRE.ReplaceAllString(line, `"$1":"TIME"`)
	line = bytesRE.ReplaceAllString(line, `"bytes":"N"`)
	var head struct {
		Type      string `json:"type"`
		SessionID string `json:"session_id"`
		Seq       uint64 `json:"seq"`
	}
	_ = json.Unmarshal([]byte(line), &head)
	switch head.Type {
	case "session.resumed":
		// Its turns hold the stored lines as they were sent; later events
		// continue from its own seq.
		n.outSeq[head.SessionID] = head.Seq
	case "session.listed", "session.turns":
	default:
		line = n.renumber(line)
	}
	return idRE.ReplaceAllStringFunc(line, func(id string) string {
		if s, ok := n.names[id]; ok {
			return s
		}
		prefix := map[string]string{"s": "S", "t": "T", "ap": "A"}[id[:strings.IndexByte(id, '_')]]
		n.counts[prefix]++
		s := "$" + prefix + strconv.Itoa(n.counts[prefix])
		n.names[id] = s
		n.reals[s] = id
		return s
	})
}

// renumber gives a session event the next seq of its session without the
// tool.progress events that were left out.
func (n *normaliser) renumber(line string) string {
	if m := seqRE.FindStringSubmatch(line); m != nil && !strings.Contains(line, `"seq":0`) {
		var ev struct {
			SessionID string `json:"session_id"`
		}
		_ = json.Unmarshal([]byte(line), &ev)
		n.outSeq[ev.SessionID]++
		line = strings.Replace(line, m[0], fmt.Sprintf(`"seq":%d`, n.outSeq[ev.SessionID]), 1)
	}
	return line
}

var placeholderRE = regexp.MustCompile(`\$(S|T|A)[0-9]+|\$WORK|\$REPEAT\((.),([0-9]+)\)`)

func (n *normaliser) expand(line string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return placeholderRE.ReplaceAllStringFunc(line, func(p string) string {
		if p == "$WORK" {
			return n.ws
		}
		if m := placeholderRE.FindStringSubmatch(p); m[2] != "" {
			k, _ := strconv.Atoi(m[3])
			return strings.Repeat(m[2], k)
		}
		if r, ok := n.reals[p]; ok {
			return r
		}
		return p
	})
}
