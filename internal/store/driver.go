package store

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The driver is confined to this file: the DSN, the per-connection settings
// and the classification of its errors. Swapping the SQLite driver means
// rewriting this file only.

// openPool opens a connection pool on path. Every connection gets the busy
// timeout, foreign keys, secure delete (freed pages are zeroed, so deleted
// prompts do not linger in the file) and WAL; writers begin IMMEDIATE and
// never checkpoint in a commit.
func openPool(path string, readOnly bool, busy time.Duration) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "secure_delete(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "journal_size_limit(8388608)")
	q.Add("_pragma", "cache_size(-2048)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		// Checkpoints run in the background, not in a commit
		// (checkpoint.go).
		q.Add("_pragma", "wal_autocheckpoint(0)")
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	return db, nil
}

// code is the primary SQLite result code of err, or 0.
func code(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}

// busy reports whether err means another connection holds a lock.
func busy(err error) bool {
	c := code(err)
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// constraint reports a violated UNIQUE, PRIMARY KEY or FOREIGN KEY rule.
func constraint(err error) bool { return code(err) == sqlite3.SQLITE_CONSTRAINT }

// describe turns the driver's terse errors into ones that say what to do.
func describe(err error, path string) error {
	if err == nil {
		return nil
	}
	switch code(err) {
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("%w (the database file %s or its directory is read-only: give this user write access)", err, path)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w (the disk holding %s is full: free space, then retry)", err, path)
	case sqlite3.SQLITE_IOERR:
		return fmt.Errorf("%w (writing %s failed: the disk may be full or failing)", err, path)
	case sqlite3.SQLITE_CANTOPEN:
		return fmt.Errorf("%w (cannot open %s or create its -wal/-shm files: check the directory's permissions)", err, path)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w (%s is damaged or not an SCV database: move it aside and SCV starts a new one)", err, path)
	}
	return err
}
