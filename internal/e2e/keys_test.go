package e2e

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// fakeKey is the provider key of these tests, in a variable whose name
// does not end in _API_KEY; it has characters that URL encoding changes.
const fakeKey = "Zq9+fake/KEY=value1234"

// keyForms are the ways the key can show up in text.
var keyForms = []string{fakeKey, strings.ToLower(fakeKey), url.QueryEscape(fakeKey), url.PathEscape(fakeKey), strings.ToLower(url.QueryEscape(fakeKey))}

func keyConfig(url string, extra ...string) string {
	return providerConfig(url, append([]string{`api_key_env = "FAKE_KEY"`}, extra...)...)
}

func assertNoKey(t *testing.T, what, text string) {
	t.Helper()
	for _, f := range keyForms {
		if strings.Contains(text, f) {
			t.Errorf("%s holds the provider key (as %q):\n%s", what, f, text)
		}
	}
}

// envOf reads a file of `env` output (or NUL-separated environ) into a map.
func envOf(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == '\n' }) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// TestProviderKeyNotInheritedByChildren: the active provider's key
// variable (FAKE_KEY, not a *_API_KEY name) reaches neither a delegated
// agent nor, by default, the bash tool's shell; with bash_env_remove = []
// the shell gets it, as the user chose.
func TestProviderKeyNotInheritedByChildren(t *testing.T) {
	root := t.TempDir()
	agentEnv := filepath.Join(root, "agent.env")
	agents := fakeCodex(t, root, fmt.Sprintf("cat /proc/$$/environ > %s; echo done\n", agentEnv))
	for _, tc := range []struct {
		name    string
		extra   []string
		bashKey bool
	}{
		{"default", nil, false},
		{"bash opts in", []string{"[tools]", "bash_env_remove = []"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.ToolCall("c1", "bash", `{"command":"env > bash.env"}`))
			fm.Script(modeltest.ToolCall("c2", "agent_codex", `{"prompt":"say hi"}`))
			fm.Script(modeltest.Text("ok"))
			// [agents.codex] must come after the provider's keys.
			in := newInstance(t, keyConfig(fm.URL(), append(append([]string{}, tc.extra...), agents...)...))
			in.runOK(in.withEnv("FAKE_KEY="+fakeKey), "", "exec", "--yes", "go")
			if k, ok := envOf(t, filepath.Join(in.ws, "bash.env"))["FAKE_KEY"]; ok != tc.bashKey || ok && k != fakeKey {
				t.Errorf("bash's shell has FAKE_KEY: %v, want %v", ok, tc.bashKey)
			}
			if _, ok := envOf(t, agentEnv)["FAKE_KEY"]; ok {
				t.Error("the delegated agent inherited FAKE_KEY, the provider's key variable")
			}
		})
	}
}

// TestProviderKeyRedacted: a command that prints the key (bash may see it
// when the user opts in) never shows it in tool.progress, whole, in lower
// case or cut; and a provider error echoing the key, lower-cased and
// URL-encoded, reaches neither the turn.failed message nor stderr.
func TestProviderKeyRedacted(t *testing.T) {
	t.Run("progress", func(t *testing.T) {
		fm := modeltest.New(t)
		cmd := `for i in 1 2 3 4; do echo "using $FAKE_KEY"; sleep 0.3; echo "lower $(printf %s "$FAKE_KEY" | tr A-Z a-z)"; sleep 0.3; done`
		fm.Script(modeltest.ToolCall("c1", "bash", testutil.JSON(map[string]string{"command": cmd})))
		fm.Script(modeltest.Text("ok"))
		in := newInstance(t, keyConfig(fm.URL(), "[tools]", "bash_env_remove = []"))
		r := in.runOK(in.withEnv("FAKE_KEY="+fakeKey), "", "exec", "--yes", "--json", "go")
		progress := 0
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		for sc.Scan() {
			ev, err := proto.DecodeEvent(sc.Bytes())
			if ev, ok := ev.(*proto.ToolProgress); err == nil && ok {
				progress++
				assertNoKey(t, "tool.progress", ev.Text)
				if strings.Contains(strings.ToLower(ev.Text), "zq9") {
					t.Errorf("tool.progress holds a piece of the key: %q", ev.Text)
				}
			}
		}
		if progress == 0 {
			t.Fatalf("no tool.progress event; stdout:\n%s", r.stdout)
		}
	})
	t.Run("provider error", func(t *testing.T) {
		fm := modeltest.New(t)
		body := fmt.Sprintf(`{"error":{"message":"Incorrect API key provided: %s (sent as %s)","type":"invalid_request_error"}}`,
			strings.ToLower(fakeKey), url.QueryEscape(fakeKey))
		fm.Script(modeltest.HTTPError(401, body, ""))
		in := newInstance(t, keyConfig(fm.URL()))
		r := in.run(in.withEnv("FAKE_KEY="+fakeKey), "", "exec", "--json", "go")
		if r.code == 0 {
			t.Fatalf("exit 0 for a refused key; stdout:\n%s", r.stdout)
		}
		assertNoKey(t, "stdout (events)", r.stdout)
		assertNoKey(t, "stderr", r.stderr)
		if !strings.Contains(r.stdout, "Incorrect API key provided") {
			t.Errorf("the provider's message is gone altogether:\n%s", r.stdout)
		}
	})
}
