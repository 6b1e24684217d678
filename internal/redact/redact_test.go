package redact_test

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/redact"
)

func TestValuesRedact(t *testing.T) {
	const key = "Zq9+fake/KEY=value1234"
	k := redact.NewValues([]string{key, "short", "another-secret-value"})
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
			if got := k.Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := (redact.Values{}).Redact(key); got != key {
		t.Errorf("no secrets configured: %q", got)
	}
}

func TestCredentials(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Authorization: Bearer abc.def", "Authorization: …"},
		{"key sk-abcdefghijklmnop end", "key … end"},
		{"AKIAABCDEFGHIJKLMNOP", "…"},
		{"api_key=12345 next", "api_key=… next"},
		{"MY_TOKEN: x", "MY_TOKEN: …"},
		{`{"client_secret": "abc123"}`, `{"client_secret": "…"}`},
		{"mysql --password hunter2 -u root", "mysql --password … -u root"},
		{"deploy --api-key=abcd1234 --region eu", "deploy --api-key=… --region eu"},
		{"gh --auth-token s3cr3t --verbose", "gh --auth-token … --verbose"},
		{"tool --token --next", "tool --token --next"},
		{"ghp_abcdefghijklmnopqrstu and github_pat_11ABCDEFG0123456789_abc", "… and …"},
		{"AIzaSyA1234567890abcdefghijklmnopqrstuv", "…"},
		{"xoxb-1234567890-abcdef", "…"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "jwt …"},
		{"https://bob:pa55@host/x", "https://…@host/x"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: …"},
		{"api_key=…", "api_key=…"},
		{"a token of appreciation", "a token of appreciation"},
		{"sk-short", "sk-short"},
	}
	for _, tc := range tests {
		if got := redact.Credentials(tc.in); got != tc.want {
			t.Errorf("Credentials(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
