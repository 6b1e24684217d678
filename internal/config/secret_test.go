package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretRedacts(t *testing.T) {
	s := Secret("sk-live-123")
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("m", "key", s)
	js, _ := json.Marshal(struct{ K Secret }{s})
	outs := map[string]string{
		"%s": fmt.Sprintf("%s", s), "%v": fmt.Sprintf("%v", s), "%q": fmt.Sprintf("%q", s),
		"%x": fmt.Sprintf("%x", s), "%#v": fmt.Sprintf("%#v", s), "%+v struct": fmt.Sprintf("%+v", struct{ K Secret }{s}),
		"String": s.String(), "json": strings.ReplaceAll(strings.ReplaceAll(string(js), `\u003c`, "<"), `\u003e`, ">"), "slog": logBuf.String(),
		"Provider %v": fmt.Sprintf("%v", Provider{APIKey: s, Headers: map[string]Secret{"A": s}}),
	}
	for name, out := range outs {
		if strings.Contains(out, "sk-live") || strings.Contains(out, fmt.Sprintf("%x", "sk-live")) || !strings.Contains(out, Redacted) {
			t.Errorf("%s: %q", name, out)
		}
	}
	if s.Reveal() != "sk-live-123" {
		t.Errorf("Reveal = %q", s.Reveal())
	}
	if Secret("").String() != "" {
		t.Errorf("empty secret prints %q", Secret("").String())
	}
}

func TestInlineAPIKey(t *testing.T) {
	body := "[providers.openai]\napi_key = \"sk-inline-1\"\n"
	t.Run("user file 0600", func(t *testing.T) {
		f := newFixture(t)
		f.user(t, body)
		l := mustLoad(t, f.opts())
		k, err := l.Config.APIKey(map[string]string{"OPENAI_API_KEY": "sk-env"})
		if err != nil || k.Reveal() != "sk-inline-1" {
			t.Errorf("APIKey = %q, %v; want the inline key", k.Reveal(), err)
		}
	})
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		t.Run(fmt.Sprintf("user file %04o", mode), func(t *testing.T) {
			f := newFixture(t)
			path := writeFile(t, f.home.ConfigFile(), body, mode)
			_, err := Load(f.opts())
			want := fmt.Sprintf("invalid configuration: %s:2: providers.openai.api_key: the user config %s has mode %04o, readable by group or others, and holds an inline key; the key is not used. Run chmod 600 %s, or move the key into the environment variable named by api_key_env",
				path, path, mode, path)
			if err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant    %s", err, want)
			}
			if err != nil && strings.Contains(err.Error(), "sk-inline") {
				t.Error("error shows the key")
			}
		})
	}
	t.Run("brave key in a 0644 user file", func(t *testing.T) {
		f := newFixture(t)
		path := writeFile(t, f.home.ConfigFile(), "[web]\nbrave_api_key = \"b\"\n", 0o644)
		_, probs := problems(t, f.opts())
		if len(probs) != 1 || probs[0].Key != "web.brave_api_key" || !strings.Contains(probs[0].Msg, "mode 0644") || probs[0].Source != path {
			t.Errorf("problems = %v", probs)
		}
	})
	t.Run("empty inline key in a 0644 user file is no key", func(t *testing.T) {
		f := newFixture(t)
		writeFile(t, f.home.ConfigFile(), "[providers.openai]\napi_key = \"\"\n", 0o644)
		mustLoad(t, f.opts())
	})
	t.Run("--config file", func(t *testing.T) {
		f := newFixture(t)
		opts := f.opts()
		opts.ExtraFile = writeFile(t, f.dir+"/extra.toml", body, 0o600)
		_, probs := problems(t, opts)
		want := []Problem{{opts.ExtraFile, 2, "providers.openai.api_key", "an inline key is allowed only in the user config ($SCV_HOME/config.toml, mode 0600); name the environment variable that holds it with api_key_env instead"}}
		if diff := cmp.Diff(want, probs); diff != "" {
			t.Errorf("problems (-want +got):\n%s", diff)
		}
	})
}

func TestAPIKeyFromEnv(t *testing.T) {
	f := newFixture(t)
	f.user(t, "[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key_env = \"LOCAL_KEY\"\n[provider]\nactive = \"local\"\n")
	l := mustLoad(t, f.opts())
	k, err := l.Config.APIKey(map[string]string{"LOCAL_KEY": "lk", "OPENAI_API_KEY": "ok"})
	if err != nil || k.Reveal() != "lk" {
		t.Errorf("APIKey = %q, %v", k.Reveal(), err)
	}
	_, err = l.Config.APIKey(map[string]string{"OPENAI_API_KEY": "ok"})
	want := `provider "local" needs an API key: set the environment variable LOCAL_KEY (named by providers.local.api_key_env), or point api_key_env at the variable that holds it`
	if err == nil || err.Error() != want {
		t.Errorf("missing key: %v", err)
	}
}

func TestExplainNeverPrintsKeys(t *testing.T) {
	f := newFixture(t)
	f.user(t, `
[providers.openai]
api_key = "sk-inline-secret"
headers = { "X-Token" = "hdr-secret", "OpenAI-Organization" = "org-secret" }
[web]
brave_api_key = "brave-secret"
`)
	opts := f.opts()
	opts.Env["OPENAI_API_KEY"] = "env-secret"
	opts.Env["BRAVE_SEARCH_API_KEY"] = "env-brave-secret"
	l := mustLoad(t, opts)
	var all strings.Builder
	got := map[string]string{}
	for _, s := range l.Explain() {
		fmt.Fprintf(&all, "%s = %s  # %s\n", s.Key, s.Value, s.Origin)
		got[s.Key] = s.Value
	}
	if regexp.MustCompile(`[a-z]+-secret`).MatchString(all.String()) {
		t.Errorf("explain shows a secret:\n%s", all.String())
	}
	want := map[string]string{
		"providers.openai.api_key":                     Redacted,
		"providers.openai.headers.X-Token":             Redacted,
		"providers.openai.headers.OpenAI-Organization": Redacted,
		"web.brave_api_key":                            Redacted,
		"providers.openai.api_key_env":                 `"OPENAI_API_KEY"`,
		"web.brave_api_key_env":                        `"BRAVE_SEARCH_API_KEY"`,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["providers.openai.headers"]; ok {
		t.Error("headers listed as a whole besides its entries")
	}
}

// uncomment turns the template's "# key = value" lines into settings.
func uncomment(tmpl string) string {
	var out []string
	for _, line := range strings.Split(tmpl, "\n") {
		if strings.HasPrefix(line, "# ") {
			line = strings.TrimPrefix(line, "# ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func TestCommentedTemplate(t *testing.T) {
	tmpl := CommentedTemplate()
	f := newFixture(t)
	f.user(t, tmpl)
	l := mustLoad(t, f.opts())
	want := Defaults(f.home.SkillsDir())
	if diff := cmp.Diff(want, l.Config); diff != "" {
		t.Errorf("template as written (-want +got):\n%s", diff)
	}
	if len(l.origins) != 0 {
		t.Errorf("commented template sets keys: %v", l.origins)
	}
	// Uncommented, every setting line is the default: the template covers
	// every key with its default value.
	f.user(t, uncomment(tmpl))
	l = mustLoad(t, f.opts())
	if diff := cmp.Diff(want, l.Config); diff != "" {
		t.Errorf("uncommented template (-want +got):\n%s", diff)
	}
	set := map[string]bool{}
	for k := range l.origins {
		r, _ := resolve(strings.Split(k, "."))
		set[r.pattern] = true
	}
	for pattern, spec := range specs {
		if !set[pattern] && spec.example == "" {
			t.Errorf("template lacks a setting line for %s", pattern)
		}
		if !strings.Contains(tmpl, "## "+spec.doc) && !strings.Contains(tmpl, "-- "+spec.doc) {
			t.Errorf("template lacks the explanation of %s", pattern)
		}
	}
}
