package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/store"
)

// hostile is text an MCP server, a model, a tool or a file could choose:
// concealed text, an OSC 52 clipboard write, an OSC 0 title change, a
// right-to-left override, C1 controls (NEL, CSI), a bell and a lone CR.
const hostile = "\x1b[8mHIDDEN\x1b[0m \x1b]52;c;ZXZpbA==\x07 \x1b]0;owned\x07 \u202eevil \u0085nel \u009b31m\x07\rover"

// forge follows hostile in fields printed on one line (names, versions,
// record fields): a listing that printed it raw would show a line of the
// sender's choosing.
const forge = "\nforged line"

// hostileSeen is how hostile looks once made visible, in part: a command
// that printed it shows this.
const hostileSeen = "␛[8mHIDDEN"

// envHostileMCP turns the test binary into the hostile MCP server (see
// TestMain); envHostileFail makes it fail at start with hostile stderr.
const (
	envHostileMCP  = "SCV_TEST_HOSTILE_MCP"
	envHostileFail = "SCV_TEST_HOSTILE_FAIL"
)

// hostileMCPMain is an MCP server whose every text is hostile: its name
// and version, its tools' names, titles, descriptions and results.
func hostileMCPMain() int {
	if os.Getenv(envHostileFail) != "" {
		fmt.Fprintln(os.Stderr, "failing: "+hostile)
		return 2
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "evil" + hostile + forge, Version: hostile + forge}, nil)
	type in struct {
		Text string `json:"text,omitempty" jsonschema:"anything"`
	}
	look := func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "result " + hostile}}}, nil, nil
	}
	sdk.AddTool(s, &sdk.Tool{Name: "look", Title: hostile + forge, Description: "Look " + hostile + forge,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: hostile + forge}}, look)
	sdk.AddTool(s, &sdk.Tool{Name: "name" + hostile, Description: hostile}, look)
	ref, _ := json.Marshal("#/$defs/" + hostile)
	s.AddTool(&sdk.Tool{Name: "schema" + hostile, Description: hostile,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":` + string(ref) + `}}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
	}
	return 0
}

// rawControl returns the first character of s that would act on a
// terminal (a C0 control other than newline and tab, DEL, a C1 control,
// a format character such as a bidi override, a line separator) or a byte
// that is not UTF-8; "" when there is none.
func rawControl(s string) string {
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			return fmt.Sprintf("byte %#x at %d", s[i], i)
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u2028' || r == '\u2029',
			unicode.Is(unicode.Cf, r) && r != '\u200c' && r != '\u200d':
			return fmt.Sprintf("%U at %d", r, i)
		}
		i += w
	}
	return ""
}

// hostileFixture is an instance whose every outside source is hostile: an
// MCP server, a failing one, a skill, a stored session (prompt, answer,
// tool output, title), a delegation record, a ClawBot account, pi's
// files, a config value.
type hostileFixture struct {
	home, user, ws string
	env            Env
	session        string
}

func newHostileFixture(t *testing.T) *hostileFixture {
	t.Helper()
	root := t.TempDir()
	f := &hostileFixture{home: filepath.Join(root, "scv"), user: filepath.Join(root, "user"), ws: filepath.Join(root, "ws")}
	for _, d := range []string{f.home, f.user, f.ws, filepath.Join(f.home, "skills", "evil")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := modeltest.New(t)
	m.Models = []string{"fake-model", "evil" + hostile + forge}
	answer := modeltest.Text("answer "+hostile[:7], hostile[7:]+"\n")
	// The fixture's session, then exec --verbose on a terminal, then exec
	// --json.
	m.Script(modeltest.ToolCall("c1", "bash", bashArgs(hostile)))
	m.Script(answer)
	m.Script(modeltest.ToolCall("c2", "bash", bashArgs(hostile)))
	m.Script(answer)
	m.Script(answer)
	m.Script(answer) // exec into a pipe
	toml := fmt.Sprintf(`[providers.openai]
base_url = %q
model = "fake-model"

[mcp.servers.evil]
command = %q
env = { %s = "1" }
read_only_tools = ["look"]

[mcp.servers.broken]
command = %q
env = { %s = "1", %s = "1" }

[skills]
user_dir = %q
`, m.URL(), exe, envHostileMCP, exe, envHostileMCP, envHostileFail, filepath.Join(f.home, "skills"))
	write(t, filepath.Join(f.home, "config.toml"), toml)
	write(t, filepath.Join(f.home, "skills", "evil", "SKILL.md"), "---\ndescription: "+strings.ReplaceAll(hostile, "\r", "")+"\n---\nbody\n")
	f.env = Env{"SCV_HOME": f.home, "HOME": f.user, "PATH": os.Getenv("PATH"), "OPENAI_API_KEY": "sk-test"}

	// A session whose prompt, answer and tool output are hostile.
	if code, _, errs := f.run(t, nil, "exec", "--yes", "--workspace", f.ws, "look "+hostile); code != ExitOK {
		t.Fatalf("exec for the fixture: exit %d\n%s", code, errs)
	}
	_, out, _ := f.run(t, nil, "sessions", "list", "--all", "--json")
	var s struct {
		ID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &s); err != nil || s.ID == "" {
		t.Fatalf("no session id in %q: %v", out, err)
	}
	f.session = s.ID

	// A delegation record (files anyone with the home can edit), owned by
	// this live process so that no reconcile removes it.
	start, err := proc.StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(delegation.Record{Handle: "pi-abcdef", Agent: "pi" + hostile + forge, Session: hostile + forge, Cwd: "/" + hostile + forge,
		OwnerPID: os.Getpid(), OwnerStart: start, StartedAt: time.Now()})
	write(t, filepath.Join(f.home, "run", "delegations", "pi-abcdef.json"), string(rec))

	// A conversation with a delegated agent whose directory came from the
	// model (the store is a file the user's processes can write).
	st, err := store.Open(t.Context(), store.Options{Path: paths.Layout{Home: f.home}.Database()})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutAgentConversation(t.Context(), store.AgentConversation{SessionID: f.session, Handle: "codex-1", Agent: "codex",
		N: 1, Cwd: "/" + hostile + forge, VendorID: "th", Turns: 1, Created: time.Now(), Used: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// A ClawBot account as iLink described it.
	files := clawbot.Files{Layout: paths.Layout{Home: f.home}}
	if err := files.SaveCredentials("default", clawbot.Credentials{Token: "t-x", BotID: "bot" + hostile + forge, UserID: "owner" + hostile + forge, BaseURL: "https://ilink.invalid"}); err != nil {
		t.Fatal(err)
	}

	// pi's own files in its private home, as pi (or anything) wrote them.
	if code, _, errs := f.run(t, strings.NewReader("sk-pi\n"), "agents", "login", "pi", "--openai-compatible",
		"--base-url", "http://127.0.0.1:9/v1", "--wire-api", "chat", "--model", "m"); code != ExitOK {
		t.Fatalf("pi login: %d %s", code, errs)
	}
	settings := findFile(t, f.home, "settings.json")
	b, _ := json.Marshal(map[string]any{"defaultProvider": hostile + forge, "defaultModel": hostile + forge})
	write(t, settings, string(b))
	return f
}

// bashArgs are bash arguments whose command prints text and a raw 0x9b.
func bashArgs(text string) string {
	b, _ := json.Marshal(map[string]string{"command": "printf '%s\\x9b\\n' '" + text + "'"})
	return string(b)
}

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func findFile(t *testing.T, root, name string) string {
	t.Helper()
	var found string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name && found == "" {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no %s under %s", name, root)
	}
	return found
}

// run runs scv with buffers for stdout and stderr (not a terminal).
func (f *hostileFixture) run(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	code := Run(ctx, args, Stdio{In: stdin, Out: &out, Err: &errb}, f.env)
	return code, out.String(), errb.String()
}

// runTerminal runs scv with stdout on a pseudo-terminal and returns what
// the terminal received (the line discipline's CRLF turned back into LF).
func (f *hostileFixture) runTerminal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(master) // ends with EIO once the slave is closed
		got <- b
	}()
	var errb bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	code := Run(ctx, args, Stdio{In: strings.NewReader(""), Out: slave, Err: &errb}, f.env)
	slave.Close()
	out := <-got
	return code, strings.ReplaceAll(string(out), "\r\n", "\n"), errb.String()
}

// hostileChecked are the commands TestHostileTextNeverReachesTheTerminal
// runs against the fixture; hostileExempt the others, each with why it
// prints no outside text, or where that is tested. Every command of the
// tree is in one of them (TestEveryCommandIsClassified).
var hostileChecked = []string{
	"mcp list", "mcp test", "tools list", "tools call", "exec", "sessions list", "sessions show",
	"sessions search", "sessions export", "sessions rename", "agents ps", "agents status", "agents conversations",
	"clawbot status", "config show", "status", "models", "doctor",
}

var hostileExempt = map[string]string{
	"tui":            "the TUI makes every event's text visible as it arrives (internal/tui TestEveryTextFieldMadeVisible)",
	"server":         "stdout is the protocol, JSON for a client, not text for a person",
	"run":            "the daemon logs through slog's text handler, which quotes control characters; its stderr is visible too",
	"version":        "build information only",
	"config init":    "writes SCV's template and prints its path",
	"config path":    "prints paths SCV computes",
	"start":          "prints the pid, socket and log path",
	"stop":           "prints SCV's own state",
	"reload":         "prints account names and states through termtext.Line, like clawbot status",
	"sessions rm":    "prints the ids given and SCV's own errors",
	"sessions prune": "prints counts and the workspace path through termtext.Line",
	"agents kill":    "prints the handle given",
	"agents login":   "runs the agent's own CLI attached to the terminal, as when the user runs it; SCV's own lines name what the user typed",
	"agents logout":  "same as agents login",
	"agents import":  "prints paths and SCV's summary of the copied setup",
	"clawbot login":  "the QR code and iLink's answers: the visible writer applies (TestClawbotLogin)",
	"clawbot run":    "prints the account name (checked to be ASCII letters, digits, _ and -) and SCV's state",
	"clawbot stop":   "same as clawbot run",
	"clawbot logout": "same as clawbot run",
	"undo":           "prints paths and the turn's note through termtext.Line; its diffs through printDiff",
	"acp":            "stdout is the ACP protocol for an editor, not text for a person; its stderr goes through the visible writer",
	"sandbox check":  "prints SCV's own report of the kernel and the configured paths through the visible writer",
	"hooks list":     "prints the user's own hook configuration, names through termtext.Line, all through the visible writer",
	"hooks test":     "prints a hook's outcome, its reason through termtext.Line and its stderr through termtext.Block",
}

func TestEveryCommandIsClassified(t *testing.T) {
	root := newRootCmd(&globals{})
	var leaves []string
	var walk func(c *cobra.Command, path string)
	walk = func(c *cobra.Command, path string) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c.Runnable() && path != "" && !c.HasSubCommands() {
			leaves = append(leaves, path)
		}
		for _, s := range c.Commands() {
			walk(s, strings.TrimSpace(path+" "+s.Name()))
		}
	}
	walk(root, "")
	sort.Strings(leaves)
	for _, l := range leaves {
		_, exempt := hostileExempt[l]
		if checked := slices.Contains(hostileChecked, l); checked == exempt {
			t.Errorf("command %q: add it to hostileChecked (and run it against the fixture) or to hostileExempt with the reason", l)
		}
	}
	for _, l := range hostileChecked {
		if !slices.Contains(leaves, l) {
			t.Errorf("hostileChecked names %q, which is not a command", l)
		}
	}
}

// TestHostileTextNeverReachesTheTerminal runs every command that prints
// outside text against the hostile fixture: nothing it prints on stdout
// or stderr may act on a terminal, and each shows the hostile text (made
// visible) so the check is not vacuous. JSON output must decode to the
// hostile value itself.
func TestHostileTextNeverReachesTheTerminal(t *testing.T) {
	f := newHostileFixture(t)
	id := f.session
	exportFile := filepath.Join(t.TempDir(), "export.md")
	type check struct {
		args     []string
		terminal bool   // stdout on a pseudo-terminal
		seen     string // must appear on stdout+stderr ("" : hostileSeen)
		noSeen   bool   // the command summarises: the text need not appear
		json     bool   // stdout is JSON that must carry the hostile value
		seenOut  string // must appear on stdout itself
	}
	checks := []check{
		{args: []string{"mcp", "list", "--workspace", f.ws}},
		{args: []string{"mcp", "test", "evil", "--workspace", f.ws}},
		{args: []string{"mcp", "test", "broken", "--workspace", f.ws}},
		{args: []string{"tools", "list", "--workspace", f.ws}},
		{args: []string{"tools", "call", "mcp__evil__look", "{}", "--workspace", f.ws}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"tools", "call", "bash", bashArgs(hostile), "--yes", "--workspace", f.ws}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"tools", "call", "bash", bashArgs(hostile), "--workspace", f.ws}},
		{args: []string{"exec", "--yes", "--verbose", "--workspace", f.ws, "again " + hostile}, terminal: true, seenOut: "answer " + hostileSeen},
		{args: []string{"exec", "--json", "--yes", "--workspace", f.ws, "json " + hostile}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"sessions", "list", "--all"}},
		{args: []string{"sessions", "list", "--all", "--json"}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"sessions", "show", id}},
		{args: []string{"sessions", "search", "answer"}},
		{args: []string{"sessions", "search", "answer", "--json"}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"sessions", "export", id}, terminal: true, seenOut: hostileSeen},
		{args: []string{"sessions", "export", id, "--format", "jsonl"}, terminal: true, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"sessions", "export", id, "-o", exportFile}, noSeen: true},
		{args: []string{"sessions", "rename", id, "renamed " + hostile}},
		{args: []string{"agents", "ps", "--all"}},
		{args: []string{"agents", "ps", "--all", "--json"}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"agents", "status"}},
		{args: []string{"agents", "conversations"}},
		{args: []string{"agents", "conversations", "--all", "--json"}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"clawbot", "status"}},
		{args: []string{"clawbot", "status", "--json"}, seen: `\u001b[8mHIDDEN`, json: true},
		{args: []string{"config", "show"}, noSeen: true},
		{args: []string{"status"}, noSeen: true},
		{args: []string{"models"}},
		{args: []string{"doctor", "--workspace", f.ws}},
		{args: []string{"models", "--json"}, seen: `\u001b[8mHIDDEN`, json: true},
	}
	covered := map[string]bool{}
	for i, c := range checks {
		name := c.args[0]
		if name != "exec" && name != "status" && name != "models" && name != "doctor" {
			name += " " + c.args[1]
		}
		covered[name] = true
		label := strings.Join(c.args[:min(len(c.args), 3)], " ")
		if strings.ContainsAny(label, "{/\x1b") {
			label = name
		}
		t.Run(fmt.Sprintf("%02d %s", i, label), func(t *testing.T) {
			var code int
			var out, errs string
			if c.terminal {
				code, out, errs = f.runTerminal(t, c.args...)
			} else {
				code, out, errs = f.run(t, nil, c.args...)
			}
			for stream, s := range map[string]string{"stdout": out, "stderr": errs} {
				if bad := rawControl(s); bad != "" {
					t.Errorf("exit %d: %s of %v carries %s:\n%q", code, stream, c.args, bad, s)
				}
			}
			if strings.Contains("\n"+out+errs, forge) {
				t.Errorf("exit %d: %v printed a line a sender chose:\n%s%s", code, c.args, out, errs)
			}
			want := c.seen
			if want == "" {
				want = hostileSeen
			}
			if !c.noSeen && !strings.Contains(out+errs, want) {
				t.Errorf("exit %d: %v printed no hostile text (%q); is the fixture in place?\nstdout:\n%s\nstderr:\n%s", code, c.args, want, out, errs)
			}
			if c.seenOut != "" && !strings.Contains(out, c.seenOut) {
				t.Errorf("%v: stdout lacks %q:\n%s", c.args, c.seenOut, out)
			}
			if c.json {
				for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
					if l != "" && !json.Valid([]byte(l)) && !json.Valid([]byte(out)) {
						t.Errorf("%v: not JSON: %q", c.args, l)
					}
				}
				if !strings.Contains(out, `\u001b[8mHIDDEN`) {
					t.Errorf("%v: the JSON does not carry the hostile value", c.args)
				}
			}
		})
	}
	for _, name := range hostileChecked {
		if !covered[name] {
			t.Errorf("hostileChecked names %q but no check runs it", name)
		}
	}

	// A product redirected to a file or a pipe stays byte-exact: the
	// answer of scv exec, an export to stdout or to a file.
	if code, out, errs := f.run(t, nil, "exec", "--workspace", f.ws, "raw please"); code != ExitOK || out != "answer "+hostile+"\n" {
		t.Errorf("exec into a pipe: exit %d, stdout %q (want the answer byte-exact)\n%s", code, out, errs)
	}
	if _, out, _ := f.run(t, nil, "sessions", "export", id); !strings.Contains(out, "\x1b[8mHIDDEN") {
		t.Errorf("export into a pipe lost the session's bytes:\n%q", out)
	}
	b, err := os.ReadFile(exportFile)
	if err != nil || !strings.Contains(string(b), "\x1b[8mHIDDEN") {
		t.Errorf("the export file lost the session's bytes (%v):\n%q", err, b)
	}
}

// TestRawStreamsOnlyWhereNamed keeps the guarantee structural: outside the
// functions named here no command reaches the raw stdout or stderr (the
// streams Run was given), and none writes to os.Stdout or os.Stderr, so
// everything printed passes through the visible writers.
func TestRawStreamsOnlyWhereNamed(t *testing.T) {
	allowed := map[string]string{
		"productOut":     "a product into a file or a pipe is data, byte-exact",
		"tuiOptions":     "the TUI draws the screen and makes its text visible itself",
		"newServerCmd":   "stdout carries the protocol",
		"runACP":         "stdout carries the ACP protocol (JSON-RPC for an editor, which shows the text itself)",
		"runACPDaemon":   "same as runACP, attached to the daemon",
		"attachedIO":     "an agent's own sign-in CLI gets the terminal",
		"doctorTerminal": "asks whether stdout is a terminal and its size; prints through g.stdio",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	used := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && (sel.Sel.Name == "Stdout" || sel.Sel.Name == "Stderr") {
					t.Errorf("%s: %s writes to os.%s; print through g.stdio", fset.Position(sel.Pos()), fn.Name.Name, sel.Sel.Name)
				}
				if sel.Sel.Name == "raw" && fn.Name.Name != "Run" {
					if _, ok := allowed[fn.Name.Name]; !ok {
						t.Errorf("%s: %s uses the raw streams; print through g.stdio (or name the function here, with why)", fset.Position(sel.Pos()), fn.Name.Name)
					}
					used[fn.Name.Name] = true
				}
				return true
			})
		}
	}
	for fn := range allowed {
		if !used[fn] {
			t.Errorf("%s is allowed the raw streams but does not use them: remove it from the list", fn)
		}
	}
}
