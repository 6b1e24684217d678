package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrGone means the database file was removed or replaced while this
// process had it open: SQLite would go on writing into a file no path
// names any more (lost at the process's end), so the store refuses every
// later write instead. The next process to open the path starts a new
// database there.
var ErrGone = errors.New("the session database file was removed or replaced while scv was running")

// checkFile refuses a write once the path no longer names the file the
// store opened (same device and inode): one stat per write transaction.
// The first time it finds so it logs an error; from then on it answers
// without looking again.
func (s *Store) checkFile() error {
	if err := s.gone.Load(); err != nil {
		return *err
	}
	fi, err := os.Stat(s.path)
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "it no longer exists"
	case err != nil:
		return nil // unreadable for another reason: the write itself reports it
	case !os.SameFile(fi, s.ident):
		why = "another file is there now"
	default:
		return nil
	}
	gone := permanent{fmt.Errorf("%w: %s: %s; nothing is saved from now on (the open sessions go on in memory until they close): restart scv (scv stop, then scv start) to begin a new database there", ErrGone, s.path, why)}
	var e error = gone
	if s.gone.CompareAndSwap(nil, &e) {
		s.log.Error("store database file removed or replaced; writes refused until restart", "path", s.path, "reason", why)
	}
	return *s.gone.Load()
}
