package acp

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/proto"
)

// The mapping of SCV's events, risks and codes onto ACP's (docs/acp.md has
// the table).

// kindOf is the ACP kind of a call of tool name with risk (empty while the
// risk is not known yet: a proposal carries none). SCV's own tools have a
// kind of their own; any other tool (an MCP server's) takes its risk's.
func kindOf(name, risk string) string {
	switch name {
	case "read", "read_skill":
		return KindRead
	case "write":
		return KindEdit
	case "bash":
		return KindExecute
	case "web_fetch":
		return KindFetch
	case "web_search":
		return KindSearch
	case "todo_write":
		return KindThink
	}
	switch risk {
	case "read_only":
		return KindRead
	case "filesystem":
		return KindEdit
	case "process", "delegate":
		return KindExecute
	case "network":
		return KindFetch
	}
	return KindOther
}

// stopReason is the stopReason of a turn that ended with ev, or "" with
// the error the prompt is answered with instead.
func stopReason(ev proto.Event) (string, *rpcError) {
	switch e := ev.(type) {
	case *proto.TurnCompleted:
		return StopEndTurn, nil
	case *proto.TurnCancelled:
		return StopCancelled, nil
	case *proto.TurnFailed:
		switch e.Code {
		case proto.FailStep:
			return StopMaxTurnRequests, nil
		case proto.FailContext, proto.FailHistory, proto.FailResponse, proto.FailTool:
			return StopRefusal, nil
		}
		return "", &rpcError{Code: CodeInternalError, Message: "turn failed (" + e.Code + "): " + e.Message, Data: map[string]string{"scvCode": e.Code}}
	}
	return "", errInternal("the turn ended with %s", ev.EventType())
}

// maxTitleBytes bounds a tool call's title.
const maxTitleBytes = 400

// proposedTitle is a call's title before SCV's summary is known: the tool
// and its main argument.
func proposedTitle(name string, args json.RawMessage) string {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	for _, k := range []string{"command", "path", "url", "query", "prompt", "name"} {
		if v, ok := a[k].(string); ok && v != "" {
			return clipLine(name + ": " + v)
		}
	}
	return name
}

// clipLine is s on one line (newlines as spaces) within maxTitleBytes.
func clipLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, maxTitleBytes)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut + "…"
}

// locations are the files a file tool's call touches, absolute.
func locations(name string, args json.RawMessage, cwd string) []location {
	if name != "read" && name != "write" {
		return nil
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return nil
	}
	return []location{{Path: absPath(cwd, a.Path)}}
}

func absPath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// maxOutputBytes bounds the text output a tool_call_update carries (the
// model's copy is bounded by tools.output_limit_bytes already).
const maxOutputBytes = 16 << 10

// outputText is a call's result as the editor shows it: a bash result's
// output (and its exit status), any other result's text, bounded.
func outputText(name, output string) string {
	if name == "bash" {
		var r struct {
			ExitCode *int   `json:"exit_code"`
			TimedOut bool   `json:"timed_out"`
			Output   string `json:"output"`
		}
		if json.Unmarshal([]byte(output), &r) == nil {
			text := r.Output
			switch {
			case r.TimedOut:
				text += "\n(timed out)"
			case r.ExitCode != nil && *r.ExitCode != 0:
				text += "\n(exit status " + strconv.Itoa(*r.ExitCode) + ")"
			}
			output = text
		}
	}
	if len(output) > maxOutputBytes {
		return clip(output, maxOutputBytes) + "\n… (" + strconv.Itoa(len(output)-maxOutputBytes) + " more bytes)"
	}
	return output
}

// writeArgs are the arguments of a write call the diff needs.
type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Mode    string `json:"mode"`
}

// writeDiff is the diff content of a write: the file's text before and
// after. The old text is rebuilt from SCV's unified diff of the planned
// change and the new content; nil when it cannot be (the diff was cut to
// its bounds, or there is none: a secret-like file, a binary one).
func writeDiff(cwd string, args json.RawMessage, d *proto.Diff) *toolCallContent {
	var a writeArgs
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return nil
	}
	c := &toolCallContent{Type: "diff", Path: absPath(cwd, a.Path), NewText: &a.Content}
	if a.Mode == "create" {
		return c // oldText absent: a new file
	}
	if d == nil {
		return nil
	}
	old, ok := reverseDiff(d, a.Content)
	if !ok {
		return nil
	}
	c.OldText = &old
	return c
}

var hunkHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@`) })

// cutLine matches a diff line cut to its bound.
var cutLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` … \(\+\d+ bytes on this line\)$`) })

// reverseDiff applies the unified diff d backwards to the new text: the
// file as it was. false when d is not whole or does not fit newText.
func reverseDiff(d *proto.Diff, newText string) (string, bool) {
	if d.Omitted > 0 || d.Note != "" || d.Text == "" {
		return "", false
	}
	newLines := strings.SplitAfter(newText, "\n")
	if newLines[len(newLines)-1] == "" {
		newLines = newLines[:len(newLines)-1]
	}
	var old strings.Builder
	pos := 0
	lines := strings.Split(strings.TrimSuffix(d.Text, "\n"), "\n")
	lastMinus := -1 // where the last '-' line ends in old
	inHunk := false
	for _, l := range lines {
		if cutLine().MatchString(l) {
			return "", false
		}
		if m := hunkHeader().FindStringSubmatch(l); m != nil {
			start, _ := strconv.Atoi(m[1])
			n := 1
			if m[2] != "" {
				n, _ = strconv.Atoi(m[2])
			}
			before := start - 1
			if n == 0 {
				before = start
			}
			if before < pos || before > len(newLines) {
				return "", false
			}
			for ; pos < before; pos++ {
				old.WriteString(newLines[pos])
			}
			inHunk = true
			continue
		}
		if !inHunk || l == "" {
			continue // the --- and +++ lines
		}
		switch l[0] {
		case ' ':
			if pos >= len(newLines) || strings.TrimSuffix(newLines[pos], "\n") != l[1:] {
				return "", false
			}
			old.WriteString(newLines[pos])
			pos++
			lastMinus = -1
		case '-':
			old.WriteString(l[1:] + "\n")
			lastMinus = old.Len()
		case '+':
			if pos >= len(newLines) || strings.TrimSuffix(newLines[pos], "\n") != l[1:] {
				return "", false
			}
			pos++
			lastMinus = -1
		case '\\':
			if lastMinus == old.Len() {
				s := old.String()
				old.Reset()
				old.WriteString(strings.TrimSuffix(s, "\n"))
				lastMinus = -1
			}
		default:
			return "", false
		}
	}
	for ; pos < len(newLines); pos++ {
		old.WriteString(newLines[pos])
	}
	return old.String(), true
}
