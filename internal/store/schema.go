package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A migration moves the schema from version-1 to version. Migrations are
// append-only: a released one is never edited, a change is a new one. Each
// runs in its own write transaction together with the user_version bump, so
// a crash leaves the file at the old or the new version, never between.
type migration struct {
	version int
	apply   func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the schema history, oldest first. It is built when used:
// a package-level list of closures would be built by every scv command at
// start-up.
func migrations() []migration {
	return []migration{
		{1, execAll(schemaV1...)},
		{2, execAll(schemaV2...)},
		{3, execAll(schemaV3...)},
		{4, execAll(schemaV4...)},
		{5, execAll(schemaV5...)},
		{6, execAll(schemaV6...)},
		{7, execAll(schemaV7...)},
		{8, execAll(schemaV8...)},
		{9, execAll(schemaV9...)},
	}
}

// SchemaVersion is the schema version this code writes.
func SchemaVersion() int { m := migrations(); return m[len(m)-1].version }

// schemaV1 is the first schema. Times are Unix nanoseconds. Sessions carry
// their lease and their history window; history messages are numbered per
// session (pos) and never renumbered, so a turn can record the window that
// was the history before it began (what fork copies).
var schemaV1 = []string{
	`CREATE TABLE sessions (
		sid         INTEGER PRIMARY KEY,
		id          TEXT NOT NULL UNIQUE,
		workspace   TEXT NOT NULL,
		title       TEXT NOT NULL DEFAULT '',
		renamed     INTEGER NOT NULL DEFAULT 0,
		provider    TEXT NOT NULL DEFAULT '',
		model       TEXT NOT NULL DEFAULT '',
		origin      TEXT NOT NULL,
		state       TEXT NOT NULL,
		depth       INTEGER NOT NULL DEFAULT 0,
		parent_id   TEXT NOT NULL DEFAULT '',
		parent_turn TEXT NOT NULL DEFAULT '',
		created_ns  INTEGER NOT NULL,
		updated_ns  INTEGER NOT NULL,
		turns       INTEGER NOT NULL DEFAULT 0,
		bytes       INTEGER NOT NULL DEFAULT 0,
		last_seq    INTEGER NOT NULL DEFAULT 0,
		hist_lo     INTEGER NOT NULL DEFAULT 0,
		hist_hi     INTEGER NOT NULL DEFAULT 0,
		lease_instance TEXT NOT NULL DEFAULT '',
		lease_pid      INTEGER NOT NULL DEFAULT 0,
		lease_start    INTEGER NOT NULL DEFAULT 0,
		lease_name     TEXT NOT NULL DEFAULT '',
		lease_ns       INTEGER NOT NULL DEFAULT 0
	)`,
	`CREATE INDEX sessions_by_updated ON sessions(updated_ns, sid)`,
	`CREATE INDEX sessions_by_workspace ON sessions(workspace, updated_ns, sid)`,
	`CREATE TABLE turns (
		id          INTEGER PRIMARY KEY,
		sid         INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,
		turn_id     TEXT NOT NULL,
		n           INTEGER NOT NULL,
		prompt      TEXT NOT NULL,
		answer      TEXT NOT NULL DEFAULT '',
		state       TEXT NOT NULL,
		error_code  TEXT NOT NULL DEFAULT '',
		error_msg   TEXT NOT NULL DEFAULT '',
		input_tokens  INTEGER NOT NULL DEFAULT 0,
		output_tokens INTEGER NOT NULL DEFAULT 0,
		total_tokens  INTEGER NOT NULL DEFAULT 0,
		started_ns  INTEGER NOT NULL,
		ended_ns    INTEGER NOT NULL DEFAULT 0,
		hist_lo     INTEGER NOT NULL,
		hist_hi     INTEGER NOT NULL,
		UNIQUE (sid, turn_id),
		UNIQUE (sid, n)
	)`,
	`CREATE INDEX turns_running ON turns(sid) WHERE state = 'running'`,
	`CREATE TABLE events (
		id    INTEGER PRIMARY KEY,
		turn  INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
		seq   INTEGER NOT NULL,
		data  BLOB NOT NULL,
		UNIQUE (turn, seq)
	)`,
	`CREATE TABLE messages (
		id    INTEGER PRIMARY KEY,
		sid   INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,
		pos   INTEGER NOT NULL,
		data  BLOB NOT NULL,
		UNIQUE (sid, pos)
	)`,
}

// schemaV2 adds full-text search over prompts and answers: an FTS5 index
// whose content is the turns table (no second copy of the text), kept in
// step by triggers, with FTS5's secure-delete so a deleted turn's words
// leave the index at once. A turn is indexed once, when it ends (its answer
// is known then): indexing at its start and again at its end would make
// every turn pay a secure delete, which costs a search of the index. So the
// index holds exactly the turns that are not running, and the last
// statement indexes those already stored.
var schemaV2 = []string{
	`CREATE VIRTUAL TABLE search USING fts5(prompt, answer, content='turns', content_rowid='id', tokenize='unicode61 remove_diacritics 2')`,
	`INSERT INTO search(search, rank) VALUES ('secure-delete', 1)`,
	`CREATE TRIGGER turns_search_insert AFTER INSERT ON turns WHEN new.state != 'running' BEGIN
		INSERT INTO search(rowid, prompt, answer) VALUES (new.id, new.prompt, new.answer);
	END`,
	`CREATE TRIGGER turns_search_end AFTER UPDATE OF state ON turns WHEN old.state = 'running' AND new.state != 'running' BEGIN
		INSERT INTO search(rowid, prompt, answer) VALUES (new.id, new.prompt, new.answer);
	END`,
	`CREATE TRIGGER turns_search_delete AFTER DELETE ON turns WHEN old.state != 'running' BEGIN
		INSERT INTO search(search, rowid, prompt, answer) VALUES ('delete', old.id, old.prompt, old.answer);
	END`,
	`INSERT INTO search(rowid, prompt, answer) SELECT id, prompt, answer FROM turns WHERE state != 'running'`,
}

// schemaV3 adds the delivery state of chat bridges (the WeChat bridge):
// per account the identity fingerprint its state is bound to, the poll
// cursor and a counter numbering seen message ids; the newest seen ids
// (the dedupe window); in-flight claims; pending reply chunks, each with
// the client id it is sent under; and which session serves each
// conversation. Ids are kept as the exact text the remote service sent.
var schemaV3 = []string{
	`CREATE TABLE bridge_accounts (
		account     TEXT PRIMARY KEY,
		fingerprint TEXT NOT NULL DEFAULT '',
		cursor      TEXT NOT NULL DEFAULT '',
		seen_n      INTEGER NOT NULL DEFAULT 0,
		updated_ns  INTEGER NOT NULL
	)`,
	`CREATE TABLE bridge_seen (
		account TEXT NOT NULL,
		msg_id  TEXT NOT NULL,
		n       INTEGER NOT NULL,
		PRIMARY KEY (account, msg_id)
	) WITHOUT ROWID`,
	`CREATE INDEX bridge_seen_by_n ON bridge_seen(account, n)`,
	`CREATE TABLE bridge_claims (
		id            INTEGER PRIMARY KEY,
		account       TEXT NOT NULL,
		msg_id        TEXT NOT NULL,
		recipient     TEXT NOT NULL,
		context_token TEXT NOT NULL,
		group_id      TEXT NOT NULL DEFAULT '',
		claimed_ns    INTEGER NOT NULL,
		UNIQUE (account, msg_id)
	)`,
	`CREATE TABLE bridge_replies (
		id            INTEGER PRIMARY KEY,
		account       TEXT NOT NULL,
		msg_id        TEXT NOT NULL,
		chunk         INTEGER NOT NULL,
		recipient     TEXT NOT NULL,
		context_token TEXT NOT NULL,
		client_id     TEXT NOT NULL,
		text          TEXT NOT NULL,
		created_ns    INTEGER NOT NULL,
		UNIQUE (account, msg_id, chunk)
	)`,
	`CREATE TABLE bridge_sessions (
		account    TEXT NOT NULL,
		group_id   TEXT NOT NULL,
		user_id    TEXT NOT NULL,
		session_id TEXT NOT NULL,
		no_tools   INTEGER NOT NULL,
		used_ns    INTEGER NOT NULL,
		PRIMARY KEY (account, group_id, user_id)
	) WITHOUT ROWID`,
}

// schemaV4 keeps what undo needs: per turn, each file the write tool
// changed, with its content before the turn (NULL with a reason in unkept
// when it was not kept) and the SHA-256 of what the turn left; and when a
// turn's writes were undone.
var schemaV4 = []string{
	`ALTER TABLE turns ADD COLUMN undone_ns INTEGER NOT NULL DEFAULT 0`,
	`CREATE TABLE turn_files (
		id      INTEGER PRIMARY KEY,
		turn    INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
		n       INTEGER NOT NULL,
		path    TEXT NOT NULL,
		existed INTEGER NOT NULL,
		before  BLOB,
		unkept  TEXT NOT NULL DEFAULT '',
		after   TEXT NOT NULL,
		UNIQUE (turn, n)
	)`,
}

// schemaV5 records the endpoint a session runs with besides its provider
// profile and model: the wire API and the base URL (never a key), so a
// resume goes on at the same endpoint whatever the resuming process's
// configuration says. Sessions stored before have neither (”).
var schemaV5 = []string{
	`ALTER TABLE sessions ADD COLUMN wire_api TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE sessions ADD COLUMN base_url TEXT NOT NULL DEFAULT ''`,
}

// schemaV6 records the input images of a turn's prompt: per image its
// path, media type, size and SHA-256, never its bytes (a resumed session
// reads the file again and checks the hash).
var schemaV6 = []string{
	`CREATE TABLE turn_images (
		id         INTEGER PRIMARY KEY,
		turn       INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
		n          INTEGER NOT NULL,
		path       TEXT NOT NULL,
		media_type TEXT NOT NULL,
		size       INTEGER NOT NULL,
		sha256     TEXT NOT NULL,
		UNIQUE (turn, n)
	)`,
}

// schemaV7 keeps a session's mode (default or plan: a resume starts in
// it) and its latest todo list, as the JSON array the model last wrote
// (bounded by the tool: 50 items of 500 bytes); sessions stored before
// are in the default mode with no list.
var schemaV7 = []string{
	`ALTER TABLE sessions ADD COLUMN mode TEXT NOT NULL DEFAULT 'default'`,
	`ALTER TABLE sessions ADD COLUMN todos TEXT NOT NULL DEFAULT '[]'`,
}

// schemaV8 keeps the rest of a turn's usage: the prompt tokens read from
// and written to the provider's cache, and what the turn cost in US
// dollars (NULL when its model had no known price), so a resumed session
// shows its total.
var schemaV8 = []string{
	`ALTER TABLE turns ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE turns ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE turns ADD COLUMN cost_usd REAL`,
}

// schemaV9 keeps the conversations with delegated agents: per session the
// handle the model knows (agent and number, never reused), the directory
// it is pinned to, the agent CLI's own session id (emptied when the
// conversation closes), its turn count and when it was created, last used
// and closed, and why. They go with their session.
var schemaV9 = []string{
	`CREATE TABLE agent_conversations (
		sid        INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,
		handle     TEXT NOT NULL,
		agent      TEXT NOT NULL,
		n          INTEGER NOT NULL,
		cwd        TEXT NOT NULL,
		vendor_id  TEXT NOT NULL DEFAULT '',
		turns      INTEGER NOT NULL DEFAULT 0,
		created_ns INTEGER NOT NULL,
		used_ns    INTEGER NOT NULL,
		closed_ns  INTEGER NOT NULL DEFAULT 0,
		closed_why TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (sid, handle)
	) WITHOUT ROWID`,
}

func execAll(stmts ...string) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}
}

// migrate brings the file to SchemaVersion. Several processes may open a new
// or old file at once: each migration re-reads the version inside its write
// transaction, so exactly one of them applies it.
func (s *Store) migrate(ctx context.Context) error {
	// auto_vacuum must be chosen before the first table exists, and WAL is
	// a property of the file; both are no-ops when already set.
	// Setting either writes the file header, so they are only set when
	// missing: an open of a set-up file writes nothing.
	if err := s.retry(ctx, "set up database", func() error {
		var pages int
		var mode string
		if err := s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			return err
		}
		if pages == 0 {
			if _, err := s.w.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
				return err
			}
		}
		if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			return err
		}
		if mode == "wal" {
			return nil
		}
		if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
			return err
		}
		if mode != "wal" {
			return fmt.Errorf("the database did not switch to WAL (journal mode %q)", mode)
		}
		return nil
	}); err != nil {
		return err
	}
	v, err := s.version(ctx)
	if err != nil {
		return err
	}
	if v > SchemaVersion() {
		return fmt.Errorf("the database has schema version %d, newer than this scv understands (%d): upgrade scv, or point it at another database", v, SchemaVersion())
	}
	for _, m := range migrations() {
		if m.version <= v {
			continue
		}
		err := s.write(ctx, fmt.Sprintf("migrate schema to version %d", m.version), false, func(tx *sql.Tx) error {
			var cur int
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
				return err
			}
			if cur >= m.version {
				return nil // another process got here first
			}
			if cur != m.version-1 {
				return fmt.Errorf("schema version %d cannot be migrated to %d", cur, m.version)
			}
			if err := m.apply(ctx, tx); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version))
			return err
		})
		if err != nil {
			return err
		}
		if m.version > 1 {
			s.log.Info("store schema migrated", "path", s.path, "version", m.version)
		}
	}
	return nil
}

func (s *Store) version(ctx context.Context) (int, error) {
	var v int
	err := s.retry(ctx, "read schema version", func() error {
		return s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	})
	return v, err
}
