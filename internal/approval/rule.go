package approval

import (
	"errors"
	"fmt"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/scv-agent/scv/internal/tool"
)

// Rules are grants a session starts with (`scv exec --allow`): the same
// kinds as the grants a person gives, with the same limits — a command
// rule is a prefix (never a shell, interpreter or runner without a fixed
// script), a write rule a path, and no rule covers a guarded path or a
// call marked NoGrant. A rule has no risk of its own: it covers the calls
// of its tool whatever their risk. Their ids start with "r"; they are
// listed and revoked like any grant.

// maxToolNameBytes bounds a rule's tool name.
const maxToolNameBytes = 128

func checkToolName(name string) error {
	if name == "" || len(name) > maxToolNameBytes {
		return fmt.Errorf("the tool name %q is empty or longer than %d bytes; name a tool as `scv tools list` shows it", name, maxToolNameBytes)
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("_-.", r)) {
			return fmt.Errorf("the tool name %q holds %q; name a tool as `scv tools list` shows it", name, r)
		}
	}
	return nil
}

// PrefixRule is a rule for the commands of toolName that start with
// prefix.
func PrefixRule(toolName, prefix, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	p := words(prefix)
	switch {
	case len(p) == 0:
		return Grant{}, fmt.Errorf("a %s rule needs a command prefix, such as `%s:go test`: a rule for every command would run anything", toolName, toolName)
	case len(prefix) > MaxPrefixBytes:
		return Grant{}, fmt.Errorf("the prefix is %d bytes; at most %d are accepted", len(prefix), MaxPrefixBytes)
	}
	for _, w := range p {
		if !plainWord(w) {
			return Grant{}, fmt.Errorf("the prefix word %q is not plain: use letters, digits and . _ - / + : = @ %% , ~ ^ only", w)
		}
	}
	if why := runnerWhy(p); why != "" {
		return Grant{}, errors.New(runnerRefusal(p, why))
	}
	if a := findAction(p); a != "" {
		return Grant{}, fmt.Errorf("the prefix %q holds `%s`, with which find runs or changes other things", NormalPrefix(prefix), a)
	}
	if why := CommandGuard(prefix); why != "" {
		return Grant{}, fmt.Errorf("the prefix %q %s", NormalPrefix(prefix), why)
	}
	return Grant{Tool: toolName, Prefix: NormalPrefix(prefix), Source: source}, nil
}

// PathRule is a rule for the writes of toolName under path ("" or "." is
// the whole workspace).
func PathRule(toolName, path, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	if strings.TrimSpace(path) == "" {
		path = WorkspaceRoot
	}
	c, err := cleanGrantPath(path)
	if err != nil {
		return Grant{}, err
	}
	if c != WorkspaceRoot {
		if why := tool.Guarded(c); why != "" {
			return Grant{}, fmt.Errorf("the path %q is guarded (%s): no rule covers it", c, why)
		}
		// A directory unless the last component names a file (has a
		// dot) and no final slash says otherwise.
		if strings.HasSuffix(strings.TrimSpace(path), "/") || !strings.Contains(pathpkg.Base(c), ".") {
			c += "/"
		}
	}
	return Grant{Tool: toolName, Path: c, Source: source}, nil
}

// ToolRule is a rule for every call of toolName (a tool that runs no
// command and writes no path).
func ToolRule(toolName, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	return Grant{Tool: toolName, Source: source}, nil
}

// AddRules gives the broker the rules a session starts with, ids r1, r2, …
func (b *Broker) AddRules(rules []Grant) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, g := range rules {
		g.ID = fmt.Sprintf("r%d", i+1)
		b.grants = append(b.grants, g)
	}
}

// Saved rules ([[approvals.rules]] in the configuration) are rules too:
// an allow rule is built by PrefixRule, PathRule, DomainRule or ToolRule
// and matched by the one covers every grant is matched by, so a saved rule
// never covers what a session grant could not (a guarded path, a command
// with `$(…)`, an interpreter without a fixed script). A deny rule is
// checked before the policy and before any grant (Broker.Denied): deny
// beats allow.

// DomainRule is a rule for the calls of toolName that reach domain: a host
// name ("example.com", that host only) or "*.example.com" (its strict
// subdomains); the same forms as web.auto_approve_domains.
func DomainRule(toolName, domain, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	d, err := cleanDomain(domain)
	if err != nil {
		return Grant{}, err
	}
	return Grant{Tool: toolName, Domain: d, Source: source}, nil
}

// cleanDomain checks a rule's domain and returns it in lower case without
// a final dot.
func cleanDomain(domain string) (string, error) {
	d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(domain)), ".")
	host, port, hasPort := strings.Cut(strings.TrimPrefix(d, "*."), ":")
	ok := host != "" && len(host) <= 253
	for _, l := range strings.Split(host, ".") {
		ok = ok && l != "" && len(l) <= 63 && strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") == "" && l[0] != '-' && l[len(l)-1] != '-'
	}
	if hasPort {
		ok = ok && port != "" && len(port) <= 5 && strings.Trim(port, "0123456789") == ""
	}
	if !ok {
		return "", fmt.Errorf("the domain %q is not a host name or *.host (with an optional :port; no scheme, path or inner *), such as `docs.example.com` or `*.example.com`", domain)
	}
	return d, nil
}

// MatchDomain reports whether a grant's domain covers host: the same host
// (and port), or with "*." any strict subdomain of it.
func MatchDomain(domain, host string) bool {
	host = strings.ToLower(host)
	if suffix, ok := strings.CutPrefix(domain, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return host == domain
}

// DenyRule is a deny rule for toolName: with a command prefix it denies the
// commands that start with it (any words: a deny rule may name `sudo` or
// `python3`), with a path the writes that touch it (guarded paths too),
// with a domain the calls that reach it, and with none every call of the
// tool.
func DenyRule(toolName, prefix, path, domain, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	g := Grant{Tool: toolName, Source: source, Deny: true}
	switch {
	case prefix != "":
		p := words(prefix)
		if len(p) == 0 || len(prefix) > MaxPrefixBytes {
			return Grant{}, fmt.Errorf("the prefix %q is empty or longer than %d bytes", prefix, MaxPrefixBytes)
		}
		for _, w := range p {
			if !plainWord(w) {
				return Grant{}, fmt.Errorf("the prefix word %q is not plain: use letters, digits and . _ - / + : = @ %% , ~ ^ only", w)
			}
		}
		g.Prefix = NormalPrefix(prefix)
	case path != "":
		c, err := cleanGrantPath(path)
		if err != nil {
			return Grant{}, err
		}
		if c != WorkspaceRoot && strings.HasSuffix(strings.TrimSpace(path), "/") {
			c += "/"
		}
		g.Path = c
	case domain != "":
		d, err := cleanDomain(domain)
		if err != nil {
			return Grant{}, err
		}
		g.Domain = d
	}
	return g, nil
}

// How a deny rule meets a call.
const (
	denyNone = iota
	// denyAsk: the rule cannot judge the call (a command the prefix
	// rule cannot read, with the denied words inside it): it is asked.
	denyAsk
	denyMatch
)

// denies says how the deny rule g meets c. A command is matched by its
// words: one that begins with the prefix is denied; one that is not
// simple and holds the prefix's words anywhere (after `;`, inside `$(…)`)
// is asked, since no prefix rule can read such a command.
func (g Grant) denies(c Call, cw []string) int {
	if g.Tool != c.Tool {
		return denyNone
	}
	switch {
	case g.Prefix != "":
		if c.Command == "" {
			return denyNone
		}
		p := g.Prefix // normal: words separated by one space
		if wordsAt(cw, p) {
			return denyMatch
		}
		if Simple(c.Command) && len(cw) > 0 && runnerWhy(cw[:1]) == "" {
			// A simple command of another program only names the words
			// (`echo rm`): it does not run them.
			return denyNone
		}
		toks := strings.FieldsFunc(c.Command, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\n' || r == '"' || r == '\'' || strings.ContainsRune(shellMeta, r)
		})
		for i := range toks {
			if wordsAt(toks[i:], p) {
				return denyAsk
			}
		}
		return denyNone
	case g.Path != "":
		for _, p := range c.Paths {
			if under(g.Path, p) {
				return denyMatch
			}
		}
		return denyNone
	case g.Domain != "":
		if c.Host != "" && MatchDomain(g.Domain, c.Host) {
			return denyMatch
		}
		return denyNone
	}
	return denyMatch
}

// wordsAt says the words ws begin with the words of the normal prefix p
// (the first by its base name, so `/usr/bin/sudo` is `sudo`); it does not
// allocate, since it runs for every deny rule of every call.
func wordsAt(ws []string, p string) bool {
	for i := 0; p != ""; i++ {
		var w string
		w, p, _ = strings.Cut(p, " ")
		if i >= len(ws) || ws[i] != w && !(i == 0 && pathpkg.Base(ws[i]) == w) {
			return false
		}
	}
	return true
}

// Denied finds the deny rule that meets c: deny says the call is denied,
// otherwise a non-empty ask says why it must be asked (a deny rule cannot
// judge it) and no grant or rule may allow it.
func (b *Broker) Denied(c Call) (rule Grant, deny bool, ask string) {
	return denied(c, b.rules())
}

// Judge is the deny rules' word on a call of the tool name, before its
// other checks and the policy: deny, when not "", says which deny rule
// denies it (the call fails without asking); ask, when not "", says why a
// deny rule cannot judge it (a person must be asked, whatever the policy
// and grants say: Request.Forced).
func (b *Broker) Judge(name string, plan tool.Plan) (deny, ask string) {
	r, denies, ask := b.Denied(CallOf(name, plan))
	if denies {
		return "the saved rule " + Describe(r) + " (" + r.Source + ") denies it", ""
	}
	return "", ask
}

// programWords are the words of cmd from its program on (NAME=value
// assignments before it dropped), as deny rules match them.
func programWords(cmd string) []string {
	cw := words(cmd)
	for len(cw) > 1 && strings.Contains(cw[0], "=") {
		cw = cw[1:]
	}
	return cw
}

func denied(c Call, rules []Grant) (rule Grant, deny bool, ask string) {
	var asked *Grant
	var cw []string
	if c.Command != "" {
		cw = programWords(c.Command)
	}
	for _, r := range rules {
		if !r.Deny || r.Tool != c.Tool {
			continue
		}
		switch r.denies(c, cw) {
		case denyMatch:
			return r, true, ""
		case denyAsk:
			if asked == nil {
				asked = &r
			}
		}
	}
	if asked != nil {
		how := "a command with " + metaName(c.Command)
		if Simple(c.Command) {
			how = "a command run through `" + pathpkg.Base(words(c.Command)[0]) + "`"
		}
		return *asked, false, "the deny rule for `" + asked.Prefix + "` (" + asked.Source + ") cannot judge " + how + ": asked every time"
	}
	return Grant{}, false, ""
}

// Describe says what a rule or grant covers, in one line: "bash prefix
// `go test` → allow".
func Describe(g Grant) string {
	scope := ""
	switch {
	case g.Prefix != "":
		scope = " prefix `" + g.Prefix + "`"
	case g.Command != "":
		scope = " command `" + g.Command + "`"
	case g.Path != "":
		scope = " path `" + g.Path + "`"
	case g.Domain != "":
		scope = " domain `" + g.Domain + "`"
	}
	d := "allow"
	if g.Deny {
		d = "deny"
	}
	return g.Tool + scope + " → " + d
}

// RuleBook holds saved rules: those a session's configuration loaded, or
// those "always (save rule)" saved while the server runs (one book shared
// by every session, so a rule saved in one applies to all at once). Ids
// start with the book's prefix ("u" for loaded, "s" for saved).
type RuleBook struct {
	prefix string
	mu     sync.Mutex
	rules  []Grant
	nextID int
	save   func(Grant) (string, error)
	// scoped says a rule has a workspace (For must filter).
	scoped bool
}

// NewRuleBook returns a book of rules whose ids start with prefix.
func NewRuleBook(prefix string, rules []Grant) *RuleBook {
	rb := &RuleBook{prefix: prefix}
	for _, g := range rules {
		rb.Add(g)
	}
	return rb
}

// Add keeps a rule (an equal one is kept once) and returns it with its id.
func (rb *RuleBook) Add(g Grant) Grant {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	g.ID = ""
	if o, ok := equalGrant(rb.rules, g); ok {
		return o
	}
	rb.nextID++
	g.ID = rb.prefix + strconv.Itoa(rb.nextID)
	// A new slice each time: For hands out the old one without copying.
	rb.rules = append(slices.Clip(rb.rules), g)
	rb.scoped = rb.scoped || g.Workspace != ""
	return g
}

// For lists the rules that apply to a session in workspace (an absolute
// directory): those without a workspace and those whose workspace holds it.
func (rb *RuleBook) For(workspace string) []Grant {
	if rb == nil {
		return nil
	}
	rb.mu.Lock()
	rules, scoped := rb.rules, rb.scoped
	rb.mu.Unlock()
	if !scoped {
		return rules // never changed in place: callers only read it
	}
	var out []Grant
	for _, g := range rules {
		if InWorkspace(g.Workspace, workspace) {
			out = append(out, g)
		}
	}
	return out
}

// InWorkspace says a rule limited to dir ("" is none) applies to a session
// in workspace: workspace is dir or lies under it (compared lexically,
// both absolute and clean).
func InWorkspace(dir, workspace string) bool {
	if dir == "" {
		return true
	}
	dir, workspace = filepath.Clean(dir), filepath.Clean(workspace)
	return workspace == dir || strings.HasPrefix(workspace, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// UseRules makes the broker consult the rules of books (nil ones are
// skipped) that apply to workspace; a rule saved by an answer goes to the
// first book with a saver.
func (b *Broker) UseRules(workspace string, books ...*RuleBook) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.books, b.workspace = nil, workspace
	for _, bk := range books {
		if bk != nil {
			b.books = append(b.books, bk)
		}
	}
}

// Rules lists the saved rules that apply to the session, deny and allow;
// a rule in two books (saved now, and loaded by a later session) is
// listed once.
func (b *Broker) Rules() []Grant { return b.rules() }

func (b *Broker) rules() []Grant {
	b.mu.Lock()
	books, ws := b.books, b.workspace
	b.mu.Unlock()
	var out []Grant
	for _, bk := range books {
		rs := bk.For(ws)
		if len(out) == 0 {
			out = slices.Clip(rs) // shared, read only: an append copies
			continue
		}
		n := len(out)
		for _, g := range rs {
			if !slices.ContainsFunc(out[:n], func(o Grant) bool { return sameRule(o, g) }) {
				out = append(out, g)
			}
		}
	}
	return out
}

// sameRule says a and b are the same rule but for their ids.
func sameRule(a, b Grant) bool {
	a.ID, b.ID = "", ""
	return a == b
}

// saveBook is the first book that can save a rule, or nil.
func (b *Broker) saveBook() *RuleBook {
	for _, bk := range b.books {
		bk.mu.Lock()
		ok := bk.save != nil
		bk.mu.Unlock()
		if ok {
			return bk
		}
	}
	return nil
}

// Spec is a saved rule as written: a tool, at most one of a command
// prefix, a path and a domain, a decision and an optional workspace.
type Spec struct {
	Tool, Prefix, Path, Domain string
	Deny                       bool
	// Workspace is an absolute directory ("" for every workspace).
	Workspace string
	// Source is where the rule is written (file:line).
	Source string
}

// Rule checks a written rule and builds it. An allow rule has exactly the
// limits of a session grant: bash takes a prefix (PrefixRule), write a
// path (the whole workspace without one), web_fetch may take a domain,
// any other tool is allowed whole. A deny rule takes any scope.
func (s Spec) Rule() (Grant, error) {
	n := 0
	for _, v := range []string{s.Prefix, s.Path, s.Domain} {
		if v != "" {
			n++
		}
	}
	if n > 1 {
		return Grant{}, errors.New("give at most one of prefix, path and domain")
	}
	if s.Workspace != "" && (!filepath.IsAbs(s.Workspace) || filepath.Clean(s.Workspace) != s.Workspace && filepath.Clean(s.Workspace)+"/" != s.Workspace) {
		return Grant{}, fmt.Errorf("workspace %q is not a clean absolute directory, such as \"/home/me/src/project\"", s.Workspace)
	}
	var g Grant
	var err error
	switch {
	case s.Deny:
		g, err = DenyRule(s.Tool, s.Prefix, s.Path, s.Domain, s.Source)
	case s.Tool == "bash" || s.Prefix != "":
		if s.Path != "" || s.Domain != "" {
			return Grant{}, errors.New("a bash rule takes a prefix only")
		}
		g, err = PrefixRule(s.Tool, s.Prefix, s.Source)
	case s.Tool == "write" || s.Path != "":
		if s.Domain != "" {
			return Grant{}, errors.New("a write rule takes a path only")
		}
		g, err = PathRule(s.Tool, s.Path, s.Source)
	case s.Domain != "":
		g, err = DomainRule(s.Tool, s.Domain, s.Source)
	default:
		g, err = ToolRule(s.Tool, s.Source)
	}
	if err != nil {
		return Grant{}, err
	}
	if s.Workspace != "" {
		g.Workspace = filepath.Clean(s.Workspace)
	}
	return g, nil
}

// ErrNoSave: the server has nowhere to save a rule.
var ErrNoSave = errors.New("this server saves no rules (it has no user config to write)")

// SetSaver sets how a rule is saved: save writes it to the user config
// and returns where (file:line).
func (rb *RuleBook) SetSaver(save func(Grant) (string, error)) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	rb.save = save
}

// Save writes g with the saver and keeps it; the rule returned carries
// its id and source.
func (rb *RuleBook) Save(g Grant) (Grant, error) {
	if rb == nil {
		return Grant{}, ErrNoSave
	}
	rb.mu.Lock()
	save := rb.save
	rb.mu.Unlock()
	if save == nil {
		return Grant{}, ErrNoSave
	}
	src, err := save(g)
	if err != nil {
		return Grant{}, err
	}
	g.Source = src
	return rb.Add(g), nil
}

// ruleFor is the saved rule an "always (save rule)" answer asks for: the
// session grant it would give, written as a rule and checked as a loaded
// rule is, which must cover the call being approved.
func ruleFor(req Request, a Answer) (Grant, error) {
	g, err := grantFor(req, a)
	if err != nil {
		return Grant{}, err
	}
	if g.Command != "" {
		why := "a saved rule takes a command prefix, and no prefix may cover this command"
		if a.Exact {
			why = "a saved rule takes a command prefix, not one exact command"
		} else if w := commandWhy(g.Command); w != "" {
			why = w
		}
		return Grant{}, errors.New(why + "; approve it once or for this session")
	}
	r, err := Spec{Tool: g.Tool, Prefix: g.Prefix, Path: g.Path, Domain: g.Domain}.Rule()
	if err != nil {
		return Grant{}, err
	}
	if !r.covers(req.Call) {
		return Grant{}, fmt.Errorf("the rule %s would not cover this call; approve it once or for this session", Describe(r))
	}
	return r, nil
}

// commandWhy says why no prefix covers cmd, or "".
func commandWhy(cmd string) string {
	switch {
	case !Simple(cmd):
		return "contains " + metaName(cmd) + ": prefix rules never cover it"
	case findAction(words(cmd)) != "":
		return "`find` with `" + findAction(words(cmd)) + "` runs or changes other things: prefix rules never cover it"
	}
	if _, why := proposePrefix(cmd); why != "" {
		return why
	}
	return ""
}
