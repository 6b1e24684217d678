package agents

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/scv-agent/scv/internal/textcut"
	"github.com/scv-agent/scv/internal/tool"
)

// Format is how an agent CLI prints its run on stdout.
type Format string

// Output formats of the known CLIs.
const (
	// FormatText: stdout is the reply.
	FormatText Format = "text"
	// FormatClaude: Claude Code `--output-format stream-json --verbose`.
	FormatClaude Format = "claude-stream-json"
	// FormatCodex: `codex exec --json`.
	FormatCodex Format = "codex-json"
	// FormatPi: `pi --mode json`.
	FormatPi Format = "pi-json"
)

// MaxLineBytes is the longest stdout line that is parsed; longer lines are
// skipped without being held in memory.
const MaxLineBytes = 4 << 20

// Usage is the token usage a run reported, normalised across CLIs.
type Usage struct {
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"`
}

func (u *Usage) add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedInputTokens += o.CachedInputTokens
}

// outcome is what a stream told about its run.
type outcome struct {
	Reply     string
	HaveReply bool
	Usage     *Usage
	// Failed says the stream itself reported a failed run.
	Failed bool
	// ErrMsg is the reported error (a failure message, or the last notice).
	ErrMsg string
	// ErrCode is a machine-readable error class (Claude's assistant.error).
	ErrCode string
	// SawJSON says at least one line decoded as a JSON object.
	SawJSON bool
	// Text is the head of raw stdout (bounded), TextTruncated says more came.
	Text          string
	TextTruncated bool
	// SkippedLines counts lines over MaxLineBytes.
	SkippedLines int
	// SessionID is the CLI's own id of its session as the stream reported
	// it (Claude's system/init, Codex's thread.started, pi's session
	// event): what a later call resumes.
	SessionID string
}

// parser consumes stdout as it arrives (it is an io.Writer) and keeps only
// the reply, usage and error, in bounded memory: at most one line of up to
// MaxLineBytes plus textLimit bytes of raw text.
type parser struct {
	format    Format
	textLimit int

	line     []byte
	skipping bool
	text     []byte
	out      outcome

	// pi: outcome of the last assistant message_end.
	piStop, piErr string

	// progress, when set, is told what the agent is doing (progress.go).
	progress func(string)
}

func newParser(f Format, textLimit int) *parser {
	if textLimit <= 0 {
		textLimit = 64 << 10
	}
	return &parser{format: f, textLimit: textLimit}
}

// Write splits b into lines; it never fails.
func (p *parser) Write(b []byte) (int, error) {
	n := len(b)
	p.keepText(b)
	if p.format == FormatText {
		return n, nil
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !p.skipping {
			if len(p.line)+len(chunk) > MaxLineBytes {
				p.skipping = true
				p.line = p.line[:0]
				p.out.SkippedLines++
			} else {
				p.line = append(p.line, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if !p.skipping {
			p.handleLine(p.line)
		}
		p.skipping = false
		p.line = p.line[:0]
		if cap(p.line) > 1<<20 {
			p.line = nil // do not pin a huge buffer after a huge line
		}
		b = b[i+1:]
	}
	return n, nil
}

func (p *parser) keepText(b []byte) {
	room := p.textLimit - len(p.text)
	if len(b) > room {
		p.out.TextTruncated = true
		b = b[:max(room, 0)]
	}
	p.text = append(p.text, b...)
}

// finish flushes a final unterminated line and returns the outcome.
func (p *parser) finish() outcome {
	if p.format != FormatText && !p.skipping && len(p.line) > 0 {
		p.handleLine(p.line)
		p.line = nil
	}
	if p.format == FormatPi && p.piStop == "error" {
		p.out.Failed = true
		p.out.ErrMsg = p.piErr
	}
	text, cut := boundText(string(p.text), p.textLimit)
	if p.out.TextTruncated {
		text = textcut.TrimEnd(text)
	}
	p.out.Text = text
	p.out.TextTruncated = p.out.TextTruncated || cut
	return p.out
}

func (p *parser) handleLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return
	}
	if !p.out.SawJSON {
		// Validating every line would cost more than all decoding; once the
		// stream has proved to be JSON, a bad line just fails to decode.
		if !json.Valid(line) {
			return
		}
		p.out.SawJSON = true
	}
	// Cheap substring filters first: most lines (deltas, tool output) are
	// events SCV ignores, and decoding them would dominate the cost.
	switch p.format {
	case FormatClaude:
		if bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"error"`)) || bytes.Contains(line, []byte(`"init"`)) {
			p.claudeEvent(line)
		}
	case FormatCodex:
		if bytes.Contains(line, []byte(`"agent_message"`)) || bytes.Contains(line, []byte(`"turn.`)) || bytes.Contains(line, []byte(`"error"`)) || bytes.Contains(line, []byte(`"thread.started"`)) {
			p.codexEvent(line)
		}
	case FormatPi:
		if bytes.Contains(line, []byte(`"message_end"`)) {
			p.piEvent(line)
		} else if p.out.SessionID == "" && bytes.Contains(line, []byte(`"session"`)) {
			p.piSession(line)
		}
	}
	if p.progress != nil {
		p.progressEvent(line)
	}
}

func (p *parser) piSession(line []byte) {
	var ev struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal(line, &ev) == nil && ev.Type == "session" {
		p.out.SessionID = ev.ID
	}
}

func (p *parser) claudeEvent(line []byte) {
	var ev struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		Error     any    `json:"error"`
		IsError   bool   `json:"is_error"`
		Result    string `json:"result"`
		Usage     *struct {
			Input     int64 `json:"input_tokens"`
			Output    int64 `json:"output_tokens"`
			CacheRead int64 `json:"cache_read_input_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" && ev.SessionID != "" {
			p.out.SessionID = ev.SessionID
		}
	case "assistant":
		if code, ok := ev.Error.(string); ok && code != "" {
			p.out.ErrCode = code
		}
	case "result":
		p.out.Reply, p.out.HaveReply = ev.Result, true
		p.out.Failed = ev.IsError
		if ev.IsError {
			p.out.ErrMsg = ev.Result
		}
		if ev.Usage != nil {
			p.out.Usage = &Usage{InputTokens: ev.Usage.Input, OutputTokens: ev.Usage.Output, CachedInputTokens: ev.Usage.CacheRead}
		}
	}
}

func (p *parser) codexEvent(line []byte) {
	var ev struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
		Item     struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"item"`
		Usage struct {
			Input  int64 `json:"input_tokens"`
			Cached int64 `json:"cached_input_tokens"`
			Output int64 `json:"output_tokens"`
		} `json:"usage"`
		// Error is an object in turn.failed; Message is top-level in error.
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "thread.started":
		p.out.SessionID = ev.ThreadID
	case "item.completed":
		if ev.Item.Type == "agent_message" {
			p.out.Reply, p.out.HaveReply = ev.Item.Text, true
		}
	case "turn.completed":
		if p.out.Usage == nil {
			p.out.Usage = &Usage{}
		}
		p.out.Usage.add(Usage{InputTokens: ev.Usage.Input, OutputTokens: ev.Usage.Output, CachedInputTokens: ev.Usage.Cached})
	case "turn.failed":
		p.out.Failed = true
		p.out.ErrMsg = ""
		if e, ok := ev.Error.(map[string]any); ok {
			p.out.ErrMsg, _ = e["message"].(string)
		}
	case "error":
		// Often only a retry notice; it fails nothing alone, but it is the
		// best explanation if the process then exits non-zero.
		if !p.out.Failed {
			p.out.ErrMsg = ev.Message
		}
	}
}

// piMessage is the message of pi's message_end event.
type piMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Usage *struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		CacheRead int64 `json:"cacheRead"`
	} `json:"usage"`
	StopReason   string `json:"stopReason"`
	ErrorMessage string `json:"errorMessage"`
}

// piAssistantEnd decodes line as pi's message_end event of an assistant
// message; ok is false for any other line.
func piAssistantEnd(line []byte) (m piMessage, ok bool) {
	var ev struct {
		Type    string    `json:"type"`
		Message piMessage `json:"message"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "message_end" || ev.Message.Role != "assistant" {
		return piMessage{}, false
	}
	return ev.Message, true
}

func (p *parser) piEvent(line []byte) {
	m, ok := piAssistantEnd(line)
	if !ok {
		return
	}
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	p.out.Reply, p.out.HaveReply = b.String(), true
	if u := m.Usage; u != nil {
		if p.out.Usage == nil {
			p.out.Usage = &Usage{}
		}
		p.out.Usage.add(Usage{InputTokens: u.Input, OutputTokens: u.Output, CachedInputTokens: u.CacheRead})
	}
	p.piStop, p.piErr = m.StopReason, m.ErrorMessage
}

// boundText cuts s to at most limit bytes on a character boundary.
func boundText(s string, limit int) (string, bool) {
	if limit <= 0 || len(s) <= limit {
		return s, false
	}
	return tool.TruncateUTF8(s, limit), true
}

// tailBuffer keeps the last n bytes written to it.
type tailBuffer struct {
	n     int
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.total += int64(len(b))
	if len(b) >= t.n {
		t.buf = append(t.buf[:0], b[len(b)-t.n:]...)
		return len(b), nil
	}
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.n; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// String is the tail starting on a character boundary.
func (t *tailBuffer) String() string {
	b := t.buf
	if t.total > int64(len(b)) {
		b = textcut.TrimStart(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
