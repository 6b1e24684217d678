package app

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/server"
)

// session_start runs when the server starts the session (its hook.ran
// goes to the client) and session_end when it closes, each once with its JSON; every hook runs with the bash tool's
// scrubbed environment, so the provider's key is not in it.
func TestSessionHooksAndTheirEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	script := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(script, []byte("#!/bin/bash\n{ cat; echo; env | sort | grep -v '^_=\\|^PWD=\\|^SHLVL=\\|^SCV_HOOK_RUN='; } >> "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := ""
	for _, ev := range []string{"session_start", "session_end"} {
		cfg += fmt.Sprintf("[[hooks.run]]\nevent = %q\ncommand = [%q]\n", ev, script)
	}
	f := newFixture(t, cfg)
	f.app.opts.Env["SECRET_TOKEN_X"] = "not-a-key" // an ordinary variable stays
	sess, info, err := f.app.NewSession(t.Context(), "s1", server.SessionRequest{SessionStart: proto.SessionStart{Cwd: f.ws}})
	if err != nil {
		t.Fatal(err)
	}
	var ran []*proto.HookRan
	sess.SessionStartHooks(t.Context(), func(ev proto.TurnEvent) { ran = append(ran, ev.(*proto.HookRan)) })
	if len(ran) != 1 || ran[0].Hook != "session_start-1" || ran[0].Outcome != proto.HookOK || ran[0].TurnID != "" {
		t.Errorf("session_start hook.ran events: %+v", ran)
	}
	info.Close()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := "HOME=" + f.user + "\nPATH=/usr/bin:/bin\nSCV_HOOK_EVENT=%s\nSCV_HOOK_NAME=%s-1\nSCV_SESSION_ID=s1\nSCV_WORKSPACE=" + f.ws + "\nSECRET_TOKEN_X=not-a-key\n"
	want := `{"event":"session_start","hook":"session_start-1","session_id":"s1","cwd":"` + f.ws + `"}` + "\n" + fmt.Sprintf(env, "session_start", "session_start") +
		`{"event":"session_end","hook":"session_end-1","session_id":"s1","cwd":"` + f.ws + `"}` + "\n" + fmt.Sprintf(env, "session_end", "session_end")
	got := string(b)
	if strings.Contains(got, "sk-test") || strings.Contains(got, "BRAVE_SEARCH_API_KEY") {
		t.Errorf("the provider key reached a hook:\n%s", got)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("session hooks' input and environment (-want +got):\n%s", d)
	}
}

// A load that uses a workspace's hooks (allowed by the user config) says
// so in the log.
func TestWorkspaceHooksAreAnnounced(t *testing.T) {
	f := newFixture(t, "[hooks]\nallow_workspace = true\n")
	var buf bytes.Buffer
	f.app.opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := f.app.LoadConfig(f.ws, NoOverrides); err != nil || buf.Len() != 0 {
		t.Fatalf("without workspace hooks: %v, log %q", err, buf.String())
	}
	if err := os.MkdirAll(filepath.Join(f.ws, ".scv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, ".scv", "config.toml"), []byte("[[hooks.run]]\nname = \"repo-lint\"\nevent = \"turn_end\"\ncommand = [\"./lint\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.app.LoadConfig(f.ws, NoOverrides); err != nil {
		t.Fatal(err)
	}
	if log := buf.String(); !strings.Contains(log, "hooks of the workspace config run commands") || !strings.Contains(log, "repo-lint") {
		t.Errorf("log %q", log)
	}
}
