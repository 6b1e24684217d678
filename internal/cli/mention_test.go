package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// `scv exec "explain @main.go"` attaches main.go to the prompt the model
// gets; a mentioned secret-like file, binary file and image are named as
// not attached (with why) and their bytes never reach the model; a
// mentioned image file reaches it as an input image of the prompt, while
// one that is no image by its content is refused with why; stderr says
// what was attached.
func TestExecAttachesMentions(t *testing.T) {
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("explained"))
	home, ws := t.TempDir(), t.TempDir()
	files := map[string]string{
		"main.go":     "package main\n\nfunc main() { println(\"mention-marker-42\") }\n",
		".env":        "API_TOKEN=env-secret-value-77\n",
		"blob.bin":    "bin\x00ary-secret-88",
		"fake.png":    "\x89PNG image-bytes-99",
		"shot.png":    realPNG,
		"pkg/a.go":    "package pkg\n",
		"pkg/b/c.txt": "c\n",
	}
	for name, content := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n", fake.URL())
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := Env{"HOME": t.TempDir(), "OPENAI_API_KEY": "sk-test", "PATH": "/usr/bin:/bin"}
	var out, errb bytes.Buffer
	prompt := "explain @main.go, compare @.env @blob.bin @fake.png and @pkg, look at @shot.png; mail me at a@main.go"
	code := Run(t.Context(), []string{"--scv-home", home, "exec", "--workspace", ws, prompt}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	body := string(reqs[0].Raw)
	user := fmt.Sprint(reqs[0].InputItems()[0]["content"])
	for _, want := range []string{"mention-marker-42", `\u003cfile path=\"main.go\" bytes=\"59\"\u003e`, "explain @main.go", "a.go", "b/"} {
		if !strings.Contains(body, want) && !strings.Contains(body, strings.ReplaceAll(want, `\u003c`, "<")) {
			t.Errorf("the model request lacks %q; its user message:\n%s", want, user)
		}
	}
	for _, never := range []string{"env-secret-value-77", "ary-secret-88", "image-bytes-99"} {
		if strings.Contains(body, never) {
			t.Errorf("the model request carries %q, which must not be attached; its user message:\n%s", never, user)
		}
	}
	stderr := errb.String()
	for _, want := range []string{
		"attached @main.go (59 bytes)",
		"not attached @.env: it looks like it holds secrets",
		"not attached @blob.bin: binary",
		"not attached @fake.png: image fake.png is ",
		"attached @shot.png (image, 112 B)",
		"attached @pkg/ (",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if ims := reqs[0].Images(); len(ims) != 1 || ims[0].MediaType != "image/png" || string(ims[0].Data) != realPNG {
		t.Errorf("the model got images %+v, want shot.png's bytes", ims)
	}
	if strings.Contains(stderr, "@main.go,") || strings.Contains(stderr, "a@main.go") {
		t.Errorf("a mention kept its punctuation, or a@… counted as one:\n%s", stderr)
	}
	if got := out.String(); got != "explained\n" {
		t.Errorf("stdout = %q", got)
	}
}

// realPNG starts as a PNG file does: 112 bytes, 100 of them pixels.
var realPNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x01", 96)
