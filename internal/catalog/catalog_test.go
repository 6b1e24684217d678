package catalog

import (
	"testing"

	"charm.land/catwalk/pkg/catwalk"
	"github.com/google/go-cmp/cmp"
)

// TestLookupEmbedded looks models up in catwalk's real embedded data.
func TestLookupEmbedded(t *testing.T) {
	c := New(Options{})
	tests := []struct {
		name, baseURL, model string
		wantID               string
		wantWindow           int
		wantPrices           *Prices
		known                bool
	}{
		{"openai exact", "https://api.openai.com/v1", "gpt-4.1-mini", "gpt-4.1-mini", 1047576,
			&Prices{Input: 0.39999999999999997, Output: 1.5999999999999999, CacheRead: 0.09999999999999999}, true},
		{"openai dated name", "https://api.openai.com/v1/", "gpt-4.1-mini-2025-04-14", "gpt-4.1-mini", 1047576,
			&Prices{Input: 0.39999999999999997, Output: 1.5999999999999999, CacheRead: 0.09999999999999999}, true},
		{"anthropic alias to its dated snapshot", "https://api.anthropic.com", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", 200000,
			&Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, true},
		{"openrouter by host and path", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.5", 1000000,
			&Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, true},
		{"unknown model at a known host", "https://api.openai.com/v1", "no-such-model", "", 0, nil, false},
		{"catalogue name at a local server", "http://127.0.0.1:8080/v1", "gpt-4.1-mini", "", 0, nil, false},
		{"catalogue name over plain http to the real host", "http://api.openai.com/v1", "gpt-4.1-mini", "", 0, nil, false},
		{"another port of the host", "https://api.openai.com:8443/v1", "gpt-4.1-mini", "", 0, nil, false},
		{"no base URL", "", "gpt-4.1-mini", "", 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, known := c.Lookup(tt.baseURL, tt.model, nil)
			if known != tt.known || m.ID != tt.wantID || m.ContextWindow != tt.wantWindow {
				t.Fatalf("Lookup = %+v, %v; want id %q window %d known %v", m, known, tt.wantID, tt.wantWindow, tt.known)
			}
			if diff := cmp.Diff(tt.wantPrices, m.Prices); diff != "" {
				t.Errorf("prices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLookupOverride(t *testing.T) {
	c := New(Options{})
	local := &Override{ContextWindow: 32768, Prices: &Prices{Input: 1, Output: 2}}
	m, known := c.Lookup("http://127.0.0.1:11434/v1", "qwen3:8b", local)
	want := Model{ID: "qwen3:8b", ContextWindow: 32768, Prices: &Prices{Input: 1, Output: 2}, Source: "configuration"}
	if diff := cmp.Diff(want, m); diff != "" || !known {
		t.Errorf("local override (known %v), -want +got:\n%s", known, diff)
	}
	// A window alone: the catalogue's prices stay.
	m, known = c.Lookup("https://api.anthropic.com", "claude-sonnet-4-5", &Override{ContextWindow: 100000})
	if !known || m.ContextWindow != 100000 || m.Prices == nil || m.Prices.Input != 3 || m.Source != "catwalk anthropic and configuration" {
		t.Errorf("window override = %+v, %v", m, known)
	}
	// An override the catalogue does not know still makes a model known
	// only by what it sets.
	m, known = c.Lookup("http://127.0.0.1:1/v1", "x", &Override{ContextWindow: 4096})
	if !known || m.Prices != nil || m.ContextWindow != 4096 {
		t.Errorf("window-only override of an unknown model = %+v, %v", m, known)
	}
	if _, known := c.Lookup("http://127.0.0.1:1/v1", "x", &Override{}); known {
		t.Error("an empty override made the model known")
	}
}

func TestLookupInjectedCatalogue(t *testing.T) {
	loads := 0
	c := New(Options{Providers: func() []catwalk.Provider {
		loads++
		return []catwalk.Provider{
			{ID: "one", APIEndpoint: "https://gw.example/one/v1", Models: []catwalk.Model{{ID: "m", ContextWindow: 1000, CostPer1MIn: 1}}},
			{ID: "two", APIEndpoint: "https://gw.example/two/v1", Models: []catwalk.Model{{ID: "m", ContextWindow: 2000}}},
			{ID: "azure", APIEndpoint: "$AZURE_OPENAI_API_ENDPOINT", Models: []catwalk.Model{{ID: "m"}}},
		}
	}})
	if loads != 0 {
		t.Fatal("the catalogue was decoded before the first lookup")
	}
	// A local (plain-http) endpoint, or no model, has nothing to look up:
	// the catalogue stays undecoded.
	if m, known := c.Lookup("http://127.0.0.1:11434/v1", "m", nil); known || loads != 0 {
		t.Fatalf("local endpoint: %+v known=%v, decoded %d times", m, known, loads)
	}
	if _, known := c.Lookup("https://gw.example/one/v1", "", nil); known || loads != 0 {
		t.Fatalf("no model: known=%v, decoded %d times", known, loads)
	}
	m, _ := c.Lookup("https://gw.example/two/v1", "m", nil)
	if m.ContextWindow != 2000 || m.Prices != nil || m.Source != "catwalk two" {
		t.Errorf("path match = %+v (a model without prices has none)", m)
	}
	m, _ = c.Lookup("https://GW.example/one/v1/", "m", nil)
	if m.ContextWindow != 1000 || m.Prices == nil {
		t.Errorf("path match = %+v", m)
	}
	c.Lookup("https://gw.example/one/v1", "m", nil)
	c.Warm() // already decoded: nothing again
	if loads != 1 {
		t.Errorf("the catalogue was decoded %d times", loads)
	}
}

// TestCost is the arithmetic on a table: prompt tokens outside the cache
// at the input price, cache reads and writes at theirs.
func TestCost(t *testing.T) {
	sonnet := Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	tests := []struct {
		name string
		p    Prices
		u    Usage
		want float64
	}{
		{"nothing", sonnet, Usage{}, 0},
		{"plain prompt and answer", sonnet, Usage{Input: 1_000_000, Output: 1_000_000}, 18},
		{"one thousand in, five hundred out", sonnet, Usage{Input: 1000, Output: 500}, 0.003 + 0.0075},
		{"cache reads", sonnet, Usage{Input: 10_000, CacheRead: 8_000, Output: 100}, 2000*3e-6 + 8000*0.3e-6 + 100*15e-6},
		{"cache writes", sonnet, Usage{Input: 10_000, CacheWrite: 10_000}, 10000 * 3.75e-6},
		{"no cache prices: at the input price", Prices{Input: 2, Output: 8}, Usage{Input: 1000, CacheRead: 500, CacheWrite: 100}, 1000 * 2e-6},
		{"a cache read price above the input price is not believed", Prices{Input: 1, CacheRead: 5}, Usage{Input: 100, CacheRead: 100}, 100e-6},
		{"inconsistent counts never go negative", sonnet, Usage{Input: 10, CacheRead: 100}, 100 * 0.3e-6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Cost(tt.u); Round(got) != Round(tt.want) {
				t.Errorf("Cost(%+v) = %.9f, want %.9f", tt.u, got, tt.want)
			}
		})
	}
	if got := Round(0.0000004); got != 0 {
		t.Errorf("Round(0.0000004) = %v", got)
	}
	if got := Round(0.0105004); got != 0.0105 {
		t.Errorf("Round(0.0105004) = %v", got)
	}
}

// TestWarmDecodesOnce: Warm decodes the catalogue ahead of the first
// lookup, and the lookup then uses what it decoded.
func TestWarmDecodesOnce(t *testing.T) {
	loads := 0
	c := New(Options{Providers: func() []catwalk.Provider {
		loads++
		return []catwalk.Provider{{ID: "one", APIEndpoint: "https://gw.example/v1", Models: []catwalk.Model{{ID: "m", ContextWindow: 1000}}}}
	}})
	c.Warm()
	if loads != 1 {
		t.Fatalf("Warm decoded %d times", loads)
	}
	if m, _ := c.Lookup("https://gw.example/v1", "m", nil); m.ContextWindow != 1000 || loads != 1 {
		t.Errorf("after Warm: %+v, decoded %d times", m, loads)
	}
}
