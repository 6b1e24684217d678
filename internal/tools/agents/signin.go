package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scv-agent/scv/internal/delegation"
)

// DshCredentialFile is DeepSeek Harness's own credential file in its home.
func DshCredentialFile(adapterHome string) string {
	return filepath.Join(adapterHome, ".dsh", ".credentials.yaml")
}

// ValidKey checks an API key read from the user: printable ASCII without
// spaces or quotes, so it is stored verbatim and never misread.
func ValidKey(key string) error {
	if key == "" {
		return errors.New("the key is empty")
	}
	if len(key) > 4096 {
		return errors.New("the key is longer than 4096 characters")
	}
	for _, r := range key {
		if r <= ' ' || r > '~' || r == '"' || r == '\'' || r == '\\' {
			return errors.New("the key holds spaces, quotes or non-ASCII characters: paste only the key")
		}
	}
	return nil
}

// WriteDshKey stores key as refs.DEEPSEEK_API_KEY in DeepSeek Harness's
// credential file, atomically with mode 0600.
func WriteDshKey(adapterHome, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	a, _ := Apply(mustLookup("dsh"), Override{})
	if err := a.EnsureHome(adapterHome); err != nil {
		return err
	}
	body := "# Written by `scv agents login dsh`.\nrefs:\n  DEEPSEEK_API_KEY: " + strconv.Quote(key) + "\n"
	return delegation.WriteFileAtomic(DshCredentialFile(adapterHome), []byte(body), 0o600)
}

// RemoveFile removes p; a missing file is not an error. It reports whether
// something was removed.
func RemoveFile(p string) (bool, error) {
	err := os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", p, err)
	}
	return true, nil
}

// StoredCredential says whether any of the descriptor's credential files
// exists (and is non-empty) in the private home. The content is never read
// into anything that is printed.
func StoredCredential(a Adapter, adapterHome string) bool {
	for _, pat := range a.CredentialFiles {
		matches, _ := filepath.Glob(filepath.Join(adapterHome, pat))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
				return true
			}
		}
	}
	return false
}

func mustLookup(name string) Descriptor {
	d, ok := Lookup(name)
	if !ok {
		panic("unknown agent " + name)
	}
	return d
}

// SummarizeClaudeStatus turns `claude auth status` output into a summary
// that names neither the account e-mail nor any part of a key.
func SummarizeClaudeStatus(out string, exitCode int) string {
	var st struct {
		LoggedIn         *bool  `json:"loggedIn"`
		AuthMethod       string `json:"authMethod"`
		SubscriptionType string `json:"subscriptionType"`
		APIProvider      string `json:"apiProvider"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(out)), &st) == nil && st.LoggedIn != nil {
		if !*st.LoggedIn {
			return "not signed in"
		}
		m := strings.ToLower(st.AuthMethod)
		switch {
		case strings.Contains(m, "key") || strings.Contains(m, "api"):
			return "signed in (API key)"
		case st.SubscriptionType != "" && safeWord(st.SubscriptionType):
			return "signed in (Claude account, " + st.SubscriptionType + ")"
		default:
			return "signed in (Claude account)"
		}
	}
	return summarizeText(out, exitCode, "Claude account")
}

// SummarizeCodexStatus turns `codex login status` output into a summary.
func SummarizeCodexStatus(out string, exitCode int) string {
	return summarizeText(out, exitCode, "ChatGPT account")
}

func summarizeText(out string, exitCode int, account string) string {
	l := strings.ToLower(out)
	switch {
	case strings.Contains(l, "not logged in") || strings.Contains(l, "not signed in") || strings.Contains(l, "no credentials"):
		return "not signed in"
	case strings.Contains(l, "api key") || strings.Contains(l, "api_key") || strings.Contains(l, "apikey"):
		return "signed in (API key)"
	case strings.Contains(l, "chatgpt") || strings.Contains(l, "claude.ai") || strings.Contains(l, "oauth") || strings.Contains(l, "account"):
		return "signed in (" + account + ")"
	case exitCode == 0 && strings.Contains(l, "logged in"):
		return "signed in"
	case exitCode != 0:
		return "not signed in"
	}
	return "unknown"
}

func safeWord(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// hostOf is the host of a URL, for summaries that must not print paths or
// query strings (which sometimes carry tokens).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "?"
	}
	return u.Host
}
