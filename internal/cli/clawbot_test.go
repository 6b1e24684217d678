package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/store"
)

func runCLI(t *testing.T, env Env, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	code := Run(ctx, args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	return out.String(), errb.String(), code
}

func confirmed(bot, owner string) ilinktest.Answer {
	return ilinktest.Status("confirmed", "bot_token", "tok-very-secret-1", "ilink_bot_id", bot, "ilink_user_id", owner)
}

func TestClawbotLogin(t *testing.T) {
	fake := ilinktest.New(t)
	home := t.TempDir()
	env := Env{"HOME": t.TempDir()}
	fake.LoginCode(ilinktest.Status("scaned"), confirmed("bot-1", "owner-1"))
	out, errOut, code := runCLI(t, env, "--scv-home", home, "clawbot", "login", "--base-url", fake.URL())
	if code != 0 {
		t.Fatalf("login: exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"Scan this code with WeChat", "█", "Code content: https://liteapp.weixin.qq.com/q/qr-0?bot_type=3", "Scanned: confirm", `Account "default" logged in: bot bot-1, owner owner-1`} {
		if !strings.Contains(out, want) {
			t.Errorf("login output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, "tok-very-secret-1") {
		t.Error("login printed the token")
	}
	files := clawbot.Files{Layout: paths.Layout{Home: home}}
	c, err := files.Credentials("default")
	if err != nil || c.Token.Reveal() != "tok-very-secret-1" || c.BaseURL != fake.URL() {
		t.Fatalf("saved credentials %+v, %v", c, err)
	}

	// The same identity again (a new token): accepted, state kept.
	fake.LoginCode(ilinktest.Status("confirmed", "bot_token", "tok-2", "ilink_bot_id", "bot-1", "ilink_user_id", "owner-1"))
	if out, errOut, code := runCLI(t, env, "--scv-home", home, "clawbot", "login", "--base-url", fake.URL()); code != 0 || !strings.Contains(out, "same identity") {
		t.Errorf("re-login: exit %d: %s%s", code, out, errOut)
	}
	// Another identity is refused until logout, and nothing is saved.
	fake.LoginCode(confirmed("bot-2", "owner-1"))
	out, errOut, code = runCLI(t, env, "--scv-home", home, "clawbot", "login", "--base-url", fake.URL())
	if code == 0 || !strings.Contains(errOut, "another identity") || !strings.Contains(errOut, "scv clawbot logout") {
		t.Errorf("login as another bot: exit %d: %s%s", code, out, errOut)
	}
	if c, _ := files.Credentials("default"); c.BotID != "bot-1" || c.Token.Reveal() != "tok-2" {
		t.Errorf("credentials changed by a refused login: %+v", c)
	}
	// Under another account it is fine.
	fake.LoginCode(confirmed("bot-2", "owner-1"))
	if _, errOut, code := runCLI(t, env, "--scv-home", home, "clawbot", "login", "--account", "work", "--base-url", fake.URL()); code != 0 {
		t.Errorf("login of a second account: %s", errOut)
	}
}

// State bound to an identity in the store refuses another identity even
// when the credentials file is gone.
func TestClawbotLoginBoundState(t *testing.T) {
	fake := ilinktest.New(t)
	home := t.TempDir()
	layout := paths.Layout{Home: home}
	st, err := store.Open(t.Context(), store.Options{Path: layout.Database()})
	if err != nil {
		t.Fatal(err)
	}
	fp := clawbot.Credentials{BotID: "bot-old", UserID: "owner-1", BaseURL: fake.URL()}.Fingerprint()
	if err := st.BridgeBind(t.Context(), "default", fp); err != nil {
		t.Fatal(err)
	}
	st.Close()
	fake.LoginCode(confirmed("bot-new", "owner-1"))
	_, errOut, code := runCLI(t, Env{"HOME": t.TempDir()}, "--scv-home", home, "clawbot", "login", "--base-url", fake.URL())
	if code == 0 || !strings.Contains(errOut, "delivery state") {
		t.Errorf("login over state of another identity: exit %d: %s", code, errOut)
	}
}

func TestClawbotLoginBaseURL(t *testing.T) {
	fake := ilinktest.New(t)
	home := t.TempDir()
	env := Env{"HOME": t.TempDir()}
	// From the user config.
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[clawbot]\nbase_url = \""+fake.URL()+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake.LoginCode(confirmed("b", "o"))
	if out, errOut, code := runCLI(t, env, "--scv-home", home, "clawbot", "login"); code != 0 || !strings.Contains(out, "logged in") {
		t.Errorf("login with the configured base URL: exit %d: %s%s", code, out, errOut)
	}
	// http:// only for loopback; refused before anything is fetched.
	n := len(fake.Requests())
	_, errOut, code := runCLI(t, env, "--scv-home", home, "clawbot", "login", "--account", "x", "--base-url", "http://203.0.113.7:8080")
	if code != ExitUsage || !strings.Contains(errOut, "loopback") {
		t.Errorf("remote http base URL: exit %d: %s", code, errOut)
	}
	if len(fake.Requests()) != n {
		t.Error("a refused base URL was contacted")
	}
	// A project config cannot choose it.
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".scv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".scv", "config.toml"), []byte("[clawbot]\nbase_url = \"https://evil.example\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake.LoginCode(confirmed("b", "o"))
	t.Chdir(ws)
	if out, errOut, code := runCLI(t, env, "--scv-home", home, "clawbot", "login", "--account", "y"); code != 0 || !strings.Contains(out, "API "+fake.URL()) {
		t.Errorf("login inside a workspace with a project [clawbot]: exit %d: %s%s", code, out, errOut)
	}
}

// A delegated run may not manage the bridge.
func TestClawbotRefusedWhenDelegated(t *testing.T) {
	home := t.TempDir()
	for _, env := range []Env{{"HOME": home, "SCV_PARENT": "scv-1:s:h"}, {"HOME": home, "SCV_DELEGATION_DEPTH": "1"}} {
		for _, args := range [][]string{{"clawbot", "login"}, {"clawbot", "run"}, {"clawbot", "stop"}, {"clawbot", "status"}, {"clawbot", "logout"}, {"reload"}} {
			_, errOut, code := runCLI(t, env, append([]string{"--scv-home", home}, args...)...)
			if code != ExitUsage || !strings.Contains(errOut, "delegated agent run") {
				t.Errorf("%v with %v: exit %d: %s", args, env, code, errOut)
			}
		}
	}
}

// Without a daemon: status shows the saved accounts with connectivity
// unknown; stop saves the setting; run, logout and reload need the daemon.
func TestClawbotWithoutDaemon(t *testing.T) {
	home := t.TempDir()
	env := Env{"HOME": t.TempDir()}
	files := clawbot.Files{Layout: paths.Layout{Home: home}}
	if err := files.SaveCredentials("default", clawbot.Credentials{Token: "t-secret-x", BotID: "bot-1", UserID: "owner-1", BaseURL: "https://ilinkai.weixin.qq.com"}); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI(t, env, "--scv-home", home, "clawbot", "status")
	if code != ExitFailure || !strings.Contains(out, "connectivity unknown") || !strings.Contains(out, "bot-1") || !strings.Contains(out, "state:        unknown") {
		t.Errorf("status without a daemon: exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "t-secret-x") {
		t.Error("status printed the token")
	}
	if out, errOut, code := runCLI(t, env, "--scv-home", home, "clawbot", "stop"); code != 0 || !strings.Contains(out, "disabled") {
		t.Errorf("stop without a daemon: exit %d: %s%s", code, out, errOut)
	}
	if s, err := files.Settings("default"); err != nil || s.Enabled {
		t.Errorf("settings after stop = %+v, %v", s, err)
	}
	for _, args := range [][]string{{"clawbot", "run"}, {"clawbot", "logout"}, {"reload"}} {
		_, errOut, code := runCLI(t, env, append([]string{"--scv-home", home}, args...)...)
		if code != ExitFailure || !strings.Contains(errOut, "needs the running daemon") {
			t.Errorf("%v without a daemon: exit %d: %s", args, code, errOut)
		}
	}
	for _, args := range [][]string{{"clawbot", "run", "--remote-tools", "all"}, {"clawbot", "run", "--account", "a/b"}, {"clawbot", "login", "--account", ""}} {
		if _, errOut, code := runCLI(t, env, append([]string{"--scv-home", home}, args...)...); code != ExitUsage {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}
