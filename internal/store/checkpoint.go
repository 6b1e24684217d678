package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoints in the background. SQLite's automatic checkpoint runs inside
// the COMMIT that crosses its threshold: that commit, a turn's completion,
// then also copies ≈ 1,000 pages into the main file and fsyncs both files,
// which made one turn in ≈ 20 several milliseconds slower, and every turn
// pay for it on average. The write connections therefore run with
// wal_autocheckpoint off, and the store starts a PASSIVE checkpoint on a
// connection of its own once about checkpointBytes were written since the
// last one. A PASSIVE checkpoint takes no lock writers need, so writes go on
// meanwhile; what a commit made durable stays durable whether or not it has
// been checkpointed (the WAL is part of the database).

const (
	// checkpointBytes is the estimated amount written that starts a
	// checkpoint: below SQLite's own default (1,000 pages, 4 MiB), as the
	// estimate counts the payload (events, history, prompts, file
	// contents) and writeEstimate per transaction, not the pages of the
	// indexes and the search index.
	checkpointBytes = 2 << 20
	// writeEstimate is what a write transaction adds to the estimate by
	// itself (a row and its index entries: a few pages).
	writeEstimate = 16 << 10
)

// checkpointer starts and tracks the background checkpoints of a Store.
type checkpointer struct {
	written atomic.Int64 // estimated bytes written since the last checkpoint
	// wrote says this Store committed a write: Close then checkpoints,
	// since another process may keep the database open (a daemon beside
	// `scv exec`), and SQLite checkpoints on close only for the last
	// connection; without it many short-lived writers would let the WAL
	// grow until the long-lived one's own estimate is reached.
	wrote   atomic.Bool
	mu      sync.Mutex
	running bool
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// wrote adds n bytes of payload to the estimate.
func (s *Store) wrote(n int) { s.ck.written.Add(int64(n)) }

// committed is called after each committed write transaction: it starts a
// background checkpoint when enough was written and none is running.
func (s *Store) committed() {
	s.ck.wrote.Store(true)
	if s.ck.written.Add(writeEstimate) < checkpointBytes {
		return
	}
	c := &s.ck
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running || c.closed {
		return
	}
	c.written.Store(0)
	c.running = true
	c.wg.Add(1)
	go s.checkpointPassive()
}

func (s *Store) checkpointPassive() {
	c := &s.ck
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	var busyFlag, logPages, done int
	if err := s.c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busyFlag, &logPages, &done); err != nil && c.ctx.Err() == nil {
		s.log.Warn("store background checkpoint failed", "err", err)
	}
	c.mu.Lock()
	c.running = false
	c.mu.Unlock()
}

// closingCheckpoint is Close's checkpoint of what this Store wrote
// (PASSIVE: it waits for no other connection and blocks no writer),
// bounded by closeCheckpointTimeout; a failure only means the next
// checkpoint copies it. It runs on the write connection, idle by now: the
// checkpoint pool has no connection in a short-lived process, and opening
// one only for this cost as much as the checkpoint (≈ 1.7 ms).
func (s *Store) closingCheckpoint() {
	if !s.ck.wrote.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeCheckpointTimeout)
	defer cancel()
	var busyFlag, logPages, done int
	if err := s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busyFlag, &logPages, &done); err != nil {
		s.log.Debug("store checkpoint at close", "err", err)
	}
}

// closeCheckpointTimeout bounds Close's checkpoint.
const closeCheckpointTimeout = 5 * time.Second

// stopCheckpoints interrupts a running background checkpoint (it resumes at
// the next one, or SQLite finishes it when the last connection closes),
// waits for it, and starts no more.
func (s *Store) stopCheckpoints() {
	c := &s.ck
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}
