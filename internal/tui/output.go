package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// displayOutput turns a tool's output into what a row shows: the text of
// the known result shapes (docs/runtime.md, "Results of the file and shell
// tools") and short notes about it; other
// JSON is indented, plain text stays as it is.
func displayOutput(out string) (text string, notes []string) {
	trimmed := strings.TrimSpace(out)
	if !strings.HasPrefix(trimmed, "{") {
		return out, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(trimmed), &obj) != nil {
		return out, nil
	}
	str := func(k string) (string, bool) {
		var s string
		return s, json.Unmarshal(obj[k], &s) == nil && obj[k] != nil
	}
	flag := func(k string) bool {
		var b bool
		return json.Unmarshal(obj[k], &b) == nil && b
	}
	if s, ok := str("output"); ok && obj["exit_code"] != nil { // bash
		var code *int
		json.Unmarshal(obj["exit_code"], &code)
		switch {
		case code == nil:
			notes = append(notes, "killed by a signal")
		case *code != 0:
			notes = append(notes, fmt.Sprintf("exit %d", *code))
		}
		if flag("timed_out") {
			notes = append(notes, "timed out")
		}
		if flag("truncated") {
			notes = append(notes, "output truncated")
		}
		if sb, ok := str("sandbox"); ok && sb != "" {
			notes = append(notes, sb)
		}
		return s, notes
	}
	if s, ok := str("content"); ok { // read
		if flag("truncated") {
			notes = append(notes, "more bytes follow in the file")
		}
		return s, notes
	}
	if p, ok := str("path"); ok && obj["sha256"] != nil { // write
		var n int64
		json.Unmarshal(obj["bytes"], &n)
		return fmt.Sprintf("wrote %d bytes to %s", n, p), nil
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(trimmed), "", "  ") != nil {
		return out, nil
	}
	return b.String(), nil
}
