package tui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestBellAndCopyUnderTmux: in the real binary, an approval that waits
// longer than tui.notify_after_seconds rings the terminal's bell (tmux
// flags the pane's window, which is not the one shown), and /copy code
// sets the terminal's clipboard through OSC 52 (tmux keeps it as a paste
// buffer).
func TestBellAndCopyUnderTmux(t *testing.T) {
	scv, home, ws := e2eSetup(t)
	fake := modeltest.New(t)
	fake.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo bell-test"}`))
	fake.Script(modeltest.Text("Use this:\n\n```sh\ngo test ./copied/...\n```\n"))
	writeConfig(t, home, fake.URL())
	appendConfig(t, home, "\n[tui]\nnotify = \"bell\"\nnotify_after_seconds = 1\n")
	startDaemon(t, scv, home)
	p := startSCV(t, 100, 30, scv, home, ws)
	p.tmux("set-option", "-g", "set-clipboard", "on")
	p.tmux("set-option", "-g", "monitor-bell", "on")
	p.waitFor("fake-model", "connected", "ready")
	p.submit("ring when you need me")
	// Another window in front at once (the bell comes at least a second
	// after the approval): a bell in the TUI's window flags it.
	p.tmux("new-window", "-d", "-t", "e2e:9", "sleep 60")
	p.tmux("select-window", "-t", "e2e:9")
	tuiWindow := func() string { return p.tmux("capture-pane", "-p", "-t", "e2e:0") }
	if !waitUntil(15*time.Second, 50*time.Millisecond, func() bool { return strings.Contains(tuiWindow(), "Approve this tool call?") }) {
		t.Fatalf("no approval shown:\n%s", tuiWindow())
	}
	if !waitUntil(15*time.Second, 100*time.Millisecond, func() bool {
		return p.tmux("display-message", "-p", "-t", "e2e:0", "#{window_bell_flag}") == "1\n"
	}) {
		t.Fatalf("no bell within 15 s of the approval waiting (notify_after_seconds = 1):\n%s", tuiWindow())
	}
	p.tmux("select-window", "-t", "e2e:0")
	p.keys("y")
	p.waitFor("go test ./copied/...", "ready")
	p.submit("/copy code")
	p.waitFor("copied the last code block")
	var buf string
	if !waitUntil(10*time.Second, 100*time.Millisecond, func() bool {
		buf, _ = p.tryTmux("show-buffer")
		return strings.Contains(buf, "go test ./copied/...")
	}) {
		t.Fatalf("the clipboard (tmux buffer) holds %q, want the code block", buf)
	}
	p.quit()
}
