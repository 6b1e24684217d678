// Package internal_test keeps SCV's layering true: which packages may import
// which, and that every package documents what it owns.
package internal_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/scv-agent/scv"

type pkg struct {
	ImportPath string
	Doc        string
	Imports    []string
	Deps       []string
	Name       string
	Dir        string
	GoFiles    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// textcut and filechange are the internal packages a leaf may import:
// leaves themselves (standard library only). textcut holds the
// UTF-8-safe cuts every bounded output uses; filechange the one shape of
// a written workspace file, which the tool contract reports and the store
// keeps (neither leaf may import the other).
const (
	textcut    = module + "/internal/textcut"
	filechange = module + "/internal/filechange"
)

// leaves may import only the standard library and the listed modules.
var leaves = map[string][]string{
	"internal/proto":    nil,
	"internal/jsonl":    nil,
	"internal/proc":     {"golang.org/x/sys/", textcut},
	"internal/sandbox":  {"golang.org/x/sys/"},
	"internal/paths":    nil,
	"internal/netguard": {"golang.org/x/sys/", "code.dny.dev/ssrf"},
	"internal/tool":     {"github.com/google/jsonschema-go/", textcut, filechange},
	"internal/version":  nil,
	"internal/termtext": nil,
	"internal/textcut":  nil,
	"internal/diff":     {"github.com/sergi/go-diff/"},
	"internal/redact":   nil,
	"internal/commands": nil,
	// The model catalogue: catwalk's embedded data and what it imports.
	"internal/catalog": {"charm.land/catwalk/", "github.com/charmbracelet/x/etag"},
	// The store: the SQLite driver and what the driver itself pulls in.
	"internal/store": {"modernc.org/", "golang.org/x/sys/", "github.com/dustin/go-humanize", "github.com/google/uuid", "github.com/remyoudompheng/bigfft", textcut, filechange},

	// Reading an image file a prompt carries: clients and server share it.
	"internal/imagefile": nil,

	// A file a turn wrote, as the tools report it and the store keeps it.
	"internal/filechange": nil,
}

func TestLeavesImportOnlyStdlib(t *testing.T) {
	for _, p := range listPackages(t) {
		allowed, ok := leaves[rel(p.ImportPath)]
		if !ok {
			continue
		}
		for _, d := range p.Deps {
			if isStd(d) {
				continue
			}
			okDep := false
			for _, a := range allowed {
				if strings.HasPrefix(d, a) || strings.HasPrefix(d, "golang.org/x/") && strings.HasPrefix(a, "golang.org/x/") {
					okDep = true
				}
			}
			if !okDep {
				t.Errorf("%s is a leaf package but depends on %s", rel(p.ImportPath), d)
			}
		}
	}
}

// forbidden[a] lists the internal packages a (and packages below a) must not
// import directly.
var forbidden = map[string][]string{
	"internal/tools/":   {"internal/config", "internal/app", "internal/cli", "internal/server", "internal/agent", "internal/daemon", "internal/tui"},
	"internal/tui":      {"internal/agent", "internal/server", "internal/app", "internal/config", "internal/model", "internal/tools/", "internal/daemon"},
	"internal/agent":    {"internal/config", "internal/cli", "internal/app", "internal/server", "internal/tools/", "internal/tui"},
	"internal/server":   {"internal/config", "internal/cli", "internal/tools/", "internal/tui"},
	"internal/model":    {"internal/config", "internal/agent", "internal/server", "internal/tools/"},
	"internal/approval": {"internal/config", "internal/tools/", "internal/server", "internal/agent"},
	// The WeChat bridge is a protocol client of the daemon: it reaches
	// sessions and turns through the protocol only, never tools or the
	// server's insides.
	"internal/clawbot": {"internal/config", "internal/app", "internal/cli", "internal/server", "internal/agent", "internal/daemon", "internal/tui", "internal/tools/", "internal/model", "internal/mcp"},
	// scv acp is one more protocol client (never a second agent loop): it
	// reaches sessions through internal/client only.
	"internal/acp": {"internal/config", "internal/app", "internal/cli", "internal/server", "internal/agent", "internal/daemon", "internal/tui", "internal/tools/", "internal/model", "internal/mcp", "internal/store"},
	// The daemon holds the socket, lock and reaper and serves whatever
	// server it is handed: app, which builds both, imports it.
	"internal/daemon": {"internal/server", "internal/app", "internal/cli", "internal/config", "internal/store", "internal/clawbot"},
	"internal/mcp":    {"internal/config", "internal/app", "internal/cli", "internal/server", "internal/agent", "internal/daemon", "internal/tui", "internal/tools/"},
	// toolcall is the one path of a tool call, shared by the agent loop
	// and `scv tools call`: it knows the Tool contract and the policy,
	// never a concrete tool, the configuration or who asks.
	// signin writes agents' sign-in files and runs their own commands; the
	// app hands it the adapter, home and environment it needs.
	"internal/signin":   {"internal/config", "internal/app", "internal/cli", "internal/server", "internal/agent", "internal/daemon", "internal/tui", "internal/mcp"},
	"internal/toolcall": {"internal/config", "internal/app", "internal/cli", "internal/server", "internal/agent", "internal/daemon", "internal/tui", "internal/tools/", "internal/mcp", "internal/model"},
	// mention is shared by the TUI (completion) and the session (expansion):
	// it reads files only through the Source the app gives it.
	"internal/mention": {"internal/config", "internal/app", "internal/cli", "internal/server", "internal/agent", "internal/daemon", "internal/tui", "internal/tools/", "internal/model"},
}

func TestImportRules(t *testing.T) {
	for _, p := range listPackages(t) {
		r := rel(p.ImportPath)
		for _, imp := range p.Imports {
			ri := rel(imp)
			if !strings.HasPrefix(imp, module) {
				continue
			}
			// Only cli and app import config.
			if ri == "internal/config" && !(r == "internal/cli" || r == "internal/app" || strings.HasPrefix(r, "internal/config")) {
				t.Errorf("%s imports internal/config; only cli and app may", r)
			}
			for from, bans := range forbidden {
				f := strings.TrimSuffix(from, "/")
				if !(r == f || strings.HasPrefix(r, f+"/")) {
					continue
				}
				for _, ban := range bans {
					b := strings.TrimSuffix(ban, "/")
					if ri == b || strings.HasPrefix(ri, b+"/") {
						t.Errorf("%s must not import %s", r, ri)
					}
				}
			}
		}
	}
}

// cliNames are the internal/cli files that may name a type of the session
// database or of the WeChat bridge, each with why. Configuration meets
// their constructors in internal/app only: no cli file opens the store or
// builds the bridge's supervisor (TestCLIBuildsNoStoreOrBridge).
var cliNames = map[string]map[string]string{
	"store.go": {"internal/store": "names *store.Store for the commands that hold the handle app.OpenStore gives them and pass it to app's server"},
	"sessions.go": {"internal/store": "scv sessions prints the database's typed records (store.Session, store.Turn) " +
		"and tells its typed errors (store.ErrNotFound, store.AmbiguousError) apart"},
	"export.go": {"internal/store": "scv sessions export writes store.Turn records as Markdown"},
	"agents_conversations.go": {"internal/store": "scv agents conversations prints the database's store.AgentConversation records " +
		"from the handle app.OpenStore gives it"},
	"clawbot.go": {"internal/clawbot": "scv clawbot drives the bridge's own login, account names and saved account files " +
		"(clawbot.Login, clawbot.Files), which need no daemon"},
}

// cliConstructors are what only internal/app may call.
var cliConstructors = map[string][]string{"store": {"Open"}, "clawbot": {"NewSupervisor"}}

// TestCLIBuildsNoStoreOrBridge keeps the cli package to flags and wiring:
// it imports internal/store and internal/clawbot only in the files of
// cliNames, and calls neither package's constructors.
func TestCLIBuildsNoStoreOrBridge(t *testing.T) {
	var cli *pkg
	for _, p := range listPackages(t) {
		if rel(p.ImportPath) == "internal/cli" {
			cli = &p
		}
	}
	if cli == nil {
		t.Fatal("go list does not list internal/cli")
	}
	fset := token.NewFileSet()
	for _, name := range cli.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(cli.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := map[string]string{} // file's name of the package -> its path
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			r := rel(path)
			if r != "internal/store" && r != "internal/clawbot" {
				continue
			}
			if _, ok := cliNames[name][r]; !ok {
				t.Errorf("internal/cli/%s imports %s: build and use it in internal/app, or add the file to cliNames with why", name, r)
			}
			id := filepath.Base(path)
			if is.Name != nil {
				id = is.Name.Name
			}
			local[id] = filepath.Base(path)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			for _, c := range cliConstructors[local[x.Name]] {
				if sel.Sel.Name == c {
					t.Errorf("%s: internal/cli calls %s.%s; only internal/app builds it", fset.Position(sel.Pos()), local[x.Name], c)
				}
			}
			return true
		})
	}
}

// TestOnlyStoreSpeaksSQL keeps SQL in one package: nothing else imports
// database/sql or a SQLite driver.
func TestOnlyStoreSpeaksSQL(t *testing.T) {
	for _, p := range listPackages(t) {
		if rel(p.ImportPath) == "internal/store" {
			continue
		}
		for _, imp := range p.Imports {
			if imp == "database/sql" || strings.HasPrefix(imp, "modernc.org/") {
				t.Errorf("%s imports %s; only internal/store may", rel(p.ImportPath), imp)
			}
		}
	}
}

func TestEveryPackageHasDoc(t *testing.T) {
	for _, p := range listPackages(t) {
		if len(p.GoFiles) > 0 && strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no package doc comment", rel(p.ImportPath))
		}
	}
}

// TestOnlyTestsImportTestutil keeps the shared test helpers out of the
// product: only tests import internal/testutil, and the measurement
// programs under bench/, which build the same fixtures as the benchmarks.
func TestOnlyTestsImportTestutil(t *testing.T) {
	for _, p := range listPackages(t) {
		r := rel(p.ImportPath)
		if strings.HasPrefix(r, "bench/") {
			continue
		}
		for _, imp := range p.Imports {
			if rel(imp) == "internal/testutil" {
				t.Errorf("%s imports internal/testutil, which is for tests only", r)
			}
		}
	}
}
