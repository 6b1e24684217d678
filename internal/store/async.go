package store

import (
	"context"
	"fmt"
)

// OpenAsync is Open in the background, for a process whose next steps do
// not need the database yet (building its tools, reading its
// configuration, starting a session in memory): opening it is the longest
// step before a first turn, ≈ 3–5 ms with the pure-Go SQLite. It returns at
// once; every method of the Store waits until the database is open and
// fails, naming the path, if it could not be (Err says so without
// waiting for more than the opening). then, when not nil, runs once it is
// open and before any other caller's method does (a server's Recover and
// WarmUp); an error from it fails the Store like a failed open, which it
// then closes. Close waits for the opening to end.
func OpenAsync(ctx context.Context, opts Options, then func(context.Context, *Store) error) (*Store, error) {
	s, err := newStore(opts)
	if err != nil {
		return nil, err
	}
	s.ready = make(chan struct{})
	go func() {
		defer close(s.ready)
		octx := context.WithValue(ctx, openingKey{}, true)
		if err := s.open(octx); err != nil {
			s.openErr = err
			return
		}
		if then != nil {
			if err := then(octx, s); err != nil {
				// then's commits may have started a checkpoint; a
				// WarmUp it started sees the failure (Close waits
				// for it).
				s.stopCheckpoints()
				s.closePools()
				s.openErr = err
			}
		}
	}()
	return s, nil
}

// openingKey marks the context of an OpenAsync store's own opening, whose
// statements must not wait for the opening to end.
type openingKey struct{}

// await waits for an OpenAsync store to be open and returns why it could
// not be; a Store from Open is open at once.
func (s *Store) await(ctx context.Context) error {
	if s.ready == nil || ctx.Value(openingKey{}) != nil {
		return nil
	}
	select {
	case <-s.ready:
		return s.openErr
	case <-ctx.Done():
		return fmt.Errorf("waiting for the database %s to open: %w", s.path, ctx.Err())
	}
}

// Err waits for the database to be open and reports whether it could be
// (nil for a Store from Open).
func (s *Store) Err(ctx context.Context) error { return s.await(ctx) }
