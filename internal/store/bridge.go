package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The delivery state of a chat bridge (the WeChat bridge of the daemon),
// per bridge account. Its rule is "nothing replayed, nothing lost":
//
//   - a message is claimed before any work starts for it, and the poll
//     cursor moves in the same transaction as the claims of its batch
//     (BridgeAccept), so a crash never skips an unclaimed message;
//   - finishing a claim turns it into a pending reply, with the client id
//     of each of its chunks, in one transaction (BridgeComplete), so a reply
//     is never lost and a retried chunk is always sent under the same id;
//   - every message id is remembered in a window of the newest
//     BridgeDedupeWindow ids, so a message delivered again is not run
//     again.

// BridgeDedupeWindow is how many of the newest message ids an account
// remembers; BridgeMaxBatch the most messages one batch may hold.
const (
	BridgeDedupeWindow = 4096
	BridgeMaxBatch     = 4096
)

// ErrBridgeBatchTooLarge refuses a batch of more than BridgeMaxBatch
// messages; nothing of it is stored and the cursor stays.
var ErrBridgeBatchTooLarge = fmt.Errorf("a batch of more than %d messages is refused", BridgeMaxBatch)

// maxBridgeField bounds every id, cursor and token the store keeps for a
// bridge: they come from a remote service.
const maxBridgeField = 64 << 10

// BridgeMessage is one message of a polled batch.
type BridgeMessage struct {
	// ID is the message id, exactly as the service sent it.
	ID string
	// Claim says the message is to be answered: a claim is stored for it.
	// A message that is not claimed is only remembered as seen.
	Claim bool
	// Recipient is who the reply goes to (the sender of the message),
	// ContextToken what the service needs to answer it, GroupID the group
	// it was written in ("" in a direct chat).
	Recipient, ContextToken, GroupID string
}

// BridgeBatch is one polled batch and the cursor after it.
type BridgeBatch struct {
	Messages []BridgeMessage
	// Cursor is the poll cursor after the batch; "" keeps the stored one.
	Cursor string
}

// BridgeClaim is a message whose work has begun and not yet ended.
type BridgeClaim struct {
	MessageID, Recipient, ContextToken, GroupID string
	Claimed                                     time.Time
}

// BridgeChunk is one message of a reply.
type BridgeChunk struct {
	// N orders the chunks of a reply, from 0.
	N int
	// ClientID is the id the chunk is sent under, every time.
	ClientID string
	Text     string
}

// BridgeReply is a reply waiting to be sent: the chunks not sent yet.
type BridgeReply struct {
	MessageID, Recipient, ContextToken string
	Chunks                             []BridgeChunk
	Created                            time.Time
}

// BridgeState is an account's stored delivery state.
type BridgeState struct {
	// Fingerprint is the identity the state is bound to ("" while unbound).
	Fingerprint string
	Cursor      string
	// Claims and Replies are in the order they were made.
	Claims  []BridgeClaim
	Replies []BridgeReply
}

// BridgeSession is the session serving one conversation of an account:
// a user in a direct chat (GroupID "") or a user in a group.
type BridgeSession struct {
	GroupID, UserID, SessionID string
	// NoTools records that the session was started without tools, so a
	// session is never resumed under another authority.
	NoTools bool
	Used    time.Time
}

// BindingError refuses to bind an account's state to another identity.
type BindingError struct {
	Account, Bound, Want string
}

func (e *BindingError) Error() string {
	return fmt.Sprintf("the state of bridge account %q belongs to another identity (%s, not %s); log out of it first", e.Account, short(e.Bound), short(e.Want))
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}

func checkBridge(account string, fields ...string) error {
	if account == "" {
		return errors.New("empty bridge account")
	}
	if len(account) > maxIDBytes {
		return fmt.Errorf("bridge account name of %d bytes is longer than %d", len(account), maxIDBytes)
	}
	for _, f := range fields {
		if len(f) > maxBridgeField {
			return fmt.Errorf("a bridge field of %d bytes is longer than %d", len(f), maxBridgeField)
		}
	}
	return nil
}

// ensureBridgeAccount makes the account's row exist.
func ensureBridgeAccount(ctx context.Context, tx *sql.Tx, account string, now int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO bridge_accounts (account, updated_ns) VALUES (?, ?) ON CONFLICT (account) DO NOTHING`, account, now)
	return err
}

// BridgeBind binds account's state to fingerprint (an identity). The first
// bind records it; binding again to the same one does nothing; another one
// fails with a *BindingError until BridgeForget.
func (s *Store) BridgeBind(ctx context.Context, account, fingerprint string) error {
	if err := checkBridge(account, fingerprint); err != nil {
		return fmt.Errorf("bind bridge state: %w", err)
	}
	if fingerprint == "" {
		return errors.New("bind bridge state: empty fingerprint")
	}
	return s.write(ctx, "bind bridge state", false, func(tx *sql.Tx) error {
		if err := ensureBridgeAccount(ctx, tx, account, s.now()); err != nil {
			return err
		}
		var bound string
		if err := tx.QueryRowContext(ctx, `SELECT fingerprint FROM bridge_accounts WHERE account = ?`, account).Scan(&bound); err != nil {
			return err
		}
		switch bound {
		case fingerprint:
			return nil
		case "":
			_, err := tx.ExecContext(ctx, `UPDATE bridge_accounts SET fingerprint = ?, updated_ns = ? WHERE account = ?`, fingerprint, s.now(), account)
			return err
		}
		return permanent{&BindingError{Account: account, Bound: bound, Want: fingerprint}}
	})
}

// BridgeAccept stores a polled batch in one transaction: every message id
// not seen before is remembered (the window keeps the newest
// BridgeDedupeWindow), a claim is stored for each such message with Claim
// set, and the cursor moves. It returns the new claims in batch order; a
// message seen before gets none. A batch of more than BridgeMaxBatch
// messages fails with ErrBridgeBatchTooLarge and changes nothing.
func (s *Store) BridgeAccept(ctx context.Context, account string, b BridgeBatch) ([]BridgeClaim, error) {
	if len(b.Messages) > BridgeMaxBatch {
		return nil, fmt.Errorf("accept bridge batch of %d messages: %w", len(b.Messages), ErrBridgeBatchTooLarge)
	}
	if err := checkBridge(account, b.Cursor); err != nil {
		return nil, fmt.Errorf("accept bridge batch: %w", err)
	}
	for _, m := range b.Messages {
		if m.ID == "" {
			return nil, errors.New("accept bridge batch: a message without an id")
		}
		if err := checkBridge(account, m.ID, m.Recipient, m.ContextToken, m.GroupID); err != nil {
			return nil, fmt.Errorf("accept bridge batch: %w", err)
		}
	}
	var claims []BridgeClaim
	err := s.write(ctx, "accept bridge batch", true, func(tx *sql.Tx) error {
		claims = claims[:0]
		now := s.now()
		if err := ensureBridgeAccount(ctx, tx, account, now); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT seen_n FROM bridge_accounts WHERE account = ?`, account).Scan(&n); err != nil {
			return err
		}
		for _, m := range b.Messages {
			res, err := tx.ExecContext(ctx, `INSERT INTO bridge_seen (account, msg_id, n) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, account, m.ID, n+1)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k == 0 {
				continue // seen before
			}
			n++
			if !m.Claim {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO bridge_claims (account, msg_id, recipient, context_token, group_id, claimed_ns) VALUES (?, ?, ?, ?, ?, ?)`,
				account, m.ID, m.Recipient, m.ContextToken, m.GroupID, now); err != nil {
				return err
			}
			claims = append(claims, BridgeClaim{MessageID: m.ID, Recipient: m.Recipient, ContextToken: m.ContextToken, GroupID: m.GroupID, Claimed: ns(now)})
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM bridge_seen WHERE account = ? AND n <= ?`, account, n-BridgeDedupeWindow); err != nil {
			return err
		}
		q := `UPDATE bridge_accounts SET seen_n = ?, updated_ns = ? WHERE account = ?`
		args := []any{n, now, account}
		if b.Cursor != "" {
			q = `UPDATE bridge_accounts SET seen_n = ?, updated_ns = ?, cursor = ? WHERE account = ?`
			args = []any{n, now, b.Cursor, account}
		}
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// BridgeComplete ends the claim of messageID and stores its reply chunks
// in the same transaction, on disk before it returns. The chunks may be
// empty (nothing to send). A claim that does not exist (completed before,
// or forgotten) fails with ErrNotFound and stores nothing.
func (s *Store) BridgeComplete(ctx context.Context, account, messageID string, chunks []BridgeChunk) error {
	return s.BridgeCompleteAll(ctx, account, []BridgeCompletion{{MessageID: messageID, Chunks: chunks}})
}

// BridgeCompletion is the reply that ends one claim.
type BridgeCompletion struct {
	MessageID string
	Chunks    []BridgeChunk
}

// BridgeCompleteAll is BridgeComplete for several claims in one
// transaction (one write to disk for a whole batch of short replies). When
// one of the claims does not exist it fails with ErrNotFound and stores
// nothing.
func (s *Store) BridgeCompleteAll(ctx context.Context, account string, all []BridgeCompletion) error {
	for _, x := range all {
		if err := checkBridge(account, x.MessageID); err != nil {
			return fmt.Errorf("complete bridge claim: %w", err)
		}
		for _, c := range x.Chunks {
			if c.ClientID == "" {
				return fmt.Errorf("complete bridge claim %s: chunk %d has no client id", x.MessageID, c.N)
			}
			if err := checkBridge(account, c.ClientID, c.Text); err != nil {
				return fmt.Errorf("complete bridge claim %s: %w", x.MessageID, err)
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	return s.write(ctx, "complete bridge claim", true, func(tx *sql.Tx) error {
		now := s.now()
		for _, x := range all {
			var recipient, token string
			err := tx.QueryRowContext(ctx, `SELECT recipient, context_token FROM bridge_claims WHERE account = ? AND msg_id = ?`, account, x.MessageID).Scan(&recipient, &token)
			if errors.Is(err, sql.ErrNoRows) {
				return permanent{fmt.Errorf("claim of message %s of bridge account %s: %w", x.MessageID, account, ErrNotFound)}
			} else if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM bridge_claims WHERE account = ? AND msg_id = ?`, account, x.MessageID); err != nil {
				return err
			}
			for _, c := range x.Chunks {
				if _, err := tx.ExecContext(ctx, `INSERT INTO bridge_replies (account, msg_id, chunk, recipient, context_token, client_id, text, created_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
					account, x.MessageID, c.N, recipient, token, c.ClientID, c.Text, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// BridgeChunkSent forgets chunk n of messageID's reply: it was delivered.
func (s *Store) BridgeChunkSent(ctx context.Context, account, messageID string, n int) error {
	return s.write(ctx, "record sent bridge chunk", false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM bridge_replies WHERE account = ? AND msg_id = ? AND chunk = ?`, account, messageID, n)
		return err
	})
}

// BridgeDropReply forgets every chunk of messageID's reply not sent yet
// (the service refused it for good).
func (s *Store) BridgeDropReply(ctx context.Context, account, messageID string) error {
	return s.write(ctx, "drop bridge reply", false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM bridge_replies WHERE account = ? AND msg_id = ?`, account, messageID)
		return err
	})
}

// BridgeState reads an account's delivery state; an account never used
// has the zero state.
func (s *Store) BridgeState(ctx context.Context, account string) (BridgeState, error) {
	var st BridgeState
	err := s.read(ctx, "read bridge state", func(tx *sql.Tx) error {
		st = BridgeState{}
		err := tx.QueryRowContext(ctx, `SELECT fingerprint, cursor FROM bridge_accounts WHERE account = ?`, account).Scan(&st.Fingerprint, &st.Cursor)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		st.Claims, err = queryAll(ctx, tx, func(rows *sql.Rows) (BridgeClaim, error) {
			var c BridgeClaim
			var at int64
			err := rows.Scan(&c.MessageID, &c.Recipient, &c.ContextToken, &c.GroupID, &at)
			c.Claimed = ns(at)
			return c, err
		}, `SELECT msg_id, recipient, context_token, group_id, claimed_ns FROM bridge_claims WHERE account = ? ORDER BY id`, account)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT msg_id, chunk, recipient, context_token, client_id, text, created_ns FROM bridge_replies WHERE account = ? ORDER BY id`, account)
		if err != nil {
			return err
		}
		defer rows.Close()
		idx := map[string]int{}
		for rows.Next() {
			var (
				id, recipient, token string
				c                    BridgeChunk
				at                   int64
			)
			if err := rows.Scan(&id, &c.N, &recipient, &token, &c.ClientID, &c.Text, &at); err != nil {
				return err
			}
			i, ok := idx[id]
			if !ok {
				i = len(st.Replies)
				idx[id] = i
				st.Replies = append(st.Replies, BridgeReply{MessageID: id, Recipient: recipient, ContextToken: token, Created: ns(at)})
			}
			st.Replies[i].Chunks = append(st.Replies[i].Chunks, c)
		}
		return rows.Err()
	})
	return st, err
}

// BridgeSeen reports whether messageID is in the account's dedupe window.
func (s *Store) BridgeSeen(ctx context.Context, account, messageID string) (bool, error) {
	var n int
	err := s.read(ctx, "read bridge seen ids", func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM bridge_seen WHERE account = ? AND msg_id = ?`, account, messageID).Scan(&n)
	})
	return n > 0, err
}

// BridgeSession finds the session serving a conversation (ErrNotFound
// when none is recorded).
func (s *Store) BridgeSession(ctx context.Context, account, groupID, userID string) (BridgeSession, error) {
	x := BridgeSession{GroupID: groupID, UserID: userID}
	err := s.read(ctx, "read bridge session", func(tx *sql.Tx) error {
		var used int64
		err := tx.QueryRowContext(ctx, `SELECT session_id, no_tools, used_ns FROM bridge_sessions WHERE account = ? AND group_id = ? AND user_id = ?`, account, groupID, userID).Scan(&x.SessionID, &x.NoTools, &used)
		if errors.Is(err, sql.ErrNoRows) {
			return permanent{fmt.Errorf("session of a conversation of bridge account %s: %w", account, ErrNotFound)}
		}
		x.Used = ns(used)
		return err
	})
	return x, err
}

// BridgeSetSession records (or replaces) the session serving a
// conversation and when it was last used.
func (s *Store) BridgeSetSession(ctx context.Context, account string, x BridgeSession) error {
	if err := checkBridge(account, x.GroupID, x.UserID); err != nil {
		return fmt.Errorf("record bridge session: %w", err)
	}
	if err := checkID("session", x.SessionID); err != nil {
		return fmt.Errorf("record bridge session: %w", err)
	}
	return s.write(ctx, "record bridge session", false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO bridge_sessions (account, group_id, user_id, session_id, no_tools, used_ns) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (account, group_id, user_id) DO UPDATE SET session_id = excluded.session_id, no_tools = excluded.no_tools, used_ns = excluded.used_ns`,
			account, x.GroupID, x.UserID, x.SessionID, x.NoTools, x.Used.UnixNano())
		return err
	})
}

// BridgeDropSession forgets the session of a conversation (it went idle).
func (s *Store) BridgeDropSession(ctx context.Context, account, groupID, userID string) error {
	return s.write(ctx, "drop bridge session", false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM bridge_sessions WHERE account = ? AND group_id = ? AND user_id = ?`, account, groupID, userID)
		return err
	})
}

// BridgeForget deletes every piece of an account's state: binding,
// cursor, seen ids, claims, pending replies and session map (log-out).
func (s *Store) BridgeForget(ctx context.Context, account string) error {
	return s.write(ctx, "forget bridge account", true, func(tx *sql.Tx) error {
		for _, t := range []string{"bridge_accounts", "bridge_seen", "bridge_claims", "bridge_replies", "bridge_sessions"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE account = ?`, account); err != nil {
				return err
			}
		}
		return nil
	})
}
