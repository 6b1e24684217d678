package mcp

import (
	"bytes"
	"log/slog"
	"sync"

	"github.com/scv-agent/scv/internal/proc"
	"github.com/scv-agent/scv/internal/tool"
)

// Bounds of what a stdio server's stderr puts in the log, per process.
const (
	stderrMaxLines    = 200
	stderrMaxLineLen  = 1024
	stderrTailBytes   = 2048
	stderrPendingCap  = 4096
	stderrLogMessage  = "mcp server stderr"
	stderrDropMessage = "mcp server stderr: further lines not logged"
)

// stderrLog logs a server's stderr line by line, bounded in lines and line
// length, and keeps its tail for error messages.
type stderrLog struct {
	logger  *slog.Logger
	server  string
	tail    *proc.Tail
	mu      sync.Mutex
	pending []byte
	lines   int
	dropped bool
}

func newStderrLog(logger *slog.Logger, server string) *stderrLog {
	return &stderrLog{logger: logger, server: server, tail: proc.NewTail(stderrTailBytes)}
}

// Write never fails, so the server never blocks on its stderr.
func (s *stderrLog) Write(p []byte) (int, error) {
	_, _ = s.tail.Write(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, p...)
	for {
		i := bytes.IndexByte(s.pending, '\n')
		if i < 0 {
			break
		}
		s.line(s.pending[:i])
		s.pending = s.pending[i+1:]
	}
	if len(s.pending) > stderrPendingCap {
		s.line(s.pending)
		s.pending = s.pending[:0]
	}
	if len(s.pending) == 0 {
		s.pending = nil
	}
	return len(p), nil
}

func (s *stderrLog) line(b []byte) {
	b = bytes.TrimRight(b, "\r")
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	if s.lines >= stderrMaxLines {
		if !s.dropped {
			s.dropped = true
			s.logger.Warn(stderrDropMessage, "server", s.server, "logged_lines", s.lines)
		}
		return
	}
	s.lines++
	line := string(b)
	if len(line) > stderrMaxLineLen {
		line = tool.TruncateUTF8(line, stderrMaxLineLen) + "…"
	}
	s.logger.Info(stderrLogMessage, "server", s.server, "line", line)
}

// Tail is the last bytes the server wrote on stderr, for error messages.
func (s *stderrLog) Tail() string {
	return string(bytes.TrimSpace([]byte(s.tail.String())))
}
