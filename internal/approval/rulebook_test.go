package approval

import (
	"errors"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/tool"
)

func fetchCall(host string) Call { return Call{Tool: "web_fetch", Risk: tool.Network, Host: host} }

// scopeCases is one table for session grants and saved allow rules: a
// grant given for first and a rule written for the same scope cover
// exactly the same later calls.
var scopeCases = []struct {
	name  string
	first Call
	spec  Spec
	later Call
	ok    bool
}{
	{"prefix covers arguments", bashCall("go test ./x"), Spec{Tool: "bash", Prefix: "go test"}, bashCall("go test ./..."), true},
	{"prefix never covers $(…)", bashCall("go test ./x"), Spec{Tool: "bash", Prefix: "go test"}, bashCall("go test $(rm -rf x)"), false},
	{"prefix never covers a chain", bashCall("go test ./x"), Spec{Tool: "bash", Prefix: "go test"}, bashCall("go test && rm -rf ~"), false},
	{"prefix is words", bashCall("go test ./x"), Spec{Tool: "bash", Prefix: "go test"}, bashCall("go testx"), false},
	{"prefix never covers a guarded path", bashCall("go test ./x"), Spec{Tool: "bash", Prefix: "go test"}, bashCall("go test -o .git/hooks/pre-commit"), false},
	{"path covers below", writeCall("src/a.go"), Spec{Tool: "write", Path: "src/"}, writeCall("src/b/c.go"), true},
	{"path stays inside", writeCall("src/a.go"), Spec{Tool: "write", Path: "src/"}, writeCall("lib/a.go"), false},
	{"path never covers a guarded write", writeCall("src/a.go"), Spec{Tool: "write", Path: "src/"},
		Call{Tool: "write", Risk: tool.Filesystem, Paths: []string{"src/.env"}, NoGrant: true, NoGrantWhy: "secret-like"}, false},
	{"domain covers its host", fetchCall("docs.example.com"), Spec{Tool: "web_fetch", Domain: "docs.example.com"}, fetchCall("docs.example.com"), true},
	{"domain is one host", fetchCall("docs.example.com"), Spec{Tool: "web_fetch", Domain: "docs.example.com"}, fetchCall("evil.example.com"), false},
	{"domain port is another service", fetchCall("docs.example.com"), Spec{Tool: "web_fetch", Domain: "docs.example.com"}, fetchCall("docs.example.com:8080"), false},
}

// TestRulesMatchAsGrants: a saved allow rule and a session grant of the
// same scope cover the same calls.
func TestRulesMatchAsGrants(t *testing.T) {
	for _, c := range scopeCases {
		t.Run(c.name, func(t *testing.T) {
			gb := NewBroker()
			grant(t, gb, "a1", c.first, Answer{Prefix: c.spec.Prefix})
			_, gotGrant := gb.Allowed(c.later)

			r, err := c.spec.Rule()
			if err != nil {
				t.Fatal(err)
			}
			rb := NewBroker()
			rb.UseRules("/w", NewRuleBook("u", []Grant{r}))
			g, gotRule := rb.Allowed(c.later)
			if gotGrant != c.ok || gotRule != c.ok {
				t.Fatalf("later %+v: grant covers %v, rule covers %v; want %v", c.later, gotGrant, gotRule, c.ok)
			}
			if gotRule && g.ID != "u1" {
				t.Errorf("rule id %q", g.ID)
			}
		})
	}
}

// TestSavedRuleRefusals: an allow rule is refused where a grant could not
// be given; a deny rule may name anything.
func TestSavedRuleRefusals(t *testing.T) {
	for _, s := range []Spec{
		{Tool: "bash"},
		{Tool: "bash", Prefix: "python3"},
		{Tool: "bash", Prefix: "sudo"},
		{Tool: "bash", Prefix: "cat .env"},
		{Tool: "write", Path: ".git/"},
		{Tool: "write", Path: "/etc/"},
		{Tool: "web_fetch", Domain: "https://x.com/"},
		{Tool: "bash", Prefix: "go", Path: "src/"},
		{Tool: "bash", Prefix: "go", Workspace: "relative/dir"},
	} {
		if g, err := s.Rule(); err == nil {
			t.Errorf("%+v accepted as %+v", s, g)
		}
	}
	for _, s := range []Spec{
		{Tool: "bash", Prefix: "sudo", Deny: true},
		{Tool: "bash", Prefix: "python3", Deny: true},
		{Tool: "write", Path: ".github/", Deny: true},
		{Tool: "web_fetch", Deny: true},
	} {
		if _, err := s.Rule(); err != nil {
			t.Errorf("%+v refused: %v", s, err)
		}
	}
}

// TestDenyBeatsAllow: a deny rule wins over an allow rule and over a
// session grant; a command it cannot read is asked.
func TestDenyBeatsAllow(t *testing.T) {
	mk := func(s Spec) Grant {
		t.Helper()
		g, err := s.Rule()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	b := NewBroker()
	b.UseRules("/w", NewRuleBook("u", []Grant{
		mk(Spec{Tool: "bash", Prefix: "git", Source: "u.toml:1"}),
		mk(Spec{Tool: "bash", Prefix: "git push", Deny: true, Source: "u.toml:5"}),
		mk(Spec{Tool: "write", Path: "./"}),
		mk(Spec{Tool: "write", Path: "migrations/", Deny: true, Source: "p.toml:2"}),
	}))
	grant(t, b, "a1", bashCall("git push origin"), Answer{Prefix: "git push"})
	cases := []struct {
		call    Call
		deny    bool
		ask     string
		allowed bool
	}{
		{bashCall("git status"), false, "", true},
		{bashCall("git push origin main"), true, "", false},
		{bashCall("/usr/bin/git push"), true, "", false},
		{bashCall("GIT_TRACE=1 git push"), true, "", false},
		{bashCall("echo git push"), false, "", false},
		{bashCall("true; git push"), false, "cannot judge a command with `;`", false},
		{bashCall("xargs git push"), false, "cannot judge a command run through `xargs`", false},
		{writeCall("src/a.go"), false, "", true},
		{writeCall("src/a.go", "migrations/1.sql"), true, "", false},
	}
	for _, c := range cases {
		r, deny, ask := b.Denied(c.call)
		if deny != c.deny || c.ask == "" && ask != "" || c.ask != "" && !strings.Contains(ask, c.ask) {
			t.Errorf("Denied(%+v) = %+v, %v, %q; want %v, %q", c.call, r, deny, ask, c.deny, c.ask)
		}
		if deny && r.Source == "" {
			t.Errorf("Denied(%+v) names no source", c.call)
		}
		if _, ok := b.Allowed(c.call); ok != c.allowed {
			t.Errorf("Allowed(%+v) = %v, want %v", c.call, ok, c.allowed)
		}
	}
}

// TestRuleWorkspace: a rule with a workspace applies to sessions in it
// and below it only.
func TestRuleWorkspace(t *testing.T) {
	r, err := Spec{Tool: "bash", Prefix: "make", Workspace: "/home/me/src"}.Rule()
	if err != nil {
		t.Fatal(err)
	}
	book := NewRuleBook("u", []Grant{r})
	for ws, want := range map[string]bool{
		"/home/me/src": true, "/home/me/src/app": true, "/home/me/srcx": false, "/home/me": false, "/": false,
	} {
		b := NewBroker()
		b.UseRules(ws, book)
		if _, ok := b.Allowed(bashCall("make all")); ok != want {
			t.Errorf("workspace %s: allowed %v, want %v", ws, ok, want)
		}
	}
}

// TestSaveRule: "always (save rule)" saves the offered grant as a rule
// limited to the workspace, which then covers the next identical call in
// every session of the book; what a rule cannot cover is refused and
// stays pending.
func TestSaveRule(t *testing.T) {
	var saved []Grant
	book := NewRuleBook("s", nil)
	book.SetSaver(func(g Grant) (string, error) {
		saved = append(saved, g)
		return "/h/config.toml:7", nil
	})
	b := NewBroker()
	b.UseRules("/w", NewRuleBook("u", nil), book)
	c := bashCall("go test ./...")
	done := waitPending(t, t.Context(), b, "a1", request(b, c))
	if err := b.Resolve("a1", Answer{Approved: true, Save: true}); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.Granted == nil || a.Granted.Source != "/h/config.toml:7" || a.Granted.Prefix != "go test" || a.Granted.Workspace != "/w" || a.Granted.ID != "s1" {
		t.Fatalf("granted %+v", a.Granted)
	}
	if len(saved) != 1 || saved[0].Risk != "" {
		t.Fatalf("saved %+v", saved)
	}
	other := NewBroker()
	other.UseRules("/w/sub", book)
	if g, ok := other.Allowed(c); !ok || g.ID != "s1" {
		t.Fatalf("another session: %+v, %v", g, ok)
	}
	if len(b.Grants()) != 0 {
		t.Errorf("a saved rule also added a session grant: %+v", b.Grants())
	}

	// A command no prefix covers cannot be saved; the approval stays.
	nc := bashCall("echo $((40+2))")
	done = waitPending(t, t.Context(), b, "a2", request(b, nc))
	if err := b.Resolve("a2", Answer{Approved: true, Save: true}); err == nil || !strings.Contains(err.Error(), "contains `$(…)`: prefix rules never cover it") {
		t.Fatalf("saving a non-simple command: %v", err)
	}
	book.SetSaver(func(Grant) (string, error) { return "", errors.New("the file changed") })
	if err := b.Resolve("a2", Answer{Approved: true, Save: true, Exact: true}); err == nil {
		t.Fatal("an exact-command rule was saved")
	}
	if err := b.Resolve("a2", Answer{}); err != nil {
		t.Fatal(err)
	}
	<-done
	// A saver's refusal reaches the approver.
	c3 := bashCall("make all")
	done = waitPending(t, t.Context(), b, "a3", request(b, c3))
	if err := b.Resolve("a3", Answer{Approved: true, Save: true}); err == nil || err.Error() != "the file changed" {
		t.Fatalf("saver refusal: %v", err)
	}
	if err := b.Resolve("a3", Answer{}); err != nil {
		t.Fatal(err)
	}
	<-done
	// Without a saver, nothing is saved.
	nb := NewBroker()
	done = waitPending(t, t.Context(), nb, "a4", request(nb, c3))
	if err := nb.Resolve("a4", Answer{Approved: true, Save: true}); !errors.Is(err, ErrNoSave) {
		t.Fatalf("no saver: %v", err)
	}
	_ = nb.Resolve("a4", Answer{})
	<-done
}

// TestRuleBookShared: sessions matching calls while another saves a rule
// into the shared book (run with -race); afterwards every session has it.
func TestRuleBookShared(t *testing.T) {
	book := NewRuleBook("s", nil)
	book.SetSaver(func(Grant) (string, error) { return "/h/config.toml:1", nil })
	saver := NewBroker()
	saver.UseRules("/w", book)
	var brokers []*Broker
	for range 4 {
		b := NewBroker()
		b.UseRules("/w", NewRuleBook("u", nil), book)
		brokers = append(brokers, b)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	for _, b := range brokers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-stop:
					return
				default:
					b.Allowed(bashCall("make all"))
					b.Rules()
				}
			}
		}()
	}
	c := bashCall("make all")
	w := waitPending(t, t.Context(), saver, "a1", request(saver, c))
	if err := saver.Resolve("a1", Answer{Approved: true, Save: true}); err != nil {
		t.Fatal(err)
	}
	<-w
	close(stop)
	for range brokers {
		<-done
	}
	for i, b := range brokers {
		if _, ok := b.Allowed(c); !ok {
			t.Errorf("session %d does not have the saved rule", i)
		}
	}
}
