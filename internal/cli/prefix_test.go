package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/store"
)

// seededHome is a new instance home with config as its user config and
// its session database opened as name (see app.OpenStore), for a test to
// store sessions in and close before it runs scv in env, which names the
// home.
func seededHome(t *testing.T, config, name string) (*store.Store, Env) {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	layout, err := paths.Resolve(home, Env{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStore(t.Context(), layout, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st, Env{"SCV_HOME": home, "HOME": t.TempDir(), "OPENAI_API_KEY": "sk-test"}
}

// TestSessionIDPrefix: every command that takes a session id takes a
// unique prefix of it, as git does; an ambiguous prefix is refused with
// the candidates, a too short one with the length it needs.
func TestSessionIDPrefix(t *testing.T) {
	m := modeltest.New(t)
	m.Script(modeltest.Text("again"))
	ws := t.TempDir()
	st, env := seededHome(t, "[providers.openai]\nbase_url = \""+m.URL()+"\"\nmodel = \"fake-model\"\n", "")
	for _, id := range []string{"s_1a2b3c4d-5e6", "s_1a2b9999-000", "s_77aa0000-111"} {
		if _, err := st.CreateSession(t.Context(), store.NewSession{ID: id, Workspace: ws, Provider: "openai", Model: "fake-model", Origin: store.OriginExec}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	out, errs, code := runCLI(t, env, "sessions", "show", "s_1a2b3")
	if code != 0 || !strings.Contains(out, "session   s_1a2b3c4d-5e6") {
		t.Errorf("show by prefix: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = runCLI(t, env, "sessions", "rename", "77aa", "by prefix")
	if code != 0 || out != "s_77aa0000-111: by prefix\n" {
		t.Errorf("rename by prefix without s_: exit %d %q %s", code, out, errs)
	}
	if out, errs, code = runCLI(t, env, "sessions", "export", "s_1a2b9", "--format", "jsonl"); code != 0 || !strings.Contains(out, `"session_id":"s_1a2b9999-000"`) {
		t.Errorf("export by prefix: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = runCLI(t, env, "sessions", "show", "s_1a2b")
	if code != ExitUsage || !strings.Contains(errs, `session id prefix "s_1a2b" matches s_1a2b3c4d-5e6, s_1a2b9999-000: give more of the id`) {
		t.Errorf("ambiguous: exit %d %q", code, errs)
	}
	_, errs, code = runCLI(t, env, "sessions", "show", "s_1")
	if code != ExitUsage || !strings.Contains(errs, "too short: give at least 4 characters after s_") {
		t.Errorf("too short: exit %d %q", code, errs)
	}
	_, errs, code = runCLI(t, env, "sessions", "rm", "s_1a2b", "s_77aa0")
	if code != ExitFailure || !strings.Contains(errs, "matches s_1a2b3c4d-5e6, s_1a2b9999-000") {
		t.Errorf("rm with an ambiguous prefix: exit %d %q", code, errs)
	}
	if out, _, _ := runCLI(t, env, "sessions", "list", "--all"); !strings.Contains(out, "s_1a2b3c4d-5e6") || !strings.Contains(out, "s_1a2b9999-000") || strings.Contains(out, "s_77aa0000-111") {
		t.Errorf("rm deleted the wrong sessions:\n%s", out)
	}

	// exec --resume goes through session.resume, as the TUI's --resume does.
	out, errs, code = runCLI(t, env, "exec", "--resume", "1a2b3c", "--workspace", ws, "more")
	if code != 0 || out != "again\n" {
		t.Errorf("exec --resume by prefix: exit %d %q %s", code, out, errs)
	}
	if out, _, _ := runCLI(t, env, "sessions", "show", "s_1a2b3c4d-5e6"); !strings.Contains(out, "turns     1") {
		t.Errorf("the turn is not in the session the prefix named:\n%s", out)
	}
	// undo --session: the prefix opens the session (which has nothing to
	// undo), where an unknown id is not found.
	_, errs, _ = runCLI(t, env, "undo", "--session", "1a2b3c", "--yes", "--workspace", ws)
	if strings.Contains(errs, "no stored session") || !strings.Contains(errs, "undo") {
		t.Errorf("undo --session by prefix: %q", errs)
	}
	if _, errs, _ = runCLI(t, env, "undo", "--session", "s_ffff0000", "--yes", "--workspace", ws); !strings.Contains(errs, "no stored session") {
		t.Errorf("undo --session unknown: %q", errs)
	}
	_, errs, code = runCLI(t, env, "exec", "--resume", "s_1a2b", "--workspace", ws, "more")
	if code == 0 || !strings.Contains(errs, "matches s_1a2b3c4d-5e6, s_1a2b9999-000") {
		t.Errorf("exec --resume with an ambiguous prefix: exit %d %q", code, errs)
	}
}
