package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SearchOptions narrow a search.
type SearchOptions struct {
	// Workspace, when set, searches that directory's sessions only.
	Workspace string
	// Limit bounds the hits; 0 is 20.
	Limit int
}

// Hit is one turn matching a search.
type Hit struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	Workspace string `json:"workspace"`
	TurnID    string `json:"turn_id"`
	TurnN     int    `json:"turn_n"`
	// Field is where the line was found: "prompt" or "answer".
	Field string `json:"field"`
	// Line is the first matching line, trimmed and cut around the match.
	Line string `json:"line"`
	// Rank orders hits, best (lowest) first.
	Rank float64 `json:"rank"`
}

// maxLineBytes bounds Hit.Line.
const maxLineBytes = 240

// Search finds turns whose prompt or answer contains every word of text
// (the last word may be the start of a longer one), best match first;
// prompt matches weigh twice as much as answer matches.
func (s *Store) Search(ctx context.Context, text string, o SearchOptions) ([]Hit, error) {
	q := ftsQuery(text)
	if q == "" {
		return nil, fmt.Errorf("search: %q has no words to look for", text)
	}
	if o.Limit <= 0 {
		o.Limit = 20
	}
	// Ranking first, on the index alone where possible (FTS5 then computes
	// bm25 and sorts itself); the matching lines of the few hits after,
	// one row each: highlight() in the ranking query would read and
	// tokenize the text of every match, not only of the hits.
	rankQ := `SELECT search.rowid, rank FROM search WHERE search MATCH ? AND rank MATCH 'bm25(2.0, 1.0)' ORDER BY rank LIMIT ?`
	args := []any{q, o.Limit}
	if o.Workspace != "" {
		rankQ = `SELECT search.rowid, rank FROM search JOIN turns t ON t.id = search.rowid JOIN sessions s ON s.sid = t.sid
			WHERE search MATCH ? AND rank MATCH 'bm25(2.0, 1.0)' AND s.workspace = ? ORDER BY rank LIMIT ?`
		args = []any{q, o.Workspace, o.Limit}
	}
	const lineQ = `SELECT s.id, s.title, s.workspace, t.turn_id, t.n,
			highlight(search, 0, char(2), char(3)), highlight(search, 1, char(2), char(3))
		FROM search JOIN turns t ON t.id = search.rowid JOIN sessions s ON s.sid = t.sid
		WHERE search MATCH ? AND search.rowid = ?`
	var hits []Hit
	err := s.read(ctx, "search", func(tx *sql.Tx) error {
		hits = hits[:0]
		type ranked struct {
			row  int64
			rank float64
		}
		top, err := queryAll(ctx, tx, func(rows *sql.Rows) (ranked, error) {
			var r ranked
			err := rows.Scan(&r.row, &r.rank)
			return r, err
		}, rankQ, args...)
		if err != nil {
			return err
		}
		line, err := tx.PrepareContext(ctx, lineQ)
		if err != nil {
			return err
		}
		defer line.Close()
		for _, r := range top {
			h := Hit{Rank: r.rank}
			var prompt, answer string
			if err := line.QueryRowContext(ctx, q, r.row).Scan(&h.SessionID, &h.Title, &h.Workspace, &h.TurnID, &h.TurnN, &prompt, &answer); err != nil {
				return err
			}
			h.Field, h.Line = "prompt", matchLine(prompt)
			if h.Line == "" {
				h.Field, h.Line = "answer", matchLine(answer)
			}
			hits = append(hits, h)
		}
		return nil
	})
	return hits, err
}

// ftsQuery turns free text into an FTS5 query: every word quoted (so no
// word is read as an operator), all required, the last one as a prefix.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	if len(words) == 0 {
		return ""
	}
	words[len(words)-1] += "*"
	return strings.Join(words, " ")
}

// matchLine is the first line of a highlighted text holding a match
// (between \x02 and \x03), without the markers, cut around the match.
func matchLine(h string) string {
	i := strings.IndexByte(h, 2)
	if i < 0 {
		return ""
	}
	start := strings.LastIndexByte(h[:i], '\n') + 1
	end := len(h)
	if j := strings.IndexByte(h[i:], '\n'); j >= 0 {
		end = i + j
	}
	line := h[start:end]
	at := i - start
	clean := func(s string) string { return strings.NewReplacer("\x02", "", "\x03", "").Replace(s) }
	if len(line) > maxLineBytes {
		from := max(0, at-maxLineBytes/3)
		for from > 0 && !utf8.RuneStart(line[from]) {
			from--
		}
		to := min(len(line), from+maxLineBytes)
		for to < len(line) && !utf8.RuneStart(line[to]) {
			to++
		}
		pre, post := "", ""
		if from > 0 {
			pre = "…"
		}
		if to < len(line) {
			post = "…"
		}
		line = pre + line[from:to] + post
	}
	return strings.TrimSpace(clean(line))
}
