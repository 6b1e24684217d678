package clawbot

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/redact"
	"github.com/scv-agent/scv/internal/textcut"
)

// Reply limits: one WeChat message holds at most MaxChunkChars characters,
// and at most MaxAnswerBytes of one answer are sent.
const (
	MaxChunkChars  = 4000
	MaxAnswerBytes = 64 << 10
)

// cutNote ends an answer that was longer than MaxAnswerBytes.
const cutNote = "\n\n[The rest of this answer was cut: it was longer than 64 KiB.]"

// Short replies for work that ended without an answer. They are fixed
// texts: nothing of an error message, a tool or the host reaches WeChat.
const (
	textRestarted = "SCV restarted before finishing this; please resend."
	textTimedOut  = "Sorry, this took too long and was stopped."
	textCancelled = "Sorry, this was cancelled before an answer."
	textModel     = "Sorry, the model could not answer this right now. Please try again later."
	textTooLong   = "Sorry, this conversation has grown too long for the model. It starts afresh after 30 minutes without messages."
	textTooMuch   = "Sorry, this needed too many steps and was stopped before an answer."
	textFailed    = "Sorry, something went wrong while answering this. Please try again."
	textNoSession = "Sorry, SCV could not start a conversation for this right now. Please try again later."
	textEmpty     = "(The answer was empty.)"
	// textBusy answers a message past the bridge's bounds: it was not
	// read, and resending it later works.
	textBusy           = "Sorry, too many messages are waiting right now, so this one was not read. Please send it again in a few minutes."
	textMessageTooLong = "Sorry, this message is too long for me to read. Please send a shorter one."
)

// failureText is the reply to a turn that failed with a turn.failed code.
func failureText(code string) string {
	switch code {
	case "provider_error":
		return textModel
	case "context_limit", "history_limit":
		return textTooLong
	case "step_limit", "tool_limit", "response_limit":
		return textTooMuch
	}
	return textFailed
}

// Sanitizer removes from an answer what must not leave the host through a
// chat: key values, credential-shaped text, host paths and control
// characters.
type Sanitizer struct {
	// secrets are exact values (the bot token, configured keys), replaced
	// in any letter case, URL-encoded too.
	secrets redact.Values
	// paths are host path prefixes and what they become, longest first.
	paths [][2]string
}

// NewSanitizer builds a sanitizer. secrets shorter than 8 bytes are
// ignored (they would match ordinary words); paths maps host directories
// (the workspace, the SCV home, the user's home) to what is shown instead.
func NewSanitizer(secrets []string, paths map[string]string) *Sanitizer {
	s := &Sanitizer{secrets: redact.NewValues(secrets)}
	for dir, as := range paths {
		dir = strings.TrimRight(dir, "/")
		if len(dir) > 1 {
			s.paths = append(s.paths, [2]string{dir, as})
		}
	}
	slices.SortFunc(s.paths, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	return s
}

// Clean returns text fit to send.
func (s *Sanitizer) Clean(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = redact.Credentials(s.secrets.Redact(text))
	for _, p := range s.paths {
		text = strings.ReplaceAll(text, p[0], p[1])
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return -1
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf) && r != '\u200d':
			return -1 // keep zero-width joiners: emoji sequences use them
		}
		return r
	}, text)
}

// Split cuts an answer into messages: at most MaxAnswerBytes of it are
// kept (the rest replaced by a note), then it is split into chunks of at
// most MaxChunkChars characters, each break at a line end or a space near
// the limit when there is one, and never inside a character.
func Split(answer string) []string {
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return nil
	}
	if len(answer) > MaxAnswerBytes {
		answer = strings.TrimRightFunc(textcut.Prefix(answer, MaxAnswerBytes-len(cutNote)), unicode.IsSpace) + cutNote
	}
	var out []string
	for answer != "" {
		if utf8.RuneCountInString(answer) <= MaxChunkChars {
			out = append(out, answer)
			break
		}
		// end is the byte offset after MaxChunkChars characters.
		end, n := 0, 0
		for i := range answer {
			if n == MaxChunkChars {
				end = i
				break
			}
			n++
		}
		at := end
		// Prefer a line end, then a space, in the last quarter.
		floor := end * 3 / 4
		if i := strings.LastIndexByte(answer[:end], '\n'); i > floor {
			at = i + 1
		} else if i := strings.LastIndexByte(answer[:end], ' '); i > floor {
			at = i + 1
		}
		chunk := strings.TrimRightFunc(answer[:at], unicode.IsSpace)
		if chunk != "" {
			out = append(out, chunk)
		}
		answer = strings.TrimLeftFunc(answer[at:], unicode.IsSpace)
	}
	return out
}
