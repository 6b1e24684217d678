package signin

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tools/agents"
)

// newAgent is the named agent without override, its private home below a
// fresh temporary directory.
func newAgent(t *testing.T, name string) Agent {
	t.Helper()
	d, ok := agents.Lookup(name)
	if !ok {
		t.Fatalf("no adapter %q", name)
	}
	a, err := agents.Apply(d, agents.Override{})
	if err != nil {
		t.Fatal(err)
	}
	return Agent{Adapter: a, Home: filepath.Join(t.TempDir(), "adapters", name)}
}

func TestDshKeyFile(t *testing.T) {
	d := dsh{newAgent(t, "dsh")}
	home := d.Home
	if err := d.writeKey("sk-deep-123"); err != nil {
		t.Fatal(err)
	}
	p := dshCredentialFile(home)
	b, _ := os.ReadFile(p)
	want := "# Written by `scv agents login dsh`.\nrefs:\n  DEEPSEEK_API_KEY: \"sk-deep-123\"\n"
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if m := testutil.Mode(t, p); m != 0o600 {
		t.Errorf("mode %v", m)
	}
	if m := testutil.Mode(t, home); m != 0o700 {
		t.Errorf("home mode %v", m)
	}
	if !storedCredential(home, dshCredentials) {
		t.Error("stored key not seen")
	}
	for _, bad := range []string{"", "two words", "quo\"te", "tab\there", "ключ"} {
		if err := d.writeKey(bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	if ok, err := removeFile(p); !ok || err != nil {
		t.Errorf("remove: %v %v", ok, err)
	}
	if storedCredential(home, dshCredentials) {
		t.Error("removed key still seen")
	}
}

func writeJSONFile(t *testing.T, p, s string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSONFile(t *testing.T, p string) any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPiEndpointKeepsOtherProviders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".pi", "agent")
	writeJSONFile(t, filepath.Join(dir, "models.json"), `{"providers":{"ollama":{"baseUrl":"http://localhost:11434/v1","api":"openai-completions","apiKey":"x","models":[{"id":"llama"}]}},"other":1}`)
	writeJSONFile(t, filepath.Join(dir, "auth.json"), `{"anthropic":{"type":"oauth","refresh":"r"}}`)
	writeJSONFile(t, filepath.Join(dir, "settings.json"), `{"theme":"dark","defaultProvider":"anthropic"}`)
	e := Endpoint{BaseURL: "https://relay.example/v1/", WireAPI: "responses", Model: "gpt-5.1", APIKey: "sk-relay-1"}
	if err := writeEndpoint(dir, e); err != nil {
		t.Fatal(err)
	}
	wantModels := map[string]any{
		"other": 1.0,
		"providers": map[string]any{
			"ollama": map[string]any{"baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "x", "models": []any{map[string]any{"id": "llama"}}},
			"scv": map[string]any{"baseUrl": "https://relay.example/v1", "api": "openai-responses", "apiKey": piKeyPlaceholder,
				"models": []any{map[string]any{"id": "gpt-5.1"}}, "compat": map[string]any{"sessionAffinityFormat": "openai-nosession"}},
		},
	}
	wantAuth := map[string]any{"anthropic": map[string]any{"type": "oauth", "refresh": "r"}, "scv": map[string]any{"type": "api_key", "key": "sk-relay-1"}}
	wantSettings := map[string]any{"theme": "dark", "defaultProvider": "scv", "defaultModel": "gpt-5.1"}
	for name, want := range map[string]any{"models.json": wantModels, "auth.json": wantAuth, "settings.json": wantSettings} {
		p := filepath.Join(dir, name)
		if diff := cmp.Diff(want, readJSONFile(t, p)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if m := testutil.Mode(t, p); m != 0o600 {
			t.Errorf("%s mode %v", name, m)
		}
	}
	st, err := readPiStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.String(); got != "default scv/gpt-5.1 (openai-responses at relay.example); sign-ins: anthropic, scv" {
		t.Errorf("status %q", got)
	}
	// Chat wire API: no compat block.
	e.WireAPI = "chat"
	if err := writeEndpoint(dir, e); err != nil {
		t.Fatal(err)
	}
	scv := readJSONFile(t, filepath.Join(dir, "models.json")).(map[string]any)["providers"].(map[string]any)["scv"].(map[string]any)
	if scv["api"] != "openai-completions" || scv["compat"] != nil {
		t.Errorf("chat provider %v", scv)
	}
	did, err := removeEndpoint(dir)
	if err != nil || len(did) != 3 {
		t.Fatalf("logout: %v %v", did, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "auth.json")); !os.IsNotExist(err) {
		t.Error("auth.json kept")
	}
	models := readJSONFile(t, filepath.Join(dir, "models.json")).(map[string]any)["providers"].(map[string]any)
	if _, ok := models["scv"]; ok || models["ollama"] == nil {
		t.Errorf("providers after logout: %v", models)
	}
	if diff := cmp.Diff(map[string]any{"theme": "dark"}, readJSONFile(t, filepath.Join(dir, "settings.json"))); diff != "" {
		t.Errorf("settings after logout: %s", diff)
	}
}

func TestPiEndpointValidatedBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	good := Endpoint{BaseURL: "http://127.0.0.1:8080/v1", WireAPI: "chat", Model: "m", APIKey: "k"}
	bad := []Endpoint{
		{BaseURL: "ftp://x", WireAPI: "chat", Model: "m", APIKey: "k"},
		{BaseURL: "http://x", WireAPI: "grpc", Model: "m", APIKey: "k"},
		{BaseURL: "http://x", WireAPI: "chat", Model: "-m", APIKey: "k"},
		{BaseURL: "http://x", WireAPI: "chat", Model: "m", APIKey: ""},
		{BaseURL: "http://x", WireAPI: "chat", Model: "m", APIKey: "!cat /etc/shadow"},
	}
	for _, e := range bad {
		if err := writeEndpoint(dir, e); err == nil {
			t.Errorf("%+v accepted", e)
		}
	}
	writeJSONFile(t, filepath.Join(dir, "settings.json"), `{not json`)
	if err := writeEndpoint(dir, good); err == nil {
		t.Error("written over an unreadable settings.json")
	}
	for _, f := range []string{"models.json", "auth.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s written although settings.json was unreadable", f)
		}
	}
}

func TestImportCodex(t *testing.T) {
	cfg := `model = "gpt-5.1-codex"
model_provider = "relay"
model_reasoning_effort = "high"
sandbox_mode = "workspace-write"
approval_policy = "never"

[model_providers.relay]
name = "Relay"
base_url = "https://relay.example/v1"
wire_api = "responses"
env_key = "RELAY_API_KEY"

[projects."/src/x"]
trust_level = "trusted"
`
	tests := []struct {
		name, auth string
		want       codexImport
		authCopied bool
	}{
		{"api key", `{"OPENAI_API_KEY":"sk-abc"}`, codexImport{ConfigCopied: true, AuthCopied: true}, true},
		{"chatgpt", `{"OPENAI_API_KEY":null,"tokens":{"refresh_token":"r"},"auth_mode":"chatgpt"}`,
			codexImport{ConfigCopied: true, AuthSkipped: "it holds a ChatGPT sign-in, which is never copied: run `scv agents login codex` for that"}, false},
		{"no auth", "", codexImport{ConfigCopied: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, home := t.TempDir(), filepath.Join(t.TempDir(), "codex")
			os.WriteFile(filepath.Join(from, "config.toml"), []byte(cfg), 0o644)
			if tt.auth != "" {
				os.WriteFile(filepath.Join(from, "auth.json"), []byte(tt.auth), 0o644)
			}
			got, err := importCodex(from, home)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.Model, want.Provider, want.Effort, want.Sandbox, want.Approval = "gpt-5.1-codex", "relay", "high", "workspace-write", "never"
			want.EnvKeys = []string{"relay (RELAY_API_KEY)"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != cfg || testutil.Mode(t, filepath.Join(home, "config.toml")) != 0o600 {
				t.Errorf("config.toml not copied whole with 0600")
			}
			_, err = os.Stat(filepath.Join(home, "auth.json"))
			if tt.authCopied != (err == nil) {
				t.Errorf("auth.json copied = %v, want %v", err == nil, tt.authCopied)
			}
		})
	}
	t.Run("invalid files write nothing", func(t *testing.T) {
		for _, files := range []map[string]string{
			{"config.toml": "model = ", "auth.json": `{"OPENAI_API_KEY":"sk"}`},
			{"config.toml": `model = "x"`, "auth.json": `{"OPENAI_API_KEY":`},
			{},
		} {
			from, home := t.TempDir(), filepath.Join(t.TempDir(), "codex")
			for n, c := range files {
				os.WriteFile(filepath.Join(from, n), []byte(c), 0o644)
			}
			if _, err := importCodex(from, home); err == nil {
				t.Errorf("%v imported", files)
			}
			if ents, _ := os.ReadDir(home); len(ents) != 0 {
				t.Errorf("%v: wrote %v", files, ents)
			}
		}
	})
}

func TestStatusSummariesHideSecrets(t *testing.T) {
	tests := []struct {
		name, out string
		code      int
		claude    bool
		want      string
	}{
		{"claude max", `{"loggedIn":true,"authMethod":"claude.ai","email":"me@example.com","subscriptionType":"max","orgName":"Me"}`, 0, true, "signed in (Claude account, max)"},
		{"claude key", `{"loggedIn":true,"authMethod":"api_key","apiKeySource":"sk-ant-api03-abcd"}`, 0, true, "signed in (API key)"},
		{"claude out", `{"loggedIn":false}`, 1, true, "not signed in"},
		{"claude text", "Not logged in. Run claude auth login", 1, true, "not signed in"},
		{"claude odd sub", `{"loggedIn":true,"subscriptionType":"me@example.com"}`, 0, true, "signed in (Claude account)"},
		{"codex chatgpt", "Logged in using ChatGPT (me@example.com)", 0, false, "signed in (ChatGPT account)"},
		{"codex key", "Logged in using an API key - sk-proj-***ABCDE", 0, false, "signed in (API key)"},
		{"codex out", "Not logged in", 1, false, "not signed in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarizeCodex(tt.out, tt.code)
			if tt.claude {
				got = summarizeClaude(tt.out, tt.code)
			}
			if got != tt.want {
				t.Errorf("summary %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "@") || strings.Contains(got, "sk-") {
				t.Errorf("summary leaks: %q", got)
			}
		})
	}
}

// TestEveryAdapterSignsIn: the sign-in list of For and the adapter table
// name the same agents, and the agents Importers names import something
// while the others refuse as a usage error.
func TestEveryAdapterSignsIn(t *testing.T) {
	for _, name := range agents.Names() {
		m, ok := For(newAgent(t, name))
		if !ok {
			t.Errorf("adapter %s has no sign-in in For", name)
			continue
		}
		err := m.Import(t.Context(), IO{}, ImportRequest{})
		var ue *UsageError
		isUsage := errors.As(err, &ue)
		imports := slices.Contains(Importers(), name)
		if imports && isUsage && strings.HasPrefix(err.Error(), "import supports") {
			t.Errorf("%s is listed in Importers but refuses to import: %v", name, err)
		}
		if !imports && !isUsage {
			t.Errorf("%s is not in Importers, but Import said %v", name, err)
		}
	}
	for _, name := range Importers() {
		if _, ok := agents.Lookup(name); !ok {
			t.Errorf("Importers names %s, which is no adapter", name)
		}
	}
	if _, ok := For(Agent{Adapter: agents.Adapter{Descriptor: agents.Descriptor{Name: "nope"}}}); ok {
		t.Error("For accepted an agent without an adapter")
	}
}
