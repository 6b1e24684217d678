package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/termtext"
)

// consoleLogger logs for a person reading stderr (scv exec, tools, mcp,
// sessions, agents, undo, models): one "scv:"
// line per record, warnings and errors only (errors only with quiet),
// debug records too with SCV_LOG=debug.
func (g *globals) consoleLogger(quiet bool) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case g.env["SCV_LOG"] == "debug":
		level = slog.LevelDebug
	case quiet:
		level = slog.LevelError
	}
	return slog.New(&consoleHandler{w: g.stdio.Err, level: level, mu: &sync.Mutex{}})
}

// consoleHandler writes records as readable lines: "scv: message (k=v,
// ...)", and the provider's retry warning as one sentence.
type consoleHandler struct {
	w     io.Writer
	level slog.Level
	mu    *sync.Mutex
	attrs []slog.Attr
	group string
}

func (h *consoleHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *consoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *consoleHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

func (h *consoleHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := append([]slog.Attr(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		attrs = append(attrs, a)
		return true
	})
	line := consoleLine(r.Level, r.Message, attrs)
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintf(h.w, "scv: %s\n", termtext.Line(line))
	return err
}

// retryMessage is the message internal/model logs before it retries a
// model request.
const retryMessage = "model request failed; retrying"

// consoleLine renders one record.
func consoleLine(level slog.Level, msg string, attrs []slog.Attr) string {
	get := func(key string) (slog.Value, bool) {
		for _, a := range attrs {
			if a.Key == key {
				return a.Value.Resolve(), true
			}
		}
		return slog.Value{}, false
	}
	if msg == retryMessage {
		var b strings.Builder
		if st, ok := get("status"); ok && st.Kind() == slog.KindInt64 && st.Int64() > 0 {
			fmt.Fprintf(&b, "provider returned %d", st.Int64())
		} else if e, ok := get("error"); ok {
			fmt.Fprintf(&b, "provider request failed (%s)", e.String())
		} else {
			b.WriteString("provider request failed")
		}
		if w, ok := get("wait"); ok && w.Kind() == slog.KindDuration {
			fmt.Fprintf(&b, ", retrying in %s", w.Duration().Round(100*time.Millisecond))
		} else {
			b.WriteString(", retrying")
		}
		next, okN := get("next_attempt")
		most, okM := get("max_attempts")
		if okN && okM {
			fmt.Fprintf(&b, " (attempt %d/%d)", next.Int64(), most.Int64())
		}
		return b.String()
	}
	if msg == app.DeprecatedMessage {
		if st, ok := get("setting"); ok {
			return "warning: " + st.String()
		}
	}
	var b strings.Builder
	if level >= slog.LevelError {
		b.WriteString("error: ")
	} else if level >= slog.LevelWarn {
		b.WriteString("warning: ")
	}
	b.WriteString(msg)
	if len(attrs) > 0 {
		b.WriteString(" (")
		for i, a := range attrs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s=%s", a.Key, a.Value.Resolve().String())
		}
		b.WriteString(")")
	}
	return b.String()
}
