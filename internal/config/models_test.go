package config

import (
	"strings"
	"testing"
)

// TestModelInfo: [providers.<name>.models.<id>] describes a model, with
// integer or fractional prices, and a negative price is refused.
func TestModelInfo(t *testing.T) {
	f := newFixture(t)
	f.user(t, `[providers.local]
base_url = "http://127.0.0.1:11434/v1"
wire_api = "chat"
model = "qwen3:8b"
api_key_env = ""

[providers.local.models."qwen3:8b"]
context_window = 32768
input_price = 1
output_price = 2.5
`)
	l := mustLoad(t, f.opts())
	got := l.Config.Providers["local"].Models["qwen3:8b"]
	if want := (ModelInfo{ContextWindow: 32768, InputPrice: 1, OutputPrice: 2.5}); got != want {
		t.Errorf("models table = %+v, want %+v", got, want)
	}
	if o := l.Origin(`providers.local.models."qwen3:8b".output_price`); !strings.HasPrefix(o, "user ") {
		t.Errorf("origin = %q", o)
	}
	f.user(t, `[providers.openai.models.gpt-x]
input_price = -1
`)
	_, probs := problems(t, f.opts())
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "negative") || probs[0].Line != 2 {
		t.Errorf("negative price: %v", probs)
	}
}
