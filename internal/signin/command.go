package signin

import (
	"context"
	"encoding/json"
	"strings"
)

// command is an agent that signs in with its own CLI's commands (claude,
// codex, grok), run with the private home and the scrubbed environment.
type command struct {
	Agent
	login, logout []string
	// status is the agent's own status command, whose output summarize
	// turns into a line without secrets; without one, credentials are the
	// files whose presence means a stored sign-in.
	status      []string
	summarize   func(out string, exitCode int) string
	credentials []string
}

func (c command) Login(ctx context.Context, io IO, req LoginRequest) error {
	if err := notCompatible(req); err != nil {
		return err
	}
	return c.runAttached(ctx, io, append(append([]string{}, c.login...), req.Extra...))
}

func (c command) Logout(ctx context.Context, io IO, extra []string) error {
	return c.runAttached(ctx, io, append(append([]string{}, c.logout...), extra...))
}

// Status never prints what the agent's own status command said: only a
// summary derived from it.
func (c command) Status(ctx context.Context) string {
	if c.status == nil {
		return c.credentialSummary(c.credentials)
	}
	if c.withInstall("") == NotInstalled {
		return NotInstalled // its own status command cannot run
	}
	out, code, err := c.capture(ctx, c.status)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return c.summarize(out, code)
}

func (c command) Import(context.Context, IO, ImportRequest) error { return noImport() }

// summarizeClaude turns `claude auth status` output into a summary that
// names neither the account e-mail nor any part of a key.
func summarizeClaude(out string, exitCode int) string {
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

// summarizeCodex turns `codex login status` output into a summary.
func summarizeCodex(out string, exitCode int) string {
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
