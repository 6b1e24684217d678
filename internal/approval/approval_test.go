package approval

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/tool"
)

func TestDecide(t *testing.T) {
	risks := []tool.Risk{tool.ReadOnly, tool.Filesystem, tool.Process, tool.Delegate, tool.Network}
	want := map[Policy][]Decision{
		AskOnRisk:  {Run, Ask, Ask, Ask, Ask},
		AskAlways:  {Ask, Ask, Ask, Ask, Ask},
		DenyOnRisk: {Run, Deny, Deny, Deny, Deny},
		// The deprecated names decide exactly as what they stand for.
		"on-risk": {Run, Ask, Ask, Ask, Ask},
		"always":  {Ask, Ask, Ask, Ask, Ask},
		"never":   {Run, Deny, Deny, Deny, Deny},
	}
	for p, ds := range want {
		for i, r := range risks {
			if got := Decide(p, r); got != ds[i] {
				t.Errorf("Decide(%s, %s) = %s, want %s", p, r, got, ds[i])
			}
		}
	}
}

func TestParseAndRank(t *testing.T) {
	for in, want := range map[string]Policy{
		"ask-on-risk": AskOnRisk, "ask-always": AskAlways, "deny-on-risk": DenyOnRisk,
		"on-risk": AskOnRisk, "always": AskAlways, "never": DenyOnRisk,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"sometimes", "", "Never", "deny"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	if !(Rank(AskOnRisk) < Rank(AskAlways) && Rank(AskAlways) < Rank(DenyOnRisk)) {
		t.Error("rank order wrong")
	}
	if Rank("never") != Rank(DenyOnRisk) || Rank("on-risk") != Rank(AskOnRisk) || Rank("x") != -1 {
		t.Error("aliases must rank as what they stand for")
	}
}

// waitPending starts a Wait for id in a goroutine and returns once it is
// registered; the channel delivers its outcome.
func waitPending(t *testing.T, ctx context.Context, b *Broker, id string, req Request) chan Answer {
	t.Helper()
	done := make(chan Answer, 1)
	go func() {
		a, ok := b.Wait(ctx, id, req, nil)
		if !ok {
			a = Answer{Reason: "<cancelled>"}
		}
		done <- a
	}()
	for !b.Pending(id) {
		time.Sleep(time.Millisecond)
	}
	return done
}

func TestBroker(t *testing.T) {
	b := NewBroker()
	done := waitPending(t, t.Context(), b, "a1", Request{})
	if err := b.Resolve("nope", Answer{Approved: true}); !errors.Is(err, ErrNotPending) {
		t.Fatalf("resolve of an unknown id: %v", err)
	}
	if err := b.Resolve("a1", Answer{Approved: true}); err != nil {
		t.Fatal(err)
	}
	if a := <-done; !a.Approved {
		t.Fatal("approval lost")
	}
	if err := b.Resolve("a1", Answer{Approved: true}); !errors.Is(err, ErrNotPending) {
		t.Fatal("resolved twice")
	}
}

func TestBrokerDenyWithReason(t *testing.T) {
	b := NewBroker()
	done := waitPending(t, t.Context(), b, "a1", Request{})
	long := string(make([]byte, MaxReasonBytes+1))
	for _, bad := range []Answer{{Approved: true, Reason: "why"}, {Reason: long}, {Prefix: "go"}} {
		if err := b.Resolve("a1", bad); err == nil || errors.Is(err, ErrNotPending) {
			t.Errorf("Resolve(%+v) = %v, want a refusal", bad, err)
		}
	}
	if !b.Pending("a1") {
		t.Fatal("a refused answer withdrew the approval")
	}
	if err := b.Resolve("a1", Answer{Reason: "use the Makefile"}); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.Approved || a.Reason != "use the Makefile" {
		t.Fatalf("answer = %+v", a)
	}
}

func TestBrokerCancelDenies(t *testing.T) {
	b := NewBroker()
	ctx, cancel := context.WithCancel(t.Context())
	done := waitPending(t, ctx, b, "a1", Request{})
	cancel()
	if a := <-done; a.Approved || a.Reason != "<cancelled>" {
		t.Fatalf("cancelled approval answered %+v", a)
	}
	if b.Pending("a1") {
		t.Fatal("cancelled approval still pending")
	}
}

// TestCancelPending: cancelling through the broker happens only while the
// approval is pending, and the waiting call sees the cancellation.
func TestCancelPending(t *testing.T) {
	b := NewBroker()
	ctx, cancel := context.WithCancel(t.Context())
	done := waitPending(t, ctx, b, "a1", Request{})
	if b.CancelPending("other", cancel) {
		t.Fatal("cancelled for an unknown approval")
	}
	if ctx.Err() != nil {
		t.Fatal("the context was cancelled for an unknown approval")
	}
	if !b.CancelPending("a1", cancel) {
		t.Fatal("CancelPending of a pending approval failed")
	}
	if a := <-done; a.Reason != "<cancelled>" {
		t.Fatalf("the call saw %+v, not a cancellation", a)
	}
	if b.CancelPending("a1", cancel) {
		t.Fatal("CancelPending succeeded after the approval ended")
	}
}

// request is the approval of c as the broker would announce it.
func request(b *Broker, c Call) Request {
	offer, _ := b.Explain(c)
	return Request{Offer: offer, Call: c}
}

func bashCall(cmd string) Call { return Call{Tool: "bash", Risk: tool.Process, Command: cmd} }

func writeCall(paths ...string) Call { return Call{Tool: "write", Risk: tool.Filesystem, Paths: paths} }

// grant answers a pending approval of c with a session grant.
func grant(t *testing.T, b *Broker, id string, c Call, a Answer) {
	t.Helper()
	done := waitPending(t, t.Context(), b, id, request(b, c))
	a.Approved, a.Session = true, true
	if err := b.Resolve(id, a); err != nil {
		t.Fatalf("Resolve(%s, %+v): %v", id, a, err)
	}
	<-done
}

func TestSessionGrants(t *testing.T) {
	b := NewBroker()
	bash := request(b, bashCall("go test ./..."))
	if bash.Offer == nil || bash.Offer.Prefix != "go test" || bash.Offer.Command != "" {
		t.Fatalf("offer = %+v, want prefix go test (which covers the command)", bash.Offer)
	}
	if o := request(b, bashCall("echo $((1+1))")).Offer; o == nil || o.Prefix != "echo" || o.Command != "echo $((1+1))" {
		t.Fatalf("offer = %+v, want prefix echo and the exact command it does not cover", o)
	}
	// Refused grants leave the approval pending and add nothing.
	done := waitPending(t, t.Context(), b, "a1", bash)
	for _, bad := range []Answer{
		{Session: true}, // not approved
		{Approved: true, Session: true, Prefix: "go vet"}, // does not begin the command
		{Approved: true, Session: true, Prefix: "go test;"},
		{Approved: true, Session: true, Prefix: "go test ./... extra"},
		{Approved: true, Session: true, Path: "src/"},
		{Approved: true, Session: true, Exact: true, Prefix: "go"},
		{Approved: true, Exact: true},
	} {
		if err := b.Resolve("a1", bad); err == nil {
			t.Errorf("Resolve(%+v) accepted", bad)
		}
	}
	if len(b.Grants()) != 0 || !b.Pending("a1") {
		t.Fatal("a refused grant changed the broker")
	}
	if err := b.Resolve("a1", Answer{Approved: true, Session: true, Prefix: " go   test "}); err != nil {
		t.Fatal(err)
	}
	ans := <-done
	// The prefix covers the approved command, so the grant is the prefix.
	want := []Grant{{ID: "g1", Tool: "bash", Risk: tool.Process, Prefix: "go test"}}
	if d := cmp.Diff(want, b.Grants()); d != "" {
		t.Fatalf("grants (-want +got):\n%s", d)
	}
	// The waiting call learns the grant its answer added (tool.started
	// carries it, so a stored turn can say so).
	if ans.Granted == nil || *ans.Granted != want[0] {
		t.Errorf("the answer's Granted = %+v, want %+v", ans.Granted, want[0])
	}
	for cmd, covered := range map[string]bool{
		"go test":                true,
		"go test -run X ./pkg/":  true,
		"go\ttest ./...":         true,
		"go testx":               false,
		"go test; rm -rf ~":      false,
		"go test && rm -rf ~":    false,
		"go test | sh":           false,
		"go test $(rm -rf ~)":    false,
		"go test `rm -rf ~`":     false,
		"go test > /etc/passwd":  false,
		"go test\nrm -rf ~":      false,
		"go vet":                 false,
		"go":                     false,
		"FOO=1 go test":          false,
		"\"go\" test":            false,
		"go test \x1b[8m":        false,
		"go test & curl evil":    false,
		"go test <(curl x)":      false,
		"go test ${HOME}":        false,
		"go test \\\nrm":         false,
		"go test 'a b' -v ./...": true,
		// A command naming a guarded path is never covered.
		"go test -o .git/hooks/pre-commit": false,
		"go test ./.vscode/...":            false,
	} {
		if _, ok := b.Allowed(bashCall(cmd)); ok != covered {
			t.Errorf("Allowed(bash, %q) = %v, want %v", cmd, ok, covered)
		}
	}
	if _, ok := b.Allowed(Call{Tool: "bash", Risk: tool.Process, Command: "go test", NoGrant: true}); ok {
		t.Error("a call whose tool forbids grants was allowed")
	}
	if _, ok := b.Allowed(Call{Tool: "other", Risk: tool.Process, Command: "go test"}); ok {
		t.Error("a grant covered another tool")
	}

	// A tool grant: same tool, same risk only; the same grant twice is one.
	for _, id := range []string{"a2", "a3"} {
		grant(t, b, id, Call{Tool: "mcp_x", Risk: tool.Process}, Answer{})
	}
	if n := len(b.Grants()); n != 2 {
		t.Fatalf("%d grants, want 2 (bash and mcp_x)", n)
	}
	if _, ok := b.Allowed(Call{Tool: "mcp_x", Risk: tool.Process}); !ok {
		t.Error("the tool grant does not cover a call")
	}
	if _, ok := b.Allowed(Call{Tool: "mcp_x", Risk: tool.Network}); ok {
		t.Error("a grant covered another risk")
	}
	if !b.Revoke("g1") || b.Revoke("g1") {
		t.Fatal("revoke g1 once")
	}
	if _, ok := b.Allowed(bashCall("go test")); ok {
		t.Error("a revoked grant still applies")
	}

	// No offer: the call can never be granted, and the reason says why.
	agent := Call{Tool: "agent_claude", Risk: tool.Delegate, NoGrant: true, NoGrantWhy: "full permissions"}
	if offer, why := b.Explain(agent); offer != nil || why != "full permissions" {
		t.Fatalf("Explain(no grant) = %+v, %q", offer, why)
	}
	done = waitPending(t, t.Context(), b, "a4", request(b, agent))
	if err := b.Resolve("a4", Answer{Approved: true, Session: true}); !errors.Is(err, ErrNoGrant) {
		t.Fatalf("grant without an offer: %v", err)
	}
	if err := b.Resolve("a4", Answer{Approved: true}); err != nil {
		t.Fatal(err)
	}
	<-done
}

// TestExactCommandGrant: "allow for this session" on a command that no
// prefix can cover (a substitution) still covers that exact command.
func TestExactCommandGrant(t *testing.T) {
	b := NewBroker()
	cmd := "echo uxsess-$((40+2))"
	grant(t, b, "a1", bashCall(cmd), Answer{})
	if _, ok := b.Allowed(bashCall(cmd)); !ok {
		t.Fatal("the approved command is asked again")
	}
	if _, ok := b.Allowed(bashCall("echo uxsess-$((40+3))")); ok {
		t.Fatal("the exact grant covered another substitution")
	}
	if _, ok := b.Allowed(bashCall("echo plain")); !ok {
		t.Fatal("the prefix `echo` of the same grant does not cover a simple echo")
	}
	offer, why := b.Explain(bashCall("echo $(id)"))
	if why != "contains `$(…)`: prefix grants never cover it" || offer == nil || offer.Command != "echo $(id)" {
		t.Fatalf("Explain(echo $(id)) = %+v, %q", offer, why)
	}
	// Exact only: the prefix is left out.
	grant(t, b, "a2", bashCall("rm -rf build"), Answer{Exact: true})
	if _, ok := b.Allowed(bashCall("rm -rf build")); !ok {
		t.Fatal("exact grant does not cover its command")
	}
	if _, ok := b.Allowed(bashCall("rm -rf src")); ok {
		t.Fatal("an exact grant covered another command")
	}
	if _, why := b.Explain(bashCall("rm -rf src")); why != "no session grant covers it (`echo`, one exact command)" {
		t.Fatalf("uncovered reason %q", why)
	}
	// A command naming a guarded path is never offered a grant.
	if offer, why := b.Explain(bashCall("cp x .git/hooks/pre-commit")); offer != nil || !strings.Contains(why, "`.git/hooks/pre-commit`, a guarded path") {
		t.Fatalf("Explain(cp to hooks) = %+v, %q", offer, why)
	}
}

// TestRunnerPrefixes: shells, interpreters and runners are never proposed
// or accepted as a prefix without a fixed script, and their exact command
// is what a grant covers.
func TestRunnerPrefixes(t *testing.T) {
	for cmd, want := range map[string]string{
		"bash -c 'rm -rf ~'":               "",
		"sh -c x":                          "",
		"/bin/bash ./ci.sh --fast":         "/bin/bash ./ci.sh",
		"bash scripts/ci.sh":               "bash scripts/ci.sh",
		"env FOO=1 go test":                "",
		"sudo make install":                "",
		"sudo ./install.sh":                "",
		"xargs rm":                         "",
		"python3 -c 'print(1)'":            "",
		"python3 scripts/check.py --quick": "python3 scripts/check.py",
		"python3 -m pytest -q":             "python3 -m pytest",
		"python3.12 manage.py test":        "python3.12 manage.py",
		"node -e 1":                        "",
		"node server.js":                   "node server.js",
		"deno run main.ts":                 "deno run main.ts",
		"timeout 60 ./slow.sh":             "timeout 60 ./slow.sh",
		"timeout 60 go test":               "",
		"nohup sleep 1":                    "",
		"awk -f prog.awk x":                "",
		"find . -name x":                   "find",
		"find . -exec rm {} +":             "",
		"find . -delete":                   "",
		"go test ./...":                    "go test",
	} {
		if got := ProposePrefix(cmd); got != want {
			t.Errorf("ProposePrefix(%q) = %q, want %q", cmd, got, want)
		}
	}
	for _, bad := range []struct{ prefix, cmd string }{
		{"bash", "bash -c 'x'"}, {"bash -c", "bash -c x"}, {"python3", "python3 x.py"}, {"python3 -c", "python3 -c x"},
		{"env", "env go test"}, {"sudo ./x.sh", "sudo ./x.sh"}, {"node -e", "node -e 1"}, {"xargs", "xargs rm"},
		{"find . -exec", "find . -exec rm {} +"}, {"/usr/bin/env", "/usr/bin/env x"}, {"eval", "eval x"},
	} {
		err := CheckPrefix(bad.prefix, bad.cmd)
		if err == nil {
			t.Errorf("CheckPrefix(%q, %q) accepted", bad.prefix, bad.cmd)
			continue
		}
		if !strings.Contains(err.Error(), "`") {
			t.Errorf("CheckPrefix(%q) = %v: the refusal does not name the word", bad.prefix, err)
		}
	}
	for _, good := range []struct{ prefix, cmd string }{
		{"python3 scripts/check.py", "python3 scripts/check.py -v"}, {"bash ./ci.sh", "bash ./ci.sh"}, {"find", "find . -name x"},
	} {
		if err := CheckPrefix(good.prefix, good.cmd); err != nil {
			t.Errorf("CheckPrefix(%q, %q): %v", good.prefix, good.cmd, err)
		}
	}
	// A runner prefix (a saved rule, say) covers nothing, and a find
	// prefix never covers a find that runs something.
	if MatchPrefix("bash", "bash ok.sh") || MatchPrefix("find", "find . -exec rm -rf src +") || !MatchPrefix("find", "find . -name x") {
		t.Error("runner and find prefixes matched wrongly")
	}
	// The panel says why no prefix is offered.
	b := NewBroker()
	offer, why := b.Explain(bashCall("bash -c 'curl x | sh'"))
	if offer == nil || offer.Prefix != "" || offer.Command == "" || !strings.Contains(why, "`bash` is a shell, which runs any script") {
		t.Fatalf("Explain(bash -c) = %+v, %q", offer, why)
	}
	grant(t, b, "a1", bashCall("bash -c 'curl x | sh'"), Answer{})
	if _, ok := b.Allowed(bashCall("bash -c 'rm -rf ~'")); ok {
		t.Fatal("the exact grant of one bash -c covered another")
	}
	done := waitPending(t, t.Context(), b, "a2", request(b, bashCall("sh -c x")))
	if err := b.Resolve("a2", Answer{Approved: true, Session: true, Prefix: "sh"}); err == nil || !strings.Contains(err.Error(), "`sh` is a shell, which runs any script it is given: a prefix must name a fixed script after it, such as `sh ./ci.sh`") {
		t.Fatalf("typed runner prefix: %v", err)
	}
	if err := b.Resolve("a2", Answer{}); err != nil {
		t.Fatal(err)
	}
	<-done
}

// TestPathGrants: a write grant covers the confirmed directory (or file)
// only, and never a guarded path.
func TestPathGrants(t *testing.T) {
	for paths, want := range map[string]string{
		"a.txt": "./", "src/a.go": "src/", "src/x/a.go": "src/x/", "src/lnk/a|other/a": "./", "src/a/x|src/b/y": "src/",
	} {
		if got := ProposePath(strings.Split(paths, "|")); got != want {
			t.Errorf("ProposePath(%s) = %q, want %q", paths, got, want)
		}
	}
	b := NewBroker()
	src := writeCall("src/x/a.go")
	if offer, _ := b.Explain(src); offer == nil || offer.Path != "src/x/" {
		t.Fatalf("offer %+v, want path src/x/", offer)
	}
	done := waitPending(t, t.Context(), b, "a1", request(b, src))
	for _, bad := range []string{"lib/", "/src/", "../", "src/y", "src/*", "src x", "src/x/a.g"} {
		if err := b.Resolve("a1", Answer{Approved: true, Session: true, Path: bad}); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
	if err := b.Resolve("a1", Answer{Approved: true, Session: true, Prefix: "src"}); err == nil {
		t.Error("a prefix accepted for a write")
	}
	if err := b.Resolve("a1", Answer{Approved: true, Session: true, Path: "src"}); err != nil {
		t.Fatal(err)
	}
	<-done
	for paths, covered := range map[string]bool{
		"src/x/a.go": true, "src/b.go": true, "src/deep/er/c.go": true, "srcx/a.go": false, "a.txt": false,
		"src/lnk/a|other/a": false,
	} {
		if _, ok := b.Allowed(writeCall(strings.Split(paths, "|")...)); ok != covered {
			t.Errorf("Allowed(write %s) = %v, want %v", paths, ok, covered)
		}
	}
	if _, why := b.Explain(writeCall("lib/a.go")); why != "outside the session's write grants (`src/`)" {
		t.Errorf("uncovered write reason %q", why)
	}
	// The whole workspace, and a one-file grant.
	grant(t, b, "a2", writeCall("a.txt"), Answer{})
	if _, ok := b.Allowed(writeCall("docs/x.md")); !ok {
		t.Error("the workspace grant does not cover docs/x.md")
	}
	b2 := NewBroker()
	grant(t, b2, "a1", writeCall("README.md"), Answer{Path: "README.md"})
	if _, ok := b2.Allowed(writeCall("README.md")); !ok {
		t.Error("the one-file grant does not cover its file")
	}
	if _, ok := b2.Allowed(writeCall("README.mdx")); ok {
		t.Error("the one-file grant covered another file")
	}
	// A guarded write is never covered, even by the workspace grant.
	guarded := Call{Tool: "write", Risk: tool.Filesystem, Paths: []string{".git/config"}, NoGrant: true, NoGrantWhy: "guarded"}
	if _, ok := b.Allowed(guarded); ok {
		t.Error("a guarded write was covered")
	}
}

func TestCommandGuard(t *testing.T) {
	for cmd, guarded := range map[string]bool{
		"cp x .git/hooks/pre-commit":       true,
		"git -C sub status":                false,
		"git add .gitignore":               false,
		"tee ~/.bashrc":                    true,
		"cat .env":                         true,
		"cat '.env'":                       true,
		"go build --config=.vscode/x.json": true,
		"cp x .gi?/config":                 true,
		"cat *.pem":                        true,
		"ls *.go":                          false,
		"cat src/*":                        true, // could match credentials.json
		"mv ci.yml .github/workflows/":     true,
		"go test ./...":                    false,
		"make -C build":                    false,
		"echo .Git":                        true,
	} {
		if got := CommandGuard(cmd) != ""; got != guarded {
			t.Errorf("CommandGuard(%q) = %v (%q), want %v", cmd, got, CommandGuard(cmd), guarded)
		}
	}
}

func TestPrefixRules(t *testing.T) {
	for cmd, want := range map[string]string{
		"go test ./...":     "go test",
		"npm run build":     "npm run",
		"ls -la":            "ls",
		"make":              "make",
		"./build.sh --fast": "./build.sh",
		"git Status":        "git",
		"$(curl x) y":       "",
		"'go' test":         "",
		"  cargo  build  ":  "cargo build",
		"":                  "",
	} {
		if got := ProposePrefix(cmd); got != want {
			t.Errorf("ProposePrefix(%q) = %q, want %q", cmd, got, want)
		}
	}
	if err := CheckPrefix("go test", "go test ./... | tail"); err != nil {
		t.Errorf("a plain prefix of a piped command: %v", err)
	}
	for _, bad := range []struct{ prefix, cmd string }{
		{"", "go test"}, {"go te", "go test"}, {"go *", "go test"}, {"'go'", "'go' test"}, {"go test -v", "go test"},
	} {
		if err := CheckPrefix(bad.prefix, bad.cmd); err == nil {
			t.Errorf("CheckPrefix(%q, %q) accepted", bad.prefix, bad.cmd)
		}
	}
}

// TestRules: rules a session starts with follow the grants' limits.
func TestRules(t *testing.T) {
	for _, bad := range []func() (Grant, error){
		func() (Grant, error) { return PrefixRule("bash", "", "t") },
		func() (Grant, error) { return PrefixRule("bash", "sh -c", "t") },
		func() (Grant, error) { return PrefixRule("bash", "env", "t") },
		func() (Grant, error) { return PrefixRule("bash", "cp x .git/hooks", "t") },
		func() (Grant, error) { return PrefixRule("bash", "go;", "t") },
		func() (Grant, error) { return PrefixRule("ba sh!", "go", "t") },
		func() (Grant, error) { return PathRule("write", ".scv/", "t") },
		func() (Grant, error) { return PathRule("write", "/etc/", "t") },
		func() (Grant, error) { return PathRule("write", "../up", "t") },
	} {
		if g, err := bad(); err == nil {
			t.Errorf("rule %+v accepted", g)
		}
	}
	mk := func(g Grant, err error) Grant {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	b := NewBroker()
	b.AddRules([]Grant{
		mk(PrefixRule("bash", "go  test", "--allow")), mk(PathRule("write", "src", "--allow")),
		mk(PathRule("write", "README.md", "--allow")), mk(ToolRule("web_fetch", "--allow")),
	})
	if gs := b.Grants(); len(gs) != 4 || gs[0].ID != "r1" || gs[0].Prefix != "go test" || gs[1].Path != "src/" || gs[2].Path != "README.md" {
		t.Fatalf("rules %+v", gs)
	}
	for _, c := range []struct {
		call Call
		ok   bool
	}{
		{bashCall("go test ./..."), true},
		{bashCall("go vet"), false},
		{writeCall("src/a.go"), true},
		{writeCall("README.md"), true},
		{writeCall("lib/a.go"), false},
		{Call{Tool: "web_fetch", Risk: tool.Network}, true},
		{Call{Tool: "web_fetch", Risk: tool.ReadOnly}, true},
		{Call{Tool: "write", Risk: tool.Filesystem, Paths: []string{"src/.envrc"}, NoGrant: true, NoGrantWhy: "guarded"}, false},
		{bashCall("go test -o .husky/pre-push"), false},
	} {
		if g, ok := b.Allowed(c.call); ok != c.ok || ok && g.Source != "--allow" {
			t.Errorf("Allowed(%+v) = %+v, %v; want %v", c.call, g, ok, c.ok)
		}
	}
}

// TestAskUnsandboxed: the policy runs confined calls unasked and treats
// every other call as ask-on-risk does.
func TestAskUnsandboxed(t *testing.T) {
	if p, err := Parse("ask-unsandboxed"); err != nil || p != AskUnsandboxed {
		t.Fatalf("Parse: %q, %v", p, err)
	}
	if !(Rank(AskUnsandboxed) < Rank(AskOnRisk)) {
		t.Error("ask-unsandboxed must rank below ask-on-risk: it asks less")
	}
	cases := []struct {
		policy Policy
		plan   tool.Plan
		want   Decision
	}{
		{AskUnsandboxed, tool.Plan{Risk: tool.Process, Confined: true}, Run},
		{AskUnsandboxed, tool.Plan{Risk: tool.Process}, Ask},
		{AskUnsandboxed, tool.Plan{Risk: tool.Network}, Ask},
		{AskUnsandboxed, tool.Plan{Risk: tool.ReadOnly}, Run},
		{AskOnRisk, tool.Plan{Risk: tool.Process, Confined: true}, Ask},
		{AskAlways, tool.Plan{Risk: tool.Process, Confined: true}, Ask},
		{DenyOnRisk, tool.Plan{Risk: tool.Process, Confined: true}, Deny},
	}
	for _, c := range cases {
		if got := DecidePlan(c.policy, c.plan); got != c.want {
			t.Errorf("DecidePlan(%s, risk %s, confined %v) = %s, want %s", c.policy, c.plan.Risk, c.plan.Confined, got, c.want)
		}
	}
}
