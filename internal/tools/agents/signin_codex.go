package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/scv-agent/scv/internal/delegation"
)

// maxCodexFileBytes bounds the files an import reads.
const maxCodexFileBytes = 1 << 20

// CodexImport says what `scv agents import codex` copied; it never holds a
// key.
type CodexImport struct {
	ConfigCopied bool
	Model        string
	Provider     string
	Effort       string
	Sandbox      string
	Approval     string
	// AuthCopied says auth.json (an API key) was copied; AuthSkipped says
	// why it was not.
	AuthCopied  bool
	AuthSkipped string
	// EnvKeys are providers that read their key through env_key, as
	// "provider (VARIABLE)".
	EnvKeys []string
}

func readSmall(p string) ([]byte, bool, error) {
	st, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	if st.Size() > maxCodexFileBytes {
		return nil, false, fmt.Errorf("%s is larger than 1 MiB", p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	return b, true, nil
}

// ImportCodex copies a Codex setup from dir into codexHome (the codex
// adapter home): config.toml whole, auth.json only when it holds an API key
// (a ChatGPT sign-in's rotating refresh token must stay in one home). Both
// files are validated before either is written; copies are atomic, 0600.
func ImportCodex(from, codexHome string) (CodexImport, error) {
	var rep CodexImport
	cfg, haveCfg, err := readSmall(filepath.Join(from, "config.toml"))
	if err != nil {
		return rep, err
	}
	auth, haveAuth, err := readSmall(filepath.Join(from, "auth.json"))
	if err != nil {
		return rep, err
	}
	if !haveCfg && !haveAuth {
		return rep, fmt.Errorf("no Codex setup in %s (neither config.toml nor auth.json): pass --from DIR, or use `scv agents login codex`", from)
	}
	if haveCfg {
		if err := rep.readConfig(cfg); err != nil {
			return rep, fmt.Errorf("%s: %w", filepath.Join(from, "config.toml"), err)
		}
	}
	copyAuth := false
	if haveAuth {
		var a struct {
			APIKey   *string         `json:"OPENAI_API_KEY"`
			Tokens   json.RawMessage `json:"tokens"`
			AuthMode string          `json:"auth_mode"`
		}
		if err := json.Unmarshal(auth, &a); err != nil {
			return rep, fmt.Errorf("%s is not valid JSON: %v", filepath.Join(from, "auth.json"), err)
		}
		hasTokens := len(a.Tokens) > 0 && string(a.Tokens) != "null"
		switch {
		case hasTokens || a.AuthMode == "chatgpt":
			rep.AuthSkipped = "it holds a ChatGPT sign-in, which is never copied: run `scv agents login codex` for that"
		case a.APIKey == nil || *a.APIKey == "":
			rep.AuthSkipped = "it holds no API key"
		default:
			copyAuth = true
		}
	}
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return rep, fmt.Errorf("create %s: %w", codexHome, err)
	}
	if haveCfg {
		if err := delegation.WriteFileAtomic(filepath.Join(codexHome, "config.toml"), cfg, 0o600); err != nil {
			return rep, err
		}
		rep.ConfigCopied = true
	}
	if copyAuth {
		if err := delegation.WriteFileAtomic(filepath.Join(codexHome, "auth.json"), auth, 0o600); err != nil {
			return rep, err
		}
		rep.AuthCopied = true
	}
	return rep, nil
}

func (rep *CodexImport) readConfig(b []byte) error {
	var c struct {
		Model           string `toml:"model"`
		ModelProvider   string `toml:"model_provider"`
		ReasoningEffort string `toml:"model_reasoning_effort"`
		SandboxMode     string `toml:"sandbox_mode"`
		ApprovalPolicy  any    `toml:"approval_policy"`
		ModelProviders  map[string]struct {
			EnvKey string `toml:"env_key"`
		} `toml:"model_providers"`
	}
	if err := toml.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("not valid TOML: %v", err)
	}
	rep.Model, rep.Provider, rep.Effort, rep.Sandbox = c.Model, c.ModelProvider, c.ReasoningEffort, c.SandboxMode
	if s, ok := c.ApprovalPolicy.(string); ok {
		rep.Approval = s
	} else if c.ApprovalPolicy != nil {
		rep.Approval = "custom"
	}
	for name, p := range c.ModelProviders {
		if p.EnvKey != "" {
			rep.EnvKeys = append(rep.EnvKeys, fmt.Sprintf("%s (%s)", name, p.EnvKey))
		}
	}
	sort.Strings(rep.EnvKeys)
	return nil
}
