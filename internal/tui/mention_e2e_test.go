package tui_test

import (
	"strings"
	"testing"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestMentionUnderTmux: in the real binary, `@` and a fragment open the
// completion of workspace paths (a .gitignored one is not offered), Tab
// picks one, and the sent turn attaches the file's content for the model
// while the transcript shows only chips; a mentioned secret-like file is
// refused with its reason and its bytes never reach the model.
func TestMentionUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	writeFile(t, ws, "src/widget.go", "package src // widget-marker-31\n")
	writeFile(t, ws, "vendor/widget_vendored.go", "package vendor\n")
	writeFile(t, ws, ".gitignore", "vendor/\n")
	writeFile(t, ws, ".env", "TOKEN=tmux-secret-57\n")
	fake := modeltest.New(t)
	fake.Script(modeltest.Text("Explained the widget."))
	p := openTUI(t, scv, home, ws, fake, 100, 30)
	p.text("explain @widg")
	s := p.waitFor("▸ @src/widget.go", "tab/enter complete")
	if strings.Contains(s, "vendor") {
		t.Errorf("the completion offers a .gitignored path:\n%s", s)
	}
	p.keys("Tab")
	p.waitFor("> explain @src/widget.go")
	p.submit("and @.env ")
	s = p.waitFor("Explained the widget.", "[@src/widget.go] [@.env ✗]", "@.env not attached: it looks like it holds secrets", "ready")
	if strings.Contains(s, "widget-marker-31") {
		t.Errorf("the transcript shows the attached content instead of a chip:\n%s", s)
	}
	got := lastUserTexts(fake)
	if len(got) != 1 || !strings.HasPrefix(got[0], "explain @src/widget.go and @.env") || !strings.Contains(got[0], "widget-marker-31") {
		t.Errorf("the model did not get the mentioned file's content: %q", got)
	}
	if strings.Contains(string(fake.Requests()[0].Raw), "tmux-secret-57") {
		t.Error("the secret-like file's content reached the model")
	}
	p.quit()
}
