package signin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// pi signs in through its own interactive /login, or SCV writes an
// OpenAI-compatible provider into its files.
type pi struct{ Agent }

func (p pi) Login(ctx context.Context, io IO, req LoginRequest) error {
	if !req.OpenAICompatible {
		fmt.Fprintln(io.Err, "Opening pi: run /login, then /quit.")
		return p.runAttached(ctx, io, req.Extra)
	}
	e := req.Endpoint
	var err error
	if e.BaseURL == "" {
		if e.BaseURL, err = io.Prompt.Line("Base URL (e.g. https://relay.example/v1): "); err != nil {
			return err
		}
	}
	if e.WireAPI == "" {
		if e.WireAPI, err = io.Prompt.Line("Wire API (responses or chat): "); err != nil {
			return err
		}
	}
	if e.Model == "" {
		if e.Model, err = io.Prompt.Line("Default model: "); err != nil {
			return err
		}
	}
	if e.APIKey, err = io.Prompt.Secret("API key: "); err != nil {
		return err
	}
	return p.write(io, e)
}

// write points pi at e and reports the resulting status.
func (p pi) write(io IO, e Endpoint) error {
	if err := p.EnsureHome(p.Home); err != nil {
		return err
	}
	dir := p.StateDirPath(p.Home)
	if err := writeEndpoint(dir, e); err != nil {
		return fmt.Errorf("pi: %w", err)
	}
	st, err := readPiStatus(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(io.Out, "pi: %s\n", st)
	return nil
}

func (p pi) Logout(_ context.Context, io IO, _ []string) error {
	did, err := removeEndpoint(p.StateDirPath(p.Home))
	if err != nil {
		return err
	}
	if len(did) == 0 {
		did = []string{"nothing to remove"}
	}
	fmt.Fprintf(io.Out, "pi: %s\n", strings.Join(did, "; "))
	return nil
}

func (p pi) Status(context.Context) string {
	st, err := readPiStatus(p.StateDirPath(p.Home))
	if err != nil {
		return "unreadable files: " + err.Error()
	}
	return p.withInstall(st.String())
}

// Import points pi at SCV's active provider, with its key read now.
func (p pi) Import(_ context.Context, io IO, req ImportRequest) error {
	if !req.FromProvider || req.From != "" {
		return usage("use: scv agents import pi --from-scv-provider")
	}
	e, err := req.Provider()
	if err != nil {
		return err
	}
	return p.write(io, e)
}

// piProvider is the provider SCV writes into pi's models.json.
const piProvider = "scv"

// piKeyPlaceholder fills models.json's apiKey, which pi requires non-empty
// for a custom provider; the real key is in auth.json, which pi prefers.
const piKeyPlaceholder = "SCV_KEY_IS_IN_AUTH_JSON"

// Endpoint is an OpenAI-compatible endpoint for pi.
type Endpoint struct {
	BaseURL string
	// WireAPI is "responses" or "chat".
	WireAPI string
	Model   string
	APIKey  string
}

// Validate checks every field before anything is written.
func (e Endpoint) validate() error {
	u, err := url.Parse(e.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q: use http(s)://host/…", e.BaseURL)
	}
	if e.WireAPI != "responses" && e.WireAPI != "chat" {
		return fmt.Errorf("wire API %q: use responses or chat", e.WireAPI)
	}
	if !agents.ValidModel(e.Model) {
		return fmt.Errorf("model %q: use 1-128 ASCII letters, digits or ._:/@[]-", e.Model)
	}
	if err := validKey(e.APIKey); err != nil {
		return err
	}
	if strings.HasPrefix(e.APIKey, "!") {
		return errors.New("the key starts with '!', which pi would run as a shell command")
	}
	return nil
}

func piFiles(agentDir string) (models, auth, settings string) {
	return filepath.Join(agentDir, "models.json"), filepath.Join(agentDir, "auth.json"), filepath.Join(agentDir, "settings.json")
}

// readJSONObject reads a JSON object file; a missing file is an empty object.
func readJSONObject(p string) (map[string]any, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	m := map[string]any{}
	if len(strings.TrimSpace(string(b))) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object (%v): fix or remove it first", p, err)
	}
	return m, nil
}

func writeJSON(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", p, err)
	}
	return delegation.WriteFileAtomic(p, append(b, '\n'), 0o600)
}

func objectAt(m map[string]any, key string) map[string]any {
	if o, ok := m[key].(map[string]any); ok {
		return o
	}
	o := map[string]any{}
	m[key] = o
	return o
}

// writeEndpoint points pi (state directory agentDir, i.e.
// $SCV_HOME/adapters/pi/.pi/agent) at e: provider "scv" in models.json, its
// key in auth.json and the defaults in settings.json. Other providers and
// settings are kept; all three files are read and checked before any is
// written, and each is written atomically with mode 0600.
func writeEndpoint(agentDir string, e Endpoint) error {
	if err := e.validate(); err != nil {
		return err
	}
	mp, ap, sp := piFiles(agentDir)
	models, err := readJSONObject(mp)
	if err != nil {
		return err
	}
	auth, err := readJSONObject(ap)
	if err != nil {
		return err
	}
	settings, err := readJSONObject(sp)
	if err != nil {
		return err
	}
	prov := map[string]any{
		"baseUrl": strings.TrimRight(e.BaseURL, "/"),
		"api":     "openai-completions",
		"apiKey":  piKeyPlaceholder,
		"models":  []any{map[string]any{"id": e.Model}},
	}
	if e.WireAPI == "responses" {
		prov["api"] = "openai-responses"
		// pi's default session_id header is refused by proxies that reject
		// underscores in header names.
		prov["compat"] = map[string]any{"sessionAffinityFormat": "openai-nosession"}
	}
	objectAt(models, "providers")[piProvider] = prov
	auth[piProvider] = map[string]any{"type": "api_key", "key": e.APIKey}
	settings["defaultProvider"] = piProvider
	settings["defaultModel"] = e.Model
	if err := os.MkdirAll(agentDir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", agentDir, err)
	}
	for _, f := range []struct {
		p string
		v any
	}{{mp, models}, {ap, auth}, {sp, settings}} {
		if err := writeJSON(f.p, f.v); err != nil {
			return err
		}
	}
	return nil
}

// removeEndpoint signs pi out: auth.json is removed, the scv provider is
// dropped from models.json and a default pointing at it from settings.json.
// It returns what it changed.
func removeEndpoint(agentDir string) ([]string, error) {
	mp, ap, sp := piFiles(agentDir)
	var did []string
	if ok, err := removeFile(ap); err != nil {
		return did, err
	} else if ok {
		did = append(did, "removed auth.json")
	}
	models, err := readJSONObject(mp)
	if err != nil {
		return did, err
	}
	if provs, ok := models["providers"].(map[string]any); ok {
		if _, ok := provs[piProvider]; ok {
			delete(provs, piProvider)
			if err := writeJSON(mp, models); err != nil {
				return did, err
			}
			did = append(did, "removed provider scv from models.json")
		}
	}
	settings, err := readJSONObject(sp)
	if err != nil {
		return did, err
	}
	if settings["defaultProvider"] == piProvider {
		delete(settings, "defaultProvider")
		delete(settings, "defaultModel")
		if err := writeJSON(sp, settings); err != nil {
			return did, err
		}
		did = append(did, "removed the default pointing at scv from settings.json")
	}
	return did, nil
}

// piStatus summarises pi's sign-in without any key.
type piStatus struct {
	DefaultProvider, API, Host, Model string
	// SignedIn lists the providers with stored sign-ins in auth.json.
	SignedIn []string
}

// String is one line such as
// "default scv/gpt-5.1 (openai-responses at relay.example); sign-ins: scv".
func (s piStatus) String() string {
	var b strings.Builder
	if s.DefaultProvider == "" {
		b.WriteString("no default provider")
	} else {
		fmt.Fprintf(&b, "default %s/%s", s.DefaultProvider, dash(s.Model))
		if s.API != "" || s.Host != "" {
			fmt.Fprintf(&b, " (%s at %s)", dash(s.API), dash(s.Host))
		}
	}
	if len(s.SignedIn) == 0 {
		b.WriteString("; no stored sign-ins")
	} else {
		b.WriteString("; sign-ins: " + strings.Join(s.SignedIn, ", "))
	}
	return b.String()
}

// readPiStatus reads pi's files in agentDir.
func readPiStatus(agentDir string) (piStatus, error) {
	mp, ap, sp := piFiles(agentDir)
	var st piStatus
	settings, err := readJSONObject(sp)
	if err != nil {
		return st, err
	}
	st.DefaultProvider, _ = settings["defaultProvider"].(string)
	st.Model, _ = settings["defaultModel"].(string)
	models, err := readJSONObject(mp)
	if err != nil {
		return st, err
	}
	if provs, ok := models["providers"].(map[string]any); ok {
		if p, ok := provs[st.DefaultProvider].(map[string]any); ok {
			st.API, _ = p["api"].(string)
			if u, ok := p["baseUrl"].(string); ok {
				st.Host = hostOf(u)
			}
		}
	}
	auth, err := readJSONObject(ap)
	if err != nil {
		return st, err
	}
	for k := range auth {
		st.SignedIn = append(st.SignedIn, k)
	}
	sort.Strings(st.SignedIn)
	return st, nil
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
