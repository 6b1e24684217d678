package cli

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// TestConsoleLines: exec's stderr logger writes one readable "scv:" line
// per record: the provider retry as a sentence, other records as message
// and attributes, control characters made visible.
func TestConsoleLines(t *testing.T) {
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want string
	}{
		{"retry with status", func(l *slog.Logger) {
			l.Warn(retryMessage, "attempt", 1, "next_attempt", 2, "max_attempts", 4, "wait", 2*time.Second, "status", 503, "error", "busy")
		}, "scv: provider returned 503, retrying in 2s (attempt 2/4)\n"},
		{"retry without status", func(l *slog.Logger) {
			l.Warn(retryMessage, "attempt", 1, "next_attempt", 2, "max_attempts", 3, "wait", 1234*time.Millisecond, "status", 0, "error", "connection refused")
		}, "scv: provider request failed (connection refused), retrying in 1.2s (attempt 2/3)\n"},
		{"warning", func(l *slog.Logger) { l.Warn("reconcile delegations", "err", "boom\x1b[2J") }, "scv: warning: reconcile delegations (err=boom␛[2J)\n"},
		{"with attrs and group", func(l *slog.Logger) { l.With("a", 1).WithGroup("g").Error("failed", "b", "x") }, "scv: error: failed (a=1, g.b=x)\n"},
		{"info below the level", func(l *slog.Logger) { l.Info("quiet") }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.log(slog.New(&consoleHandler{w: &b, level: slog.LevelWarn, mu: &sync.Mutex{}}))
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
	var b bytes.Buffer
	g := &globals{stdio: Stdio{Err: &b}, env: Env{}}
	g.consoleLogger(true).Warn(retryMessage, "status", 503)
	if b.Len() != 0 {
		t.Errorf("--quiet logger wrote %q", b.String())
	}
}
