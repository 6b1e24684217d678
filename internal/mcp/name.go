package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Prefix starts the name of every MCP tool SCV offers.
const Prefix = "mcp__"

// MaxNameLen is the longest tool name model APIs accept.
const MaxNameLen = 64

// ToolName is the name SCV offers a server's tool under:
// mcp__<server>__<tool>, with every character model APIs refuse (anything
// but ASCII letters, digits, '_' and '-') replaced by '_'. A name longer
// than 64 characters keeps its first 55 and ends with '_' and 8 hex digits
// of a hash of the unsanitized name, so two long names stay apart.
func ToolName(server, tool string) string {
	full := Prefix + server + "__" + tool
	var b strings.Builder
	b.Grow(len(full))
	for _, r := range full {
		if r < 0x80 && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) <= MaxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(full))
	return name[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
}
