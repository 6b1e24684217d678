package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/store"
)

// TestSessionsListHidesFailedBeforeAnswer: `scv sessions list` leaves out
// a session whose only turn failed before any answer; --all lists it.
func TestSessionsListHidesFailedBeforeAnswer(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Path: filepath.Join(home, "state", "scv.db"),
		Holder: store.Holder{Instance: home, PID: os.Getpid(), Name: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		id, prompt string
		ok         bool
	}{{"s_answered", "a prompt that was answered", true}, {"s_failed", "a prompt that hit a 401", false}} {
		if _, err := st.CreateSession(ctx, store.NewSession{ID: s.id, Workspace: ws, Provider: "p", Model: "m", Origin: store.OriginTUI}); err != nil {
			t.Fatal(err)
		}
		tl, err := st.BeginTurn(ctx, s.id, "t_"+s.id, s.prompt)
		if err != nil {
			t.Fatal(err)
		}
		if s.ok {
			err = tl.Complete(ctx, store.Completion{Answer: "the answer"})
		} else {
			err = tl.End(ctx, store.TurnEnd{State: store.TurnFailed, Code: "provider_error", Message: "401"})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	list := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := Run(t.Context(), append([]string{"--scv-home", home, "sessions", "list", "--workspace", ws}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
		if code != ExitOK {
			t.Fatalf("scv sessions list %v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	if out := list(); !strings.Contains(out, "s_answered") || strings.Contains(out, "s_failed") {
		t.Errorf("scv sessions list:\n%s", out)
	}
	var out, errb bytes.Buffer
	code := Run(t.Context(), []string{"--scv-home", home, "sessions", "list", "--all"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, Env{"HOME": t.TempDir()})
	if code != ExitOK || !strings.Contains(out.String(), "s_failed") || !strings.Contains(out.String(), "s_answered") {
		t.Errorf("scv sessions list --all (exit %d):\n%s%s", code, out.String(), errb.String())
	}
}
