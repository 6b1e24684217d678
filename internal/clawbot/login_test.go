package clawbot_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/paths"
)

func confirmedStatus(fields ...string) ilinktest.Answer {
	base := []string{"bot_token", "tok-new", "ilink_bot_id", "bot-1@im.bot", "ilink_user_id", "owner-1@im.wechat"}
	return ilinktest.Status("confirmed", append(base, fields...)...)
}

func TestLogin(t *testing.T) {
	fake := ilinktest.New(t)
	fake.LoginCode(ilinktest.Status("wait"), ilinktest.Status("scaned"), ilinktest.Status("scaned"), confirmedStatus())
	var shown, progress []string
	creds, err := clawbot.Login(t.Context(), clawbot.LoginOptions{BaseURL: fake.URL(), Interval: time.Millisecond,
		ShowCode: func(c string) { shown = append(shown, c) }, Progress: func(s string) { progress = append(progress, s) }})
	if err != nil {
		t.Fatal(err)
	}
	want := clawbot.Credentials{Token: "tok-new", BotID: "bot-1@im.bot", UserID: "owner-1@im.wechat", BaseURL: fake.URL()}
	if creds != want {
		t.Errorf("credentials = %+v, want %+v", creds, want)
	}
	if d := cmp.Diff([]string{"https://liteapp.weixin.qq.com/q/qr-0?bot_type=3"}, shown); d != "" {
		t.Errorf("codes shown (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"scaned"}, progress); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
	reqs := fake.Requests()
	if reqs[0].Path != "/ilink/bot/get_bot_qrcode" || reqs[0].Query != "bot_type=3" || reqs[1].Query != "qrcode=qr-0" {
		t.Errorf("first requests: %s?%s, %s?%s", reqs[0].Path, reqs[0].Query, reqs[1].Path, reqs[1].Query)
	}
}

func TestLoginExpiredCodeIsReplaced(t *testing.T) {
	fake := ilinktest.New(t)
	fake.LoginCode(ilinktest.Status("wait"), ilinktest.Status("expired"))
	fake.LoginCode(confirmedStatus("baseurl", "https://gw.example.com/"))
	var shown []string
	creds, err := clawbot.Login(t.Context(), clawbot.LoginOptions{BaseURL: fake.URL(), Interval: time.Millisecond, ShowCode: func(c string) { shown = append(shown, c) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != 2 || creds.BaseURL != "https://gw.example.com" {
		t.Errorf("codes %v, base URL %q", shown, creds.BaseURL)
	}
}

func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name  string
		codes [][]ilinktest.Answer
		err   string
	}{
		{"every code expires", [][]ilinktest.Answer{{ilinktest.Status("expired")}, {ilinktest.Status("expired")}, {ilinktest.Status("expired")}}, "3 QR codes expired"},
		{"no token", [][]ilinktest.Answer{{ilinktest.Status("confirmed", "ilink_bot_id", "b", "ilink_user_id", "u")}}, "[bot_token]"},
		{"no bot id", [][]ilinktest.Answer{{ilinktest.Status("confirmed", "bot_token", "t", "ilink_user_id", "u")}}, "[ilink_bot_id]"},
		{"no user id", [][]ilinktest.Answer{{ilinktest.Status("confirmed", "bot_token", "t", "ilink_bot_id", "b")}}, "[ilink_user_id]"},
		{"remote http base URL", [][]ilinktest.Answer{{confirmedStatus("baseurl", "http://203.0.113.9")}}, "http:// is accepted only for a loopback address"},
		{"unknown status", [][]ilinktest.Answer{{ilinktest.Status("weird")}}, `unknown status "weird"`},
		{"refused", [][]ilinktest.Answer{{{Status: 500, JSON: map[string]any{"ret": -1, "errmsg": "down"}}}}, "HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := ilinktest.New(t)
			for _, c := range tt.codes {
				fake.LoginCode(c...)
			}
			_, err := clawbot.Login(t.Context(), clawbot.LoginOptions{BaseURL: fake.URL(), Interval: time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want one containing %q", err, tt.err)
			}
		})
	}
}

func TestLoginGivesUp(t *testing.T) {
	fake := ilinktest.New(t)
	fake.LoginCode(ilinktest.Status("wait"))
	start := time.Now()
	_, err := clawbot.Login(t.Context(), clawbot.LoginOptions{BaseURL: fake.URL(), Interval: time.Millisecond, Timeout: 1500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not scanned and confirmed within 1.5s") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("gave up after %v", time.Since(start))
	}
}

func TestFiles(t *testing.T) {
	home := t.TempDir()
	f := clawbot.Files{Layout: paths.Layout{Home: home}}
	if _, err := f.Credentials("default"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "scv clawbot login") {
		t.Errorf("missing credentials: %v", err)
	}
	if s, err := f.Settings("default"); err != nil || s != clawbot.DefaultSettings() {
		t.Errorf("missing settings = %+v, %v", s, err)
	}
	c := clawbot.Credentials{Token: "t0k3n-value", BotID: "b", UserID: "u", BaseURL: "https://x.example"}
	if err := f.SaveCredentials("default", c); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Credentials("default"); err != nil || got != c {
		t.Errorf("credentials = %+v, %v", got, err)
	}
	set := clawbot.Settings{Enabled: false, Workspace: "/w", RemoteTools: clawbot.RemoteToolsOwner}
	if err := f.SaveSettings("work", set); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Settings("work"); err != nil || got != set {
		t.Errorf("settings = %+v, %v", got, err)
	}
	for _, p := range []string{"clawbot", "clawbot/accounts", "clawbot/settings"} {
		if fi, err := os.Stat(filepath.Join(home, p)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	for _, p := range []string{"clawbot/accounts/default.json", "clawbot/settings/work.json"} {
		if fi, err := os.Stat(filepath.Join(home, p)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(home, "clawbot/accounts/default.json"))
	for _, k := range []string{`"bot_token"`, `"ilink_bot_id"`, `"ilink_user_id"`, `"baseurl"`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("credentials file lacks %s: %s", k, raw)
		}
	}
	if names, err := f.Accounts(); err != nil || strings.Join(names, ",") != "default,work" {
		t.Errorf("accounts = %v, %v", names, err)
	}
	// Bad files are refused with the file named.
	bad := map[string]string{
		`{"enabled":true,"remote_tools":"everyone"}`: "remote_tools",
		`{"enabled":true,"colour":"red"}`:            "unknown field",
		`{"workspace":"relative/dir"}`:               "absolute",
		`{"enabled":true} {"x":1}`:                   "more than one JSON value",
	}
	for body, want := range bad {
		if err := os.WriteFile(filepath.Join(home, "clawbot/settings/bad.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Settings("bad"); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("settings %s: %v, want %q", body, err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "clawbot/accounts/evil.json"), []byte(`{"bot_token":"t","ilink_bot_id":"b","ilink_user_id":"u","baseurl":"http://10.1.2.3"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Credentials("evil"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("remote http base URL in a credentials file: %v", err)
	}
	if _, err := f.Credentials("../x"); err == nil {
		t.Error("account name with a path accepted")
	}
	if err := f.Delete("default"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "clawbot/accounts/default.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("credentials left after Delete: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	a := clawbot.Credentials{Token: "t1", BotID: "b", UserID: "u", BaseURL: "https://x.example/p"}
	b := a
	b.Token = "t2" // a rotated token: the same identity
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("a new token changed the identity")
	}
	for _, c := range []clawbot.Credentials{
		{Token: "t1", BotID: "b2", UserID: "u", BaseURL: a.BaseURL},
		{Token: "t1", BotID: "b", UserID: "u2", BaseURL: a.BaseURL},
		{Token: "t1", BotID: "b", UserID: "u", BaseURL: "https://y.example/p"},
	} {
		if c.Fingerprint() == a.Fingerprint() {
			t.Errorf("%+v has the identity of %+v", c, a)
		}
	}
}
