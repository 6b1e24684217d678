package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// dbBytes is the database file and its companions, concatenated.
func (in *instance) dbBytes() []byte {
	in.t.Helper()
	var all []byte
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(in.home, "state", "scv.db"+suffix))
		if err != nil && !os.IsNotExist(err) {
			in.t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// TestSessionsRmLeavesNoText: after `scv sessions rm`, none of the
// session's prompt, answer or tool output is left in the database file or
// its write-ahead log (checked before the rm too, so the check can fail).
func TestSessionsRmLeavesNoText(t *testing.T) {
	fm := modeltest.New(t)
	in := newInstance(t, providerConfig(fm.URL()))
	if err := os.WriteFile(filepath.Join(in.ws, "secret.txt"), []byte("file text PRIVFILE5521 here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fm.Script(modeltest.ToolCall("c1", "read", `{"path":"secret.txt"}`))
	fm.Script(modeltest.Text("noted PRIVANSWER9913 and kumquatzebra"))
	if r := in.run(in.env, "", "exec", "remember PRIVPROMPT4471 please"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	fm.Script(modeltest.Text("a session that stays"))
	if r := in.run(in.env, "", "exec", "keep this one"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	markers := []string{"PRIVPROMPT4471", "PRIVANSWER9913", "PRIVFILE5521", "kumquatzebra"}
	before := in.dbBytes()
	for _, m := range markers {
		if !bytes.Contains(before, []byte(m)) {
			t.Fatalf("%s is not in the database before the rm (test setup)", m)
		}
	}
	var id string
	for _, s := range in.listed() {
		if strings.HasPrefix(s.Title, "remember") {
			id = s.SessionID
		}
	}
	if r := in.run(in.env, "", "sessions", "rm", id); r.code != 0 {
		t.Fatalf("rm: %s", r.stderr)
	}
	after := in.dbBytes()
	for _, m := range markers {
		if i := bytes.Index(after, []byte(m)); i >= 0 {
			t.Errorf("%s is still in the database files after the rm (at byte %d)", m, i)
		}
	}
	if !bytes.Contains(after, []byte("keep this one")) {
		t.Error("the other session's prompt is gone too")
	}
}

// TestOldDatabaseMigratesAndResumes opens a database written by each
// earlier schema version (the store's fixtures) with the real binary: it
// migrates, lists and searches the old sessions, marks the turn left
// running interrupted, and resumes an old session with its history.
func TestOldDatabaseMigratesAndResumes(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join("..", "store", "testdata", "v*.db"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no store fixtures: %v", err)
	}
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			fm := modeltest.New(t)
			in := newInstance(t, providerConfig(fm.URL()))
			b, err := os.ReadFile(fx)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(in.home, "state"), 0o700); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(in.home, "state", "scv.db")
			if err := os.WriteFile(db, b, 0o600); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range in.listed() {
				ids = append(ids, s.SessionID)
			}
			slices.Sort(ids)
			want := []string{"fx-a", "fx-b", "fx-c"}
			if v := fixtureVersion(t, fx); v >= 6 {
				// From schema 6 on the fixture also holds fx-i, whose turn
				// carried images (internal/store's fillImageFixture).
				want = append(want, "fx-i")
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("sessions after migration: %v", ids)
			}
			if r := in.run(in.env, "", "sessions", "search", "numbats"); r.code != 0 || !strings.Contains(r.stdout, "fx-b") {
				t.Errorf("search over the old turns: exit %d: %s%s", r.code, r.stdout, r.stderr)
			}
			// The fixture's workspace (/home/u/project) is not on this
			// machine; point the session at the test's to resume it.
			sqlite, err := exec.LookPath("sqlite3")
			if err != nil {
				t.Skip("sqlite3 is not installed: the resume of the old session is not tried")
			}
			if out, err := exec.Command(sqlite, db, "UPDATE sessions SET workspace = '"+in.ws+"' WHERE id = 'fx-b'").CombinedOutput(); err != nil {
				t.Fatalf("sqlite3: %v: %s", err, out)
			}
			args := []string{"exec", "--resume", "fx-b", "and then?"}
			var version int
			fmt.Sscanf(filepath.Base(fx), "v%d.db", &version)
			if version >= 5 {
				// The session runs at its stored endpoint (a relay the
				// test's key is not for): refused before any request; an
				// explicit --base-url moves it to the fake model.
				r := in.run(in.env, "", args...)
				if r.code != 1 || !strings.Contains(r.stderr, "http://relay.example/v1") || len(fm.Requests()) != 0 {
					t.Errorf("exec --resume fx-b at its stored endpoint: exit %d, %d requests: %s", r.code, len(fm.Requests()), r.stderr)
				}
				args = append([]string{"--base-url", fm.URL()}, args...)
			}
			fm.Script(modeltest.Text("resumed after the migration"))
			r := in.run(in.env, "", args...)
			if r.code != 0 || !strings.Contains(r.stdout, "resumed after the migration") {
				t.Fatalf("exec --resume fx-b: exit %d: %s", r.code, r.stderr)
			}
			req := fm.Requests()[0]
			if got := userTexts(req); !slices.Equal(got, []string{"fixture prompt about numbats", "and then?"}) || !strings.Contains(string(req.Raw), "numbat answer") {
				t.Errorf("the resumed old session sent %q", got)
			}
			r = in.run(in.env, "", "sessions", "show", "fx-b")
			if !strings.Contains(r.stdout, "turn 2 · interrupted") || !strings.Contains(r.stdout, "turn 3 · completed") {
				t.Errorf("show fx-b after the resume:\n%s", r.stdout)
			}
		})
	}
}

// fixtureVersion is the schema version of a store fixture, from its name
// (vN.db).
func fixtureVersion(t *testing.T, path string) int {
	t.Helper()
	var v int
	if _, err := fmt.Sscanf(filepath.Base(path), "v%d.db", &v); err != nil {
		t.Fatalf("fixture name %s: %v", path, err)
	}
	return v
}
