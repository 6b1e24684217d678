package agent

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/proto"
)

func TestSecretsRedact(t *testing.T) {
	const key = "Zq9+fake/KEY=value1234"
	k := newSecrets([]string{key, "short", "another-secret-value"})
	tests := []struct{ name, in, want string }{
		{"plain", "refused " + key + " here", "refused … here"},
		{"lower-cased", "refused " + strings.ToLower(key), "refused …"},
		{"upper-cased", "refused " + strings.ToUpper(key) + "!", "refused …!"},
		{"query-escaped", "url?k=Zq9%2Bfake%2FKEY%3Dvalue1234&x=1", "url?k=…&x=1"},
		{"query-escaped lower hex", "k=zq9%2bfake%2fkey%3dvalue1234", "k=…"},
		{"path-escaped", "/v1/Zq9+fake%2FKEY=value1234/x", "/v1/…/x"},
		{"two keys", "a another-secret-value b " + key, "a … b …"},
		{"cut at the end", "tail of the line " + key[:9], "tail of the line …"},
		{"cut at the start", key[10:] + " rest", "… rest"},
		{"cut before an ellipsis", "message: " + strings.ToLower(key[:12]) + "…", "message: ……"},
		{"short values are not searched", "a short word", "a short word"},
		{"too small a piece", "ends with Zq9+f", "ends with Zq9+f"},
		{"no key", "nothing to see", "nothing to see"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := k.redact(tc.in); got != tc.want {
				t.Errorf("redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := (secrets{}).redact(key); got != key {
		t.Errorf("no secrets configured: %q", got)
	}
}

// TestProgressRedactsKeyValues: a progress line holding a configured key,
// whole or cut by the tool, is sent without it.
func TestProgressRedactsKeyValues(t *testing.T) {
	const key = "Zq9fakeKEYvalue1234"
	rec := &recorder{}
	send, stop := newProgress("c1", rec.emit, newSecrets([]string{key}))
	defer stop()
	send("downloading with " + strings.ToLower(key) + " now")
	progress := only[*proto.ToolProgress](rec)
	for _, ev := range progress {
		if strings.Contains(strings.ToLower(ev.Text), strings.ToLower(key[:6])) {
			t.Errorf("progress %q holds the key", ev.Text)
		}
	}
	if len(rec.evs) != 1 || len(progress) != 1 || progress[0].Text != "downloading with … now" {
		t.Errorf("events %+v", rec.evs)
	}
}
