package signin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/scv-agent/scv/internal/delegation"
)

// codex signs in with its own commands and can import the user's own
// Codex setup.
type codex struct{ command }

// Import copies a Codex setup into the private home and reports what it
// copied; it never prints a key.
func (c codex) Import(_ context.Context, io IO, req ImportRequest) error {
	if req.FromProvider {
		return usage("--from-scv-provider is for pi")
	}
	from := req.From
	if from == "" {
		from = req.UserEnv["CODEX_HOME"]
	}
	if from == "" {
		if req.UserEnv["HOME"] == "" {
			return errors.New("cannot find ~/.codex without HOME: pass --from DIR")
		}
		from = filepath.Join(req.UserEnv["HOME"], ".codex")
	}
	if err := c.EnsureHome(c.Home); err != nil {
		return err
	}
	rep, err := importCodex(from, c.Home)
	if err != nil {
		return err
	}
	out := io.Out
	if rep.ConfigCopied {
		fmt.Fprintf(out, "codex: copied config.toml (model %s, provider %s, effort %s, sandbox_mode %s, approval_policy %s)\n",
			dash(rep.Model), dash(rep.Provider), dash(rep.Effort), dash(rep.Sandbox), dash(rep.Approval))
	} else {
		fmt.Fprintln(out, "codex: no config.toml to copy")
	}
	if rep.AuthCopied {
		fmt.Fprintln(out, "codex: copied auth.json (API key)")
	} else if rep.AuthSkipped != "" {
		fmt.Fprintf(out, "codex: auth.json not copied: %s\n", rep.AuthSkipped)
	}
	for _, k := range rep.EnvKeys {
		fmt.Fprintf(io.Err, "warning: provider %s reads its key from the environment (env_key), but delegated agents never inherit key variables and the user service does not load your shell profile: use a key in auth.json or experimental_bearer_token instead\n", k)
	}
	fmt.Fprintln(out, "codex: this is a snapshot; re-run the import after changing your own Codex configuration")
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// maxCodexFileBytes bounds the files an import reads.
const maxCodexFileBytes = 1 << 20

// codexImport says what `scv agents import codex` copied; it never holds a
// key.
type codexImport struct {
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

// importCodex copies a Codex setup from dir into codexHome (the codex
// adapter home): config.toml whole, auth.json only when it holds an API key
// (a ChatGPT sign-in's rotating refresh token must stay in one home). Both
// files are validated before either is written; copies are atomic, 0600.
func importCodex(from, codexHome string) (codexImport, error) {
	var rep codexImport
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

func (rep *codexImport) readConfig(b []byte) error {
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
