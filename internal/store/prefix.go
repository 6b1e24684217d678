package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// MinIDPrefix is the fewest characters after "s_" a session id prefix
// needs: shorter ones match too many sessions to mean one.
const MinIDPrefix = 4

// maxCandidates bounds the ids an AmbiguousError lists.
const maxCandidates = 8

// AmbiguousError says an id prefix matches several sessions.
type AmbiguousError struct {
	Prefix string
	// IDs are the first matches in id order (at most maxCandidates);
	// More says there are others.
	IDs  []string
	More bool
}

func (e *AmbiguousError) Error() string {
	more := ""
	if e.More {
		more = ", …"
	}
	return fmt.Sprintf("session id prefix %q matches %s%s: give more of the id", e.Prefix, strings.Join(e.IDs, ", "), more)
}

// ShortPrefixError says an id prefix is too short to be used.
type ShortPrefixError struct{ Prefix string }

func (e *ShortPrefixError) Error() string {
	return fmt.Sprintf("session id prefix %q is too short: give at least %d characters after s_ (`scv sessions list` shows the ids)", e.Prefix, MinIDPrefix)
}

// ResolveID returns the id of the one session whose id is id (or "s_" +
// id), or begins with it as git takes a commit's prefix ("s_" may be left
// out). A prefix
// shorter than MinIDPrefix characters after "s_" is a *ShortPrefixError,
// one that matches several sessions an *AmbiguousError listing them, one
// that matches none wraps ErrNotFound.
func (s *Store) ResolveID(ctx context.Context, id string) (string, error) {
	p := id
	if !strings.HasPrefix(p, "s_") {
		p = "s_" + p
	}
	var found []string
	err := s.read(ctx, "resolve session id", func(tx *sql.Tx) error {
		found = found[:0]
		var exact string
		// The id as given first: ids made elsewhere (fixtures, older
		// versions) need not begin with s_.
		switch err := tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE id IN (?, ?) ORDER BY id = ? DESC LIMIT 1`, id, p, id).Scan(&exact); err {
		case nil:
			found = append(found, exact)
			return nil
		case sql.ErrNoRows:
		default:
			return err
		}
		if len(p)-2 < MinIDPrefix || !plainID(p) {
			return nil
		}
		// Ids are ASCII: every id beginning with p sorts in [p, p+DEL).
		var err error
		found, err = queryAll(ctx, tx, scanOne[string], `SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`, p, p+"\x7f", maxCandidates+1)
		return err
	})
	switch {
	case err != nil:
		return "", err
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return "", &AmbiguousError{Prefix: id, IDs: found[:min(len(found), maxCandidates)], More: len(found) > maxCandidates}
	case len(p)-2 < MinIDPrefix:
		return "", &ShortPrefixError{Prefix: id}
	}
	return "", fmt.Errorf("session %s: %w", id, ErrNotFound)
}

// plainID says p holds only the characters of session ids.
func plainID(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
