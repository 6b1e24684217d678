// Package store is SCV's embedded database: sessions, their canonical
// model-visible history, their turns with each turn's protocol events, turn
// usage, session leases and a full-text index over prompts and answers, all
// in one SQLite file. It is the only package that speaks SQL; callers see
// typed methods. It imports nothing internal, so the server, the CLI and the
// TUI can all use it, and history messages and events travel as opaque JSON.
//
// One file is shared by every SCV process of an instance (the daemon,
// `scv server --stdio`, `scv exec`): it runs in WAL mode, every write is a
// BEGIN IMMEDIATE transaction behind a busy timeout and a bounded retry, so
// contention waits instead of failing.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Store.
type Options struct {
	// Path is the database file. Its directory is created 0700 when missing;
	// the file is created 0600.
	Path string
	// Holder identifies this process in session leases (see Acquire).
	Holder Holder
	// Alive reports whether the holder of a lease still runs. It decides
	// whether a lease can be taken over and whether a running turn was
	// interrupted. Nil treats every holder but the zero one as alive.
	Alive func(Holder) bool
	// Logger receives warnings (takeovers, recoveries, slow locks); nil
	// discards them.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// BusyTimeout bounds how long one write waits for another process's
	// write transaction before it fails with ErrBusy; 0 is 30 s.
	BusyTimeout time.Duration
	// Fault, when set, is called before every write transaction commits,
	// with the operation's name; a non-nil error aborts the transaction and
	// is returned wrapped. It exists to test that write failures surface.
	Fault func(op string) error
}

// Store is an open database. Its methods are safe for concurrent use.
type Store struct {
	opts Options
	path string
	log  *slog.Logger
	// w is the write pool: one connection, every transaction BEGIN
	// IMMEDIATE, so writers of this process queue here instead of spinning
	// in SQLite's busy handler.
	w *sql.DB
	// r is the read pool: a few query_only connections reading WAL snapshots
	// that never block the writer.
	r *sql.DB
	// c is the checkpoint pool: one connection, used only by the
	// background checkpoints (checkpoint.go); opened on first use.
	c     *sql.DB
	ck    checkpointer
	hotMu sync.Mutex
	hot   map[string]*sql.Stmt // see prepareHot
	// warming is WarmUp's work; Close waits for it.
	warming sync.WaitGroup
	// ready is closed once an OpenAsync store is open, or could not be
	// (openErr); nil for a Store from Open.
	ready   chan struct{}
	openErr error
	// bulk skips the fsync of durable writes; benchmarks set it to fill
	// large databases quickly.
	bulk bool
	// ident is the database file as opened; gone, once set, is the error
	// every write returns because the path names another file or none
	// (checkFile).
	ident fs.FileInfo
	gone  atomic.Pointer[error]
}

// Open opens (creating and migrating as needed) the database at
// opts.Path.
func Open(ctx context.Context, opts Options) (*Store, error) {
	s, err := newStore(opts)
	if err != nil {
		return nil, err
	}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// newStore is a Store of opts, not opened yet: the options checked and
// defaulted, the path made absolute.
func newStore(opts Options) (*Store, error) {
	if opts.Path == "" {
		return nil, errors.New("open store: no database path given")
	}
	path, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", opts.Path, err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 30 * time.Second
	}
	if opts.Alive == nil {
		opts.Alive = func(h Holder) bool { return !h.zero() }
	}
	return &Store{opts: opts, path: path, log: opts.Logger}, nil
}

// open opens s's pools on its file (created and migrated as needed).
func (s *Store) open(ctx context.Context) error {
	path, opts := s.path, s.opts
	if err := prepareFile(path); err != nil {
		return err
	}
	var err error
	if s.w, err = openPool(path, false, opts.BusyTimeout); err != nil {
		return fmt.Errorf("open store %s: %w", path, describe(err, path))
	}
	// The pool opens the file lazily: ident is read after the first
	// statement (in migrate) has opened it.
	if err := s.w.PingContext(ctx); err != nil {
		s.w.Close()
		return fmt.Errorf("open store %s: %w", path, describe(err, path))
	}
	if s.ident, err = os.Stat(path); err != nil {
		s.w.Close()
		return fmt.Errorf("open store: %w", err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxIdleTime(time.Minute)
	if err := s.migrate(ctx); err != nil {
		s.w.Close()
		return fmt.Errorf("open store %s: %w", path, err)
	}
	if s.r, err = openPool(path, true, opts.BusyTimeout); err != nil {
		s.w.Close()
		return fmt.Errorf("open store %s: %w", path, describe(err, path))
	}
	s.r.SetMaxOpenConns(4)
	s.r.SetMaxIdleConns(1)
	s.r.SetConnMaxIdleTime(time.Minute)
	if s.c, err = openPool(path, false, opts.BusyTimeout); err != nil {
		s.r.Close()
		s.w.Close()
		return fmt.Errorf("open store %s: %w", path, describe(err, path))
	}
	s.c.SetMaxOpenConns(1)
	s.c.SetMaxIdleConns(1)
	s.c.SetConnMaxIdleTime(time.Minute)
	s.ck.ctx, s.ck.cancel = context.WithCancel(context.Background())
	return nil
}

// Close closes the database. It does not release leases (see ReleaseAll).
func (s *Store) Close() error {
	if s.ready != nil {
		<-s.ready
		if s.openErr != nil {
			s.warming.Wait() // a WarmUp sees the failure and returns
			return nil       // nothing is open
		}
	}
	s.stopCheckpoints() // also stops WarmUp's work
	s.warming.Wait()
	s.closingCheckpoint()
	return s.closePools()
}

// closePools closes the prepared statements and the pools.
func (s *Store) closePools() error {
	s.hotMu.Lock()
	for _, st := range s.hot {
		st.Close()
	}
	s.hot = nil
	s.hotMu.Unlock()
	return errors.Join(s.c.Close(), s.r.Close(), s.w.Close())
}

// WarmUp opens a read connection and prepares the statements every turn
// runs, in the background, for a process about to run turns: the first
// turn then finds both ready instead of paying for them (≈ 2 ms with the
// pure-Go SQLite, most of it parsing the schema and the SQL) before its
// first model request. A failure here is not reported: the turn that needs
// the statement prepares it again and reports its own error. Close waits
// for it.
func (s *Store) WarmUp() {
	s.warming.Go(func() {
		if s.await(context.Background()) != nil {
			return
		}
		ctx := s.ck.ctx
		if err := s.r.PingContext(ctx); err != nil {
			return
		}
		_ = s.prepareHot(ctx)
	})
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// prepareFile creates the directory (0700) and the file (0600) before SQLite
// does, so neither is ever created with the umask's wider modes, and
// tightens them when they already exist. SQLite gives the -wal and -shm files
// the mode of the database file.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("open store: create directory %s: %w", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("open store: %w", err)
	} else if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("open store: restrict directory %s to its owner: %w", dir, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("open store: database file %s: %w (check that it and its directory are writable by this user)", path, err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("open store: %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("open store: restrict %s to its owner: %w", path, err)
		}
	}
	return nil
}

func (s *Store) now() int64 { return s.opts.Now().UnixNano() }
