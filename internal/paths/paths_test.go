package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name, flag string
		env        map[string]string
		want       string
		wantErr    bool
	}{
		{"flag wins", "/a", map[string]string{"SCV_HOME": "/b", "HOME": "/h"}, "/a", false},
		{"env", "", map[string]string{"SCV_HOME": "/b", "HOME": "/h"}, "/b", false},
		{"default", "", map[string]string{"HOME": "/h"}, "/h/.scv", false},
		{"nothing", "", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Resolve(tt.flag, tt.env)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if l.Home != tt.want {
				t.Fatalf("home = %q, want %q", l.Home, tt.want)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	l := Layout{Home: "/x"}
	for got, want := range map[string]string{
		l.ConfigFile():            "/x/config.toml",
		l.ClawbotAccounts():       "/x/clawbot/accounts",
		l.ClawbotSettings():       "/x/clawbot/settings",
		l.Socket():                "/x/server.sock",
		l.Lock():                  "/x/server.lock",
		l.DelegationRecord("h-1"): "/x/run/delegations/h-1.json",
		l.Adapter("codex"):        "/x/adapters/codex",
		l.DaemonLog():             "/x/logs/daemon.log",
		l.SkillsDir():             "/x/skills",
		l.CommandsDir():           "/x/commands",
		l.State():                 "/x/state",
		l.Database():              "/x/state/scv.db",
		ProjectConfig("/w"):       "/w/.scv/config.toml",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestEnsureTightensMode(t *testing.T) {
	home := filepath.Join(t.TempDir(), "h")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := (Layout{Home: home}).Ensure(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(home)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("mode = %v, want 0700", st.Mode().Perm())
	}
}

// CanonicalDir accepts an absolute existing directory, resolving symbolic
// links, and names what is wrong with anything else.
func TestCanonicalDir(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	file := filepath.Join(dir, "file")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want, err string }{
		{in: real, want: real},
		{in: link + "/", want: real},
		{in: "", err: "an absolute directory is required"},
		{in: "rel/dir", err: `"rel/dir" must be an absolute path`},
		{in: filepath.Join(dir, "missing"), err: "no such file or directory"},
		{in: file, err: "is not a directory"},
	}
	for _, tc := range tests {
		got, err := CanonicalDir(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CanonicalDir(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CanonicalDir(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
