// Package catalog knows models: their context windows and prices, from the
// model catalogue embedded in charm.land/catwalk (the data crush ships,
// maintained with its releases) and from the user's per-model settings
// (docs/model.md, "Model catalogue and cost"). It answers one question —
// what is known of model M at endpoint B — and prices a turn's usage. The
// catalogue is decoded on the first lookup, never at start-up.
package catalog

import (
	"math"
	"net/url"
	"strings"
	"sync"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"
)

// Prices are US dollars per million tokens.
type Prices struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read,omitempty"`
	CacheWrite float64 `json:"cache_write,omitempty"`
}

// Model is what is known of one model at one endpoint.
type Model struct {
	// ID is the catalogue's id of the model (it may carry a date the
	// configured name left out).
	ID string
	// ContextWindow is its context window in tokens; 0 when unknown.
	ContextWindow int
	// Prices is nil when no price is known: such a model shows tokens
	// only.
	Prices *Prices
	// Source says where this came from: "catwalk <provider>" or
	// "providers.<name>.models".
	Source string
}

// Usage is the token accounting to price. Input counts every prompt token,
// CacheRead and CacheWrite the part of them read from or written to the
// provider's prompt cache.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

// Cost is u's price in US dollars. Prompt tokens outside the cache are
// charged at p.Input; cache reads and writes at their own price, or at
// p.Input when the catalogue lists none (and a cache read never above
// p.Input: some entries list a meaningless figure there).
func (p Prices) Cost(u Usage) float64 {
	read, write := p.CacheRead, p.CacheWrite
	if read <= 0 || read > p.Input {
		read = p.Input
	}
	if write <= 0 {
		write = p.Input
	}
	plain := max(u.Input-u.CacheRead-u.CacheWrite, 0)
	usd := float64(plain)*p.Input + float64(u.CacheRead)*read + float64(u.CacheWrite)*write + float64(u.Output)*p.Output
	return usd / 1e6
}

// Round is usd rounded to a millionth of a dollar, as it is sent and
// stored: prices per million tokens make that exact to one token.
func Round(usd float64) float64 { return math.Round(usd*1e6) / 1e6 }

// Override is what a user's configuration says of one model; zero fields
// say nothing (the catalogue's value, if any, stays).
type Override struct {
	ContextWindow int
	// Prices, when set, replaces the catalogue's prices.
	Prices *Prices
}

// Catalog answers lookups. The zero value is not usable: use New. It is
// safe for concurrent use; the embedded data is decoded on the first
// lookup.
type Catalog struct {
	once   sync.Once
	load   func() []catwalk.Provider
	byHost map[string][]entry
}

// entry is one catalogue provider reachable at a host.
type entry struct {
	id     string
	path   string // the endpoint's path, "" for the host's root
	models map[string]catwalk.Model
	ids    []string // model ids in catalogue order
}

// Options configure a Catalog.
type Options struct {
	// Providers returns the catalogue; nil: catwalk's embedded data. For
	// tests.
	Providers func() []catwalk.Provider
}

// New returns a catalogue that decodes its data on first use.
func New(opts Options) *Catalog {
	load := opts.Providers
	if load == nil {
		load = embedded.GetAll
	}
	return &Catalog{load: load}
}

// placeholderHosts are the public hosts of the catalogue's providers whose
// endpoint is an environment variable in the data ($OPENAI_API_ENDPOINT):
// the host the provider's own API is served from.
func placeholderHosts() map[string]string {
	return map[string]string{
		"openai":    "https://api.openai.com/v1",
		"anthropic": "https://api.anthropic.com",
		"gemini":    "https://generativelanguage.googleapis.com/v1beta/openai",
	}
}

// Served says the catalogue could know models served at baseURL: an
// https endpoint (a plain-http or local one is never looked up).
func Served(baseURL string) bool {
	host, _ := hostPath(baseURL)
	return host != ""
}

// Warm decodes the catalogue now (it takes ≈ 20 ms of CPU), so that the
// first lookup does not wait for it; a process that is about to open a
// session calls it in the background at start-up.
func (c *Catalog) Warm() { c.index() }

func (c *Catalog) index() {
	c.once.Do(func() {
		c.byHost = map[string][]entry{}
		ph := placeholderHosts()
		for _, p := range c.load() {
			ep := p.APIEndpoint
			if strings.HasPrefix(ep, "$") || ep == "" {
				ep = ph[string(p.ID)]
			}
			host, path := hostPath(ep)
			if host == "" {
				continue // Azure, Bedrock, Vertex: the endpoint is the user's own
			}
			e := entry{id: string(p.ID), path: path, models: make(map[string]catwalk.Model, len(p.Models))}
			for _, m := range p.Models {
				if _, dup := e.models[m.ID]; !dup {
					e.models[m.ID] = m
					e.ids = append(e.ids, m.ID)
				}
			}
			c.byHost[host] = append(c.byHost[host], e)
		}
	})
}

// hostPath is u's lower-case host (with a port other than 443) and its
// path without a trailing slash; "" host when u is not an https URL (a
// catalogue price is never applied to a plain-http or local endpoint).
func hostPath(u string) (string, string) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || !strings.EqualFold(p.Scheme, "https") || p.Hostname() == "" {
		return "", ""
	}
	host := strings.ToLower(p.Hostname())
	if port := p.Port(); port != "" && port != "443" {
		host += ":" + port
	}
	return host, strings.TrimSuffix(p.Path, "/")
}

// Lookup says what is known of model at the endpoint baseURL: the user's
// override first (over, may be nil), then the catalogue provider served at
// baseURL's host. Known is false when neither knows the model: the
// caller keeps its default context window and shows tokens only. A model
// served by an endpoint the catalogue does not list (a local server, a
// gateway) is unknown even when its name is a catalogue name: its price is
// not the catalogue's.
func (c *Catalog) Lookup(baseURL, model string, over *Override) (Model, bool) {
	m, known := c.catalogue(baseURL, model)
	if over != nil {
		if over.ContextWindow > 0 {
			m.ContextWindow, known = over.ContextWindow, true
		}
		if over.Prices != nil {
			p := *over.Prices
			m.Prices, known = &p, true
		}
		switch {
		case known && m.Source == "":
			m.ID, m.Source = model, "configuration"
		case over.ContextWindow > 0 || over.Prices != nil:
			m.Source += " and configuration"
		}
	}
	return m, known
}

func (c *Catalog) catalogue(baseURL, model string) (Model, bool) {
	host, path := hostPath(baseURL)
	if host == "" || model == "" {
		// A plain-http or local endpoint, or no model: nothing to look
		// up, so the catalogue is not decoded for it.
		return Model{}, false
	}
	c.index()
	// The entry whose endpoint path starts baseURL's path, the longest;
	// else the host's first.
	var best *entry
	prefix := -1
	for i, e := range c.byHost[host] {
		if best == nil {
			best = &c.byHost[host][i]
		}
		if strings.HasPrefix(path, e.path) && len(e.path) > prefix {
			best, prefix = &c.byHost[host][i], len(e.path)
		}
	}
	if best == nil || model == "" {
		return Model{}, false
	}
	cm, ok := best.find(model)
	if !ok {
		return Model{}, false
	}
	out := Model{ID: cm.ID, ContextWindow: int(cm.ContextWindow), Source: "catwalk " + best.id}
	if cm.CostPer1MIn > 0 || cm.CostPer1MOut > 0 {
		// catwalk's "in cached" is the price of writing the cache and
		// "out cached" the price of reading it (crush prices them so).
		out.Prices = &Prices{Input: cm.CostPer1MIn, Output: cm.CostPer1MOut, CacheRead: cm.CostPer1MOutCached, CacheWrite: cm.CostPer1MInCached}
	}
	return out, true
}

// find is the model named name: the same id, else the one dated snapshot
// of it (claude-sonnet-4-5 → claude-sonnet-4-5-20250929), else the
// undated entry of a dated name (gpt-4.1-mini-2025-04-14 → gpt-4.1-mini).
func (e *entry) find(name string) (catwalk.Model, bool) {
	if m, ok := e.models[name]; ok {
		return m, true
	}
	var hit []string
	for _, id := range e.ids {
		if rest, ok := strings.CutPrefix(id, name+"-"); ok && isDate(rest) {
			hit = append(hit, id)
		}
	}
	if len(hit) == 1 {
		return e.models[hit[0]], true
	}
	if i := strings.LastIndexByte(name, '-'); i > 0 && isDate(name[i+1:]) {
		if m, ok := e.models[name[:i]]; ok {
			return m, true
		}
	}
	// gpt-4.1-mini-2025-04-14: a date written with dashes.
	if len(name) > 11 && name[len(name)-11] == '-' && isDate(strings.ReplaceAll(name[len(name)-10:], "-", "")) {
		if m, ok := e.models[name[:len(name)-11]]; ok {
			return m, true
		}
	}
	return catwalk.Model{}, false
}

// isDate says s is eight digits (20250929).
func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
