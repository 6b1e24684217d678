package cli

import (
	"encoding/json"
	"io"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// What the command line prints. Much of it came from outside SCV: MCP
// servers' names and descriptions, models' answers, tool output, skill
// metadata, agent CLIs, WeChat messages, stored session titles. Run
// therefore gives every command stdout and stderr that pass through
// termtext.Writer (globals.stdio), so no escape sequence, C1 control,
// bidi override or invalid byte reaches the terminal however a command
// prints. Commands still print one-line fields with termtext.Line, so a
// newline in a name cannot forge a line of a listing.
//
// The raw streams (globals.raw) are for the few outputs that are not text
// for a person, each named in TestRawStreamsOnlyWhereNamed: the terminal
// UI (it draws the screen itself and makes its text visible on arrival),
// the protocol of `scv server --stdio`, a delegated agent's own sign-in
// (its CLI gets the terminal as if run directly), and a product written
// to a file or a pipe (productOut). JSON goes out through printJSON and
// printEvent, escaped by termtext.JSON, so it stays valid JSON of the same
// value through the visible writer.

// productOut is stdout for output that is the command's product (the
// answer of scv exec, a session export): made visible on a terminal,
// byte-exact into a file or a pipe, where it is data.
func (g *globals) productOut() io.Writer {
	if isTerminal(g.raw.Out) {
		return g.stdio.Out
	}
	return g.raw.Out
}

// printJSON writes v as one JSON line, escaped for the terminal.
func printJSON(w io.Writer, v any) {
	if b, err := json.Marshal(v); err == nil {
		writeJSONLine(w, b)
	}
}

// printEvent writes ev as the server sent it, one JSON line, escaped for
// the terminal (the same value).
func printEvent(w io.Writer, ev proto.Event) {
	if b, err := proto.EncodeEvent(ev); err == nil {
		writeJSONLine(w, b)
	}
}

// writeJSONLine writes the JSON text b and a newline.
func writeJSONLine(w io.Writer, b []byte) error {
	_, err := w.Write(append(termtext.JSON(b), '\n'))
	return err
}
