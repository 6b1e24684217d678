package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scv-agent/scv/internal/delegation"
)

// PiProviderName is the provider SCV writes into pi's models.json.
const PiProviderName = "scv"

// piKeyPlaceholder fills models.json's apiKey, which pi requires non-empty
// for a custom provider; the real key is in auth.json, which pi prefers.
const piKeyPlaceholder = "SCV_KEY_IS_IN_AUTH_JSON"

// PiEndpoint is an OpenAI-compatible endpoint for pi.
type PiEndpoint struct {
	BaseURL string
	// WireAPI is "responses" or "chat".
	WireAPI string
	Model   string
	APIKey  string
}

// Validate checks every field before anything is written.
func (e PiEndpoint) Validate() error {
	u, err := url.Parse(e.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q: use http(s)://host/…", e.BaseURL)
	}
	if e.WireAPI != "responses" && e.WireAPI != "chat" {
		return fmt.Errorf("wire API %q: use responses or chat", e.WireAPI)
	}
	if !ValidModel(e.Model) {
		return fmt.Errorf("model %q: use 1-128 ASCII letters, digits or ._:/@[]-", e.Model)
	}
	if err := ValidKey(e.APIKey); err != nil {
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

// WritePiEndpoint points pi (state directory agentDir, i.e.
// $SCV_HOME/adapters/pi/.pi/agent) at e: provider "scv" in models.json, its
// key in auth.json and the defaults in settings.json. Other providers and
// settings are kept; all three files are read and checked before any is
// written, and each is written atomically with mode 0600.
func WritePiEndpoint(agentDir string, e PiEndpoint) error {
	if err := e.Validate(); err != nil {
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
	objectAt(models, "providers")[PiProviderName] = prov
	auth[PiProviderName] = map[string]any{"type": "api_key", "key": e.APIKey}
	settings["defaultProvider"] = PiProviderName
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

// RemovePiEndpoint signs pi out: auth.json is removed, the scv provider is
// dropped from models.json and a default pointing at it from settings.json.
// It returns what it changed.
func RemovePiEndpoint(agentDir string) ([]string, error) {
	mp, ap, sp := piFiles(agentDir)
	var did []string
	if ok, err := RemoveFile(ap); err != nil {
		return did, err
	} else if ok {
		did = append(did, "removed auth.json")
	}
	models, err := readJSONObject(mp)
	if err != nil {
		return did, err
	}
	if provs, ok := models["providers"].(map[string]any); ok {
		if _, ok := provs[PiProviderName]; ok {
			delete(provs, PiProviderName)
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
	if settings["defaultProvider"] == PiProviderName {
		delete(settings, "defaultProvider")
		delete(settings, "defaultModel")
		if err := writeJSON(sp, settings); err != nil {
			return did, err
		}
		did = append(did, "removed the default pointing at scv from settings.json")
	}
	return did, nil
}

// PiStatus summarises pi's sign-in without any key.
type PiStatus struct {
	DefaultProvider, API, Host, Model string
	// SignedIn lists the providers with stored sign-ins in auth.json.
	SignedIn []string
}

// String is one line such as
// "default scv/gpt-5.1 (openai-responses at relay.example); sign-ins: scv".
func (s PiStatus) String() string {
	var b strings.Builder
	if s.DefaultProvider == "" {
		b.WriteString("no default provider")
	} else {
		fmt.Fprintf(&b, "default %s/%s", s.DefaultProvider, orDash(s.Model))
		if s.API != "" || s.Host != "" {
			fmt.Fprintf(&b, " (%s at %s)", orDash(s.API), orDash(s.Host))
		}
	}
	if len(s.SignedIn) == 0 {
		b.WriteString("; no stored sign-ins")
	} else {
		b.WriteString("; sign-ins: " + strings.Join(s.SignedIn, ", "))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ReadPiStatus reads pi's files in agentDir.
func ReadPiStatus(agentDir string) (PiStatus, error) {
	mp, ap, sp := piFiles(agentDir)
	var st PiStatus
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
