package cli

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestModelsAndProviderErrors: `scv models` lists the endpoint's models
// with the configured one marked; a refused key names the variable that
// holds it, a missing model the commands that list models, and a server
// that is not running its base URL — as scv exec prints them.
func TestModelsAndProviderErrors(t *testing.T) {
	m := modeltest.New(t)
	m.Models = []string{"b-model", "fake-model", "a-model"}
	m.Script(modeltest.HTTPError(401, `{"error":{"message":"Incorrect API key provided"}}`, ""))
	m.Script(modeltest.HTTPError(404, `{"error":{"message":"The model 'nope' does not exist"}}`, ""))
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[providers.openai]\nbase_url = \""+m.URL()+"\"\nmodel = \"fake-model\"\nmax_retries = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := Env{"SCV_HOME": home, "HOME": t.TempDir(), "OPENAI_API_KEY": "sk-wrong-4321"}
	run := func(args ...string) (string, string, int) {
		return runCLI(t, env, append(args, "--workspace", ws)...)
	}
	out, errs, code := run("models")
	if code != 0 || out != "  a-model\n  b-model\n* fake-model\n" || errs != "" {
		t.Errorf("scv models: exit %d\n%q\n%s", code, out, errs)
	}
	out, _, code = run("models", "--json")
	var got struct {
		Provider, Current string
		Models            []string
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Provider != "openai" || got.Current != "fake-model" || len(got.Models) != 3 {
		t.Errorf("scv models --json: exit %d %v\n%s", code, err, out)
	}
	if _, errs, _ := runCLI(t, env, "--model", "zz", "models", "--workspace", ws); !strings.Contains(errs, `the configured model "zz" is not among them`) {
		t.Errorf("a model not listed is not noted: %q", errs)
	}

	_, errs, code = run("exec", "hi")
	if code != ExitFailure || !strings.Contains(errs, "HTTP 401 Unauthorized: the provider refused the key from OPENAI_API_KEY (providers.openai.api_key_env)") || strings.Contains(errs, "sk-wrong-4321") {
		t.Errorf("401: exit %d: %s", code, errs)
	}
	_, errs, code = runCLI(t, env, "--model", "nope", "exec", "hi", "--workspace", ws)
	if code != ExitFailure || !strings.Contains(errs, "`/model` or `scv models` lists what this endpoint serves") {
		t.Errorf("404: exit %d: %s", code, errs)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/v1"
	l.Close()
	_, errs, code = runCLI(t, env, "--base-url", dead, "exec", "hi", "--workspace", ws)
	if code != ExitFailure || !strings.Contains(errs, "is the server at "+dead+" running?") {
		t.Errorf("refused: exit %d: %s", code, errs)
	}
	_, errs, code = runCLI(t, env, "--base-url", dead, "models", "--workspace", ws)
	if code != ExitFailure || !strings.Contains(errs, "is the server at "+dead+" running?") {
		t.Errorf("models, refused: exit %d: %s", code, errs)
	}
}
