package tui

import (
	"fmt"
	"strings"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// Tokens and cost of the session (docs/tui.md): the status line shows the
// session's tokens and, when any turn had a price, its cost; /cost lists
// them per turn. A resumed session starts from the total the server sums
// over all its stored turns, those not redrawn included.

// spend is the session's accounting.
type spend struct {
	// turns are the completed turns the transcript shows, oldest first.
	turns []turnSpend
	// earlier is the usage of stored turns not redrawn (session.resumed's
	// total less the redrawn turns').
	earlier proto.Usage
	// total is everything: earlier plus turns.
	total proto.Usage
	// label caches the status line's text for total.
	label    string
	labelFor proto.Usage
}

// turnSpend is one completed turn's usage, with its id, number and
// prompt.
type turnSpend struct {
	id     string
	n      int
	prompt string
	usage  proto.Usage
}

// addUsage adds u to t, cost included (nil stays nil only while both are).
func addUsage(t *proto.Usage, u proto.Usage) {
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.TotalTokens += u.TotalTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
	if u.CostUSD != nil {
		c := *u.CostUSD
		if t.CostUSD != nil {
			c += *t.CostUSD
		}
		t.CostUSD = &c
	}
}

// turnDone records a completed turn's usage.
func (s *spend) turnDone(t turnSpend) {
	s.turns = append(s.turns, t)
	addUsage(&s.total, t.usage)
}

// numbered sets the number of the turn id (a replayed turn learns it
// after its events).
func (s *spend) numbered(id string, n int) {
	if k := len(s.turns); k > 0 && s.turns[k-1].id == id {
		s.turns[k-1].n = n
	}
}

// resumed sets the session's total from session.resumed, after its turns
// were redrawn: what they do not account for is earlier.
func (s *spend) resumed(total *proto.Usage) {
	if total == nil {
		return
	}
	var shown proto.Usage
	for _, t := range s.turns {
		addUsage(&shown, t.usage)
	}
	e := proto.Usage{InputTokens: total.InputTokens - shown.InputTokens, OutputTokens: total.OutputTokens - shown.OutputTokens,
		TotalTokens: total.TotalTokens - shown.TotalTokens, CacheReadTokens: total.CacheReadTokens - shown.CacheReadTokens,
		CacheWriteTokens: total.CacheWriteTokens - shown.CacheWriteTokens}
	if total.CostUSD != nil {
		c := *total.CostUSD
		if shown.CostUSD != nil {
			c -= *shown.CostUSD
		}
		e.CostUSD = &c
	}
	if e.TotalTokens < 0 || e.InputTokens < 0 {
		e = proto.Usage{} // a total below the turns shown: trust the turns
	}
	s.earlier = e
	s.total = e
	for _, t := range s.turns {
		addUsage(&s.total, t.usage)
	}
}

// prepend puts earlier turns' records (loaded later) before those shown;
// they were counted in earlier already.
func (s *spend) prepend(older []turnSpend) {
	var sum proto.Usage
	for _, t := range older {
		addUsage(&sum, t.usage)
	}
	s.earlier.InputTokens -= sum.InputTokens
	s.earlier.OutputTokens -= sum.OutputTokens
	s.earlier.TotalTokens -= sum.TotalTokens
	s.earlier.CacheReadTokens -= sum.CacheReadTokens
	s.earlier.CacheWriteTokens -= sum.CacheWriteTokens
	if s.earlier.CostUSD != nil && sum.CostUSD != nil {
		c := *s.earlier.CostUSD - *sum.CostUSD
		s.earlier.CostUSD = &c
	}
	if s.earlier.TotalTokens < 0 {
		s.earlier = proto.Usage{}
	}
	s.turns = append(append([]turnSpend{}, older...), s.turns...)
}

// statusLabel is the status line's part: "12.3k tok · $0.042", tokens only
// when no turn had a price, "" before any usage.
func (s *spend) statusLabel() string {
	if s.total.TotalTokens == 0 && s.total.CostUSD == nil {
		return ""
	}
	if s.label != "" && sameUsage(s.labelFor, s.total) {
		return s.label
	}
	l := tokenCount(s.total.TotalTokens) + " tok"
	if s.total.CostUSD != nil {
		l += " · " + dollars(*s.total.CostUSD)
	}
	s.label, s.labelFor = l, s.total
	return l
}

func sameUsage(a, b proto.Usage) bool {
	if (a.CostUSD == nil) != (b.CostUSD == nil) || a.CostUSD != nil && *a.CostUSD != *b.CostUSD {
		return false
	}
	a.CostUSD, b.CostUSD = nil, nil
	return a == b
}

// tokenCount is n with one decimal from a thousand up to a hundred
// thousand (12.3k), whole thousands to a million, then millions (1.2M).
func tokenCount(n int64) string { return shortCount(n, 100_000) }

// dollars formats a cost: three decimals below ten dollars ($0.042), two
// above; "<$0.001" for a cost that rounds to nothing but is not zero.
func dollars(usd float64) string {
	switch {
	case usd > 0 && usd < 0.0005:
		return "<$0.001"
	case usd < 10:
		return fmt.Sprintf("$%.3f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// costReport is /cost: one line per turn shown (input, output, cached
// tokens and cost), the earlier turns not redrawn as one line, and the
// total.
func (m *Model) costReport() string {
	s := &m.spend
	if len(s.turns) == 0 && s.total.TotalTokens == 0 {
		return "cost: no turn has reported usage yet in this session"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cost of this session (model %s):\n", orDash(m.session.Model))
	fmt.Fprintf(&b, "  %-5s %-28s %9s %9s %9s %10s\n", "turn", "prompt", "input", "output", "cached", "cost")
	row := func(name, prompt string, u proto.Usage) {
		cost := "—"
		if u.CostUSD != nil {
			cost = dollars(*u.CostUSD)
		}
		fmt.Fprintf(&b, "  %-5s %-28s %9s %9s %9s %10s\n", name, prompt, tokenCount(u.InputTokens), tokenCount(u.OutputTokens), tokenCount(u.CacheReadTokens+u.CacheWriteTokens), cost)
	}
	if s.earlier.TotalTokens > 0 {
		row("…", "earlier turns (not shown)", s.earlier)
	}
	unpriced := 0
	for _, t := range s.turns {
		name := "—"
		if t.n > 0 {
			name = fmt.Sprint(t.n)
		}
		row(name, promptStart(t.prompt, 28), t.usage)
		if t.usage.CostUSD == nil {
			unpriced++
		}
	}
	row("total", "", s.total)
	switch {
	case s.total.CostUSD == nil:
		b.WriteString("  no price is known for this model: tokens only (docs/model.md: [providers.<name>.models.<id>] sets one)")
	case unpriced == 1:
		b.WriteString("  1 turn had no known price and is not in the cost")
	case unpriced > 0:
		fmt.Fprintf(&b, "  %d turns had no known price and are not in the cost", unpriced)
	default:
		b.WriteString("  cached: prompt tokens read from or written to the provider's cache; prices from the model catalogue or the configuration")
	}
	return b.String()
}

// promptStart is the first line of p, cut to n columns.
func promptStart(p string, n int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(p), "\n")
	line = termtext.Line(line)
	if r := []rune(line); len(r) > n {
		line = string(r[:n-1]) + "…"
	}
	return line
}
