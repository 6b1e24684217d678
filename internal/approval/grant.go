package approval

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/scv-agent/scv/internal/tool"
)

// Grant is one "allow for this session" answer: later calls of Tool with
// Risk run without asking, limited by what the call does:
//
//   - a command call (bash) is covered when it is exactly Command, or when
//     Prefix is set and covers it (see MatchPrefix);
//   - a write is covered when every path it writes lies under Path (see
//     MatchPath);
//   - a call that reaches a host (web_fetch) is covered when Domain
//     matches its host (see MatchDomain), or by a grant with no scope;
//   - any other call of the tool is covered by a grant with none of them.
//
// No grant covers a call its tool marked NoGrant (a guarded path, a
// secret-like read) or a command that names a guarded path.
type Grant struct {
	ID   string
	Tool string
	// Risk is the risk the grant covers; empty (a rule) covers any.
	Risk    tool.Risk
	Prefix  string
	Command string
	Path    string
	Domain  string
	// Source says where a rule came from (`scv exec --allow`, or the
	// file:line of a saved rule); empty for a grant a person gave.
	Source string
	// Deny makes a saved rule a deny rule: the calls it matches are
	// denied without asking (see Broker.Denied). Only saved rules deny.
	Deny bool
	// Workspace, for a saved rule, limits it to sessions whose workspace
	// is this absolute directory or lies under it; "" is every workspace.
	Workspace string
}

// Call is what a grant is matched against: the tool, the risk and what the
// plan says the call does.
type Call struct {
	Tool string
	Risk tool.Risk
	// Command is the command line of a call that runs one.
	Command string
	// Paths are the workspace paths a write writes.
	Paths []string
	// Host is the host a call reaches (web_fetch), with ":port" when the
	// port is not the scheme's default.
	Host string
	// NoGrant says no grant may cover the call; NoGrantWhy says why.
	NoGrant    bool
	NoGrantWhy string
}

// CallOf is the call a plan of the tool name makes.
func CallOf(name string, plan tool.Plan) Call {
	return Call{Tool: name, Risk: plan.Risk, Command: plan.Command, Paths: plan.Paths, Host: plan.Host, NoGrant: plan.NoGrant, NoGrantWhy: plan.NoGrantWhy}
}

// never says why no grant may cover c, or "".
func never(c Call) string {
	if c.NoGrant {
		if c.NoGrantWhy != "" {
			return c.NoGrantWhy
		}
		return "this call is asked every time: no grant may cover it"
	}
	if c.Command != "" {
		if why := CommandGuard(c.Command); why != "" {
			return why
		}
	}
	return ""
}

// covers reports whether g covers c (tool, risk and scope; never checked
// apart).
func (g Grant) covers(c Call) bool {
	if g.Tool != c.Tool || g.Risk != "" && g.Risk != c.Risk {
		return false
	}
	switch {
	case c.Command != "":
		return g.Command != "" && g.Command == c.Command || g.Prefix != "" && MatchPrefix(g.Prefix, c.Command)
	case len(c.Paths) > 0:
		return g.Path != "" && MatchPath(g.Path, c.Paths)
	case c.Host != "" && g.Domain != "":
		return MatchDomain(g.Domain, c.Host)
	}
	return g.Prefix == "" && g.Command == "" && g.Path == "" && g.Domain == ""
}

// Allowed finds a grant, or else an allow rule of the session's rule book,
// that covers c. Both are matched by the same covers; a call a deny rule
// matches is never allowed (see Denied).
func (b *Broker) Allowed(c Call) (Grant, bool) {
	g, _, ok := b.allowed(c)
	return g, ok
}

// allowed is Allowed that also says whether the grant is a saved rule (of
// a rule book) rather than a session grant or a rule the session started
// with.
func (b *Broker) allowed(c Call) (g Grant, rule, ok bool) {
	if never(c) != "" {
		return Grant{}, false, false
	}
	rules := b.rules()
	if _, deny, ask := denied(c, rules); deny || ask != "" {
		return Grant{}, false, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, g := range b.grants {
		if g.covers(c) {
			return g, false, true
		}
	}
	for _, r := range rules {
		if !r.Deny && r.covers(c) {
			return r, true, true
		}
	}
	return Grant{}, false, false
}

// Explain is what an approval of c (which no grant covers) offers and
// says: the grant a person may give instead of a one-time approval (nil
// when none may cover the call) and, in one line, why the call is asked
// although the session has grants of its tool, or why the offer is
// narrower than usual ("" when there is nothing to say).
func (b *Broker) Explain(c Call) (*Grant, string) {
	if why := never(c); why != "" {
		return nil, why
	}
	offer, note := offerFor(c)
	return offer, joinWhy(b.uncovered(c), note)
}

func joinWhy(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// uncovered says why the session's grants and allow rules of c's tool do
// not cover c; "" when the session has none.
func (b *Broker) uncovered(c Call) string {
	rules := b.rules()
	b.mu.Lock()
	var same []Grant
	for _, g := range append(slices.Clone(b.grants), rules...) {
		if g.Tool == c.Tool && !g.Deny {
			same = append(same, g)
		}
	}
	b.mu.Unlock()
	if len(same) == 0 {
		return ""
	}
	var risky []string
	var scopes []string
	for _, g := range same {
		if g.Risk != "" && g.Risk != c.Risk {
			risky = append(risky, string(g.Risk))
			continue
		}
		switch {
		case g.Prefix != "":
			scopes = append(scopes, "`"+g.Prefix+"`")
		case g.Path != "":
			scopes = append(scopes, "`"+g.Path+"`")
		case g.Domain != "":
			scopes = append(scopes, "`"+g.Domain+"`")
		case g.Command != "":
			scopes = append(scopes, "one exact command")
		}
	}
	switch {
	case c.Command != "" && !Simple(c.Command) && hasPrefixGrant(same):
		return "contains " + metaName(c.Command) + ": prefix grants never cover it"
	case c.Command != "" && findAction(words(c.Command)) != "":
		return "`find` with `" + findAction(words(c.Command)) + "` runs or changes other things: prefix grants never cover it"
	case len(scopes) > 0 && len(c.Paths) > 0:
		return "outside the session's write grants (" + listed(scopes) + ")"
	case len(scopes) > 0:
		return "no session grant covers it (" + listed(scopes) + ")"
	case len(risky) > 0:
		return "the session's " + c.Tool + " grants are for risk " + strings.Join(risky, ", ") + ", this call's risk is " + string(c.Risk)
	}
	return ""
}

func hasPrefixGrant(gs []Grant) bool {
	for _, g := range gs {
		if g.Prefix != "" {
			return true
		}
	}
	return false
}

// listed joins at most three scopes and says how many more there are.
func listed(s []string) string {
	if len(s) > 3 {
		return strings.Join(s[:3], ", ") + " and " + strconv.Itoa(len(s)-3) + " more"
	}
	return strings.Join(s, ", ")
}

// metaName names the first thing that makes cmd not simple, as the
// approver would write it.
func metaName(cmd string) string {
	for i, r := range cmd {
		next := byte(0)
		if i+1 < len(cmd) {
			next = cmd[i+1]
		}
		switch {
		case r == '$' && next == '(':
			return "`$(…)`"
		case r == '$' && next == '{':
			return "`${…}`"
		case r == '$':
			return "`$` (a variable)"
		case r == '`':
			return "a backtick substitution"
		case r == '&' && next == '&', r == '|' && next == '|':
			return "`" + string(r) + string(rune(next)) + "`"
		case r == '\n':
			return "a newline"
		case r == '\\':
			return "a backslash"
		case strings.ContainsRune(shellMeta, r):
			return "`" + string(r) + "`"
		case r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xfffd):
			return "a control character"
		}
	}
	return "a character a shell interprets"
}

// offerFor is the grant c may be given and, when it is narrower than
// usual, why.
func offerFor(c Call) (*Grant, string) {
	g := &Grant{Tool: c.Tool, Risk: c.Risk}
	switch {
	case c.Command != "":
		p, why := proposePrefix(c.Command)
		g.Prefix = p
		if p == "" || !MatchPrefix(p, c.Command) {
			// The exact command is always covered; it is named only
			// when the prefix does not cover it.
			g.Command = c.Command
		}
		if p == "" && why == "" {
			why = "no prefix can be proposed (its first word is not a plain word): a session grant covers this exact command only"
		}
		return g, why
	case len(c.Paths) > 0:
		g.Path = ProposePath(c.Paths)
	case c.Host != "":
		g.Domain = c.Host
	}
	return g, ""
}

// grantFor is the grant an answer asks for, checked against the request.
func grantFor(req Request, a Answer) (Grant, error) {
	if req.Offer == nil {
		return Grant{}, ErrNoGrant
	}
	g := *req.Offer
	switch {
	case req.Call.Command != "":
		g.Command = req.Call.Command
		if a.Path != "" {
			return Grant{}, errors.New("a path applies to writes only; for a command give a prefix")
		}
		if a.Exact {
			if a.Prefix != "" {
				return Grant{}, errors.New("exact and a prefix exclude each other: exact allows this command only")
			}
			g.Prefix = ""
			return g, nil
		}
		if a.Prefix != "" {
			if err := CheckPrefix(a.Prefix, req.Call.Command); err != nil {
				return Grant{}, err
			}
			g.Prefix = NormalPrefix(a.Prefix)
		}
		if g.Prefix != "" && MatchPrefix(g.Prefix, g.Command) {
			g.Command = "" // the prefix covers it already
		}
		return g, nil
	case g.Domain != "":
		if a.Prefix != "" || a.Exact || a.Path != "" {
			return Grant{}, fmt.Errorf("a prefix, exact or path does not apply to %s calls: a grant covers the host %s", g.Tool, g.Domain)
		}
		return g, nil
	case g.Path != "":
		if a.Prefix != "" || a.Exact {
			return Grant{}, errors.New("a prefix or exact applies to commands only; for a write give a path")
		}
		if a.Path != "" {
			p, err := CheckPath(a.Path, req.Call.Paths)
			if err != nil {
				return Grant{}, err
			}
			g.Path = p
		}
		return g, nil
	}
	if a.Prefix != "" || a.Exact || a.Path != "" {
		return Grant{}, fmt.Errorf("a prefix, exact or path does not apply to %s calls: they are allowed as a whole", g.Tool)
	}
	return g, nil
}

// add keeps g unless an equal grant exists, and returns the grant kept.
func (b *Broker) add(g Grant) Grant {
	if o, ok := equalGrant(b.grants, g); ok {
		return o
	}
	b.nextID++
	g.ID = "g" + strconv.Itoa(b.nextID)
	b.grants = append(b.grants, g)
	return g
}

// equalGrant finds the grant of gs that, but for its ID, equals g (whose ID
// is "").
func equalGrant(gs []Grant, g Grant) (Grant, bool) {
	for _, o := range gs {
		bare := o
		bare.ID = ""
		if bare == g {
			return o, true
		}
	}
	return Grant{}, false
}
