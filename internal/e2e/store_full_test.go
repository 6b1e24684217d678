package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/store"
)

// A disk that fills up during a turn: `scv exec` runs under a file-size
// limit (ulimit -f, so every write past 32 KiB fails with EFBIG, as on a
// full disk) after an earlier run created the database. The answer
// streams, but the turn cannot be saved: the run says so on stderr, naming
// the session database, and exits non-zero; nothing is lost silently. The
// database still opens and passes its checks, the earlier session is
// whole, and the failed turn never entered the history.
func TestExecDiskFullIsAnError(t *testing.T) {
	fm := modeltest.New(t)
	fm.Script(modeltest.Text("first answer"))
	fm.Script(modeltest.Text("second answer"))
	in := newInstance(t, providerConfig(fm.URL()))
	if r := in.run(in.env, "", "exec", "first prompt"); r.code != 0 {
		t.Fatalf("first exec: exit %d: %s", r.code, r.stderr)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", `ulimit -f 64 && exec "$@"`, "bash", scvBin, "--scv-home", in.home, "exec", "second prompt")
	cmd.Dir, cmd.Env = in.ws, in.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("exec on a full disk: %v, want a non-zero exit; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "session database") {
		t.Errorf("stderr does not say the session database failed:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "store_error") {
		t.Errorf("stderr does not name the store_error failure:\n%s", stderr.String())
	}

	st := in.openDB()
	defer st.Close()
	if err := st.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	page, err := st.ListSessions(t.Context(), store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for _, s := range page.Sessions {
		if s.Title == "first prompt" {
			first = s.ID
		}
		if s.Title != "first prompt" && s.Turns > 0 {
			turns, err := st.Outline(t.Context(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range turns {
				if x.State == store.TurnCompleted {
					t.Errorf("the turn that could not be saved is stored completed: %+v", x)
				}
			}
			if hist, err := st.History(t.Context(), s.ID); err != nil || len(hist) != 0 {
				t.Errorf("the failed turn entered the history: %d messages, %v", len(hist), err)
			}
		}
	}
	if first == "" {
		t.Fatalf("the first session is gone: %+v", page.Sessions)
	}
	hist, err := st.History(t.Context(), first)
	if err != nil || len(hist) != 2 {
		t.Errorf("the first session's history: %d messages, %v; want its prompt and answer", len(hist), err)
	}
}
