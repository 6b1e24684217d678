package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func claimMsg(id string) BridgeMessage {
	return BridgeMessage{ID: id, Claim: true, Recipient: "u-" + id, ContextToken: "ctx-" + id}
}

func TestBridgeAcceptClaimsAndCursor(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	claims, err := s.BridgeAccept(ctx, "default", BridgeBatch{Cursor: "c1", Messages: []BridgeMessage{
		claimMsg("18446744073709551615"),
		{ID: "ignored-1"}, // seen, never answered
		claimMsg("msg-β"),
		claimMsg("18446744073709551615"), // repeated within the batch
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []BridgeClaim{
		{MessageID: "18446744073709551615", Recipient: "u-18446744073709551615", ContextToken: "ctx-18446744073709551615"},
		{MessageID: "msg-β", Recipient: "u-msg-β", ContextToken: "ctx-msg-β"},
	}
	ign := cmpopts.IgnoreFields(BridgeClaim{}, "Claimed")
	if d := cmp.Diff(want, claims, ign); d != "" {
		t.Errorf("claims (-want +got):\n%s", d)
	}
	// The same ids again (a service delivering them twice): nothing new,
	// and an empty cursor keeps the stored one.
	again, err := s.BridgeAccept(ctx, "default", BridgeBatch{Messages: []BridgeMessage{claimMsg("msg-β"), claimMsg("ignored-1"), claimMsg("new")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0].MessageID != "new" {
		t.Errorf("second batch claims = %+v, want only the new message", again)
	}
	st, err := s.BridgeState(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if st.Cursor != "c1" || len(st.Claims) != 3 || st.Claims[2].MessageID != "new" {
		t.Errorf("state = %+v", st)
	}
	// Accounts are separate.
	other, err := s.BridgeAccept(ctx, "work", BridgeBatch{Cursor: "w1", Messages: []BridgeMessage{claimMsg("msg-β")}})
	if err != nil || len(other) != 1 {
		t.Errorf("other account: %+v, %v", other, err)
	}
}

func TestBridgeBatchTooLargeChangesNothing(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.BridgeAccept(ctx, "default", BridgeBatch{Cursor: "c1", Messages: []BridgeMessage{claimMsg("a")}}); err != nil {
		t.Fatal(err)
	}
	big := BridgeBatch{Cursor: "c2"}
	for i := range BridgeMaxBatch + 1 {
		big.Messages = append(big.Messages, claimMsg(fmt.Sprint("m", i)))
	}
	if _, err := s.BridgeAccept(ctx, "default", big); !errors.Is(err, ErrBridgeBatchTooLarge) {
		t.Fatalf("batch of %d: %v", len(big.Messages), err)
	}
	st, err := s.BridgeState(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if st.Cursor != "c1" || len(st.Claims) != 1 {
		t.Errorf("after a refused batch: cursor %q, %d claims", st.Cursor, len(st.Claims))
	}
	if seen, _ := s.BridgeSeen(ctx, "default", "m0"); seen {
		t.Error("a message of the refused batch is marked seen")
	}
	// Exactly the limit is accepted.
	big.Messages = big.Messages[:BridgeMaxBatch]
	if claims, err := s.BridgeAccept(ctx, "default", big); err != nil || len(claims) != BridgeMaxBatch {
		t.Fatalf("batch of %d: %d claims, %v", len(big.Messages), len(claims), err)
	}
}

func TestBridgeDedupeWindowKeepsNewest(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	const extra = 10
	var b BridgeBatch
	for i := range BridgeDedupeWindow + extra {
		b.Messages = append(b.Messages, BridgeMessage{ID: fmt.Sprint("m", i)})
		if len(b.Messages) == 1000 {
			if _, err := s.BridgeAccept(ctx, "default", b); err != nil {
				t.Fatal(err)
			}
			b.Messages = nil
		}
	}
	if _, err := s.BridgeAccept(ctx, "default", b); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   string
		seen bool
	}{{"m0", false}, {fmt.Sprint("m", extra-1), false}, {fmt.Sprint("m", extra), true}, {fmt.Sprint("m", BridgeDedupeWindow+extra-1), true}} {
		if got, err := s.BridgeSeen(ctx, "default", c.id); err != nil || got != c.seen {
			t.Errorf("seen %s = %v (%v), want %v", c.id, got, err, c.seen)
		}
	}
	var count int
	if err := s.r.QueryRow(`SELECT count(*) FROM bridge_seen WHERE account = 'default'`).Scan(&count); err != nil || count != BridgeDedupeWindow {
		t.Errorf("%d ids kept (%v), want %d", count, err, BridgeDedupeWindow)
	}
}

func TestBridgeCompleteMakesPendingReply(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.BridgeAccept(ctx, "default", BridgeBatch{Cursor: "c", Messages: []BridgeMessage{claimMsg("1"), claimMsg("2")}}); err != nil {
		t.Fatal(err)
	}
	chunks := []BridgeChunk{{N: 0, ClientID: "cid-0", Text: "part one"}, {N: 1, ClientID: "cid-1", Text: "part two"}}
	if err := s.BridgeComplete(ctx, "default", "2", chunks); err != nil {
		t.Fatal(err)
	}
	if err := s.BridgeComplete(ctx, "default", "2", chunks); !errors.Is(err, ErrNotFound) {
		t.Errorf("completing twice: %v, want ErrNotFound", err)
	}
	st, err := s.BridgeState(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	want := []BridgeReply{{MessageID: "2", Recipient: "u-2", ContextToken: "ctx-2", Chunks: chunks}}
	if d := cmp.Diff(want, st.Replies, cmpopts.IgnoreFields(BridgeReply{}, "Created")); d != "" {
		t.Errorf("replies (-want +got):\n%s", d)
	}
	if len(st.Claims) != 1 || st.Claims[0].MessageID != "1" {
		t.Errorf("claims = %+v, want message 1 only", st.Claims)
	}
	if err := s.BridgeChunkSent(ctx, "default", "2", 0); err != nil {
		t.Fatal(err)
	}
	st, _ = s.BridgeState(ctx, "default")
	if len(st.Replies) != 1 || len(st.Replies[0].Chunks) != 1 || st.Replies[0].Chunks[0].ClientID != "cid-1" {
		t.Errorf("after the first chunk was sent: %+v", st.Replies)
	}
	if err := s.BridgeDropReply(ctx, "default", "2"); err != nil {
		t.Fatal(err)
	}
	if st, _ = s.BridgeState(ctx, "default"); len(st.Replies) != 0 {
		t.Errorf("after drop: %+v", st.Replies)
	}
	// A claim with nothing to send just ends.
	if err := s.BridgeComplete(ctx, "default", "1", nil); err != nil {
		t.Fatal(err)
	}
	if st, _ = s.BridgeState(ctx, "default"); len(st.Claims) != 0 || len(st.Replies) != 0 {
		t.Errorf("after an empty completion: %+v", st)
	}
	if err := s.BridgeComplete(ctx, "default", "x", []BridgeChunk{{Text: "no id"}}); err == nil {
		t.Error("a chunk without a client id was accepted")
	}
}

// BridgeCompleteAll ends several claims in one transaction: all of them,
// or none when one claim does not exist.
func TestBridgeCompleteAllIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.BridgeAccept(ctx, "default", BridgeBatch{Cursor: "c", Messages: []BridgeMessage{claimMsg("1"), claimMsg("2"), claimMsg("3")}}); err != nil {
		t.Fatal(err)
	}
	busy := func(id string) BridgeCompletion {
		return BridgeCompletion{MessageID: id, Chunks: []BridgeChunk{{N: 0, ClientID: "cid-" + id, Text: "busy"}}}
	}
	if err := s.BridgeCompleteAll(ctx, "default", []BridgeCompletion{busy("1"), busy("missing")}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a batch with an unknown claim: %v, want ErrNotFound", err)
	}
	st, _ := s.BridgeState(ctx, "default")
	if len(st.Claims) != 3 || len(st.Replies) != 0 {
		t.Fatalf("a failed batch changed the state: %+v", st)
	}
	if err := s.BridgeCompleteAll(ctx, "default", []BridgeCompletion{busy("1"), busy("3")}); err != nil {
		t.Fatal(err)
	}
	st, _ = s.BridgeState(ctx, "default")
	var ids []string
	for _, r := range st.Replies {
		ids = append(ids, r.MessageID+":"+r.Chunks[0].ClientID)
	}
	if d := cmp.Diff([]string{"1:cid-1", "3:cid-3"}, ids); d != "" || len(st.Claims) != 1 || st.Claims[0].MessageID != "2" {
		t.Errorf("replies (-want +got):\n%s\nclaims %+v, want message 2 only", d, st.Claims)
	}
}

// A failed commit leaves neither the claims nor the cursor: they move
// together or not at all.
func TestBridgeAcceptIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	fail := false
	s := openAt(t, t.TempDir()+"/scv.db", func(o *Options) {
		o.Fault = func(op string) error {
			if fail && op == "accept bridge batch" {
				return errors.New("injected")
			}
			return nil
		}
	})
	if _, err := s.BridgeAccept(ctx, "default", BridgeBatch{Cursor: "c1", Messages: []BridgeMessage{claimMsg("1")}}); err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := s.BridgeAccept(ctx, "default", BridgeBatch{Cursor: "c2", Messages: []BridgeMessage{claimMsg("2")}}); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("faulty accept: %v", err)
	}
	st, _ := s.BridgeState(ctx, "default")
	if st.Cursor != "c1" || len(st.Claims) != 1 {
		t.Errorf("after a failed accept: cursor %q, claims %+v", st.Cursor, st.Claims)
	}
	if seen, _ := s.BridgeSeen(ctx, "default", "2"); seen {
		t.Error("message of the failed batch marked seen")
	}
}

func TestBridgeBindAndForget(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if err := s.BridgeBind(ctx, "default", "fp-a"); err != nil {
		t.Fatal(err)
	}
	if err := s.BridgeBind(ctx, "default", "fp-a"); err != nil {
		t.Errorf("same identity again: %v", err)
	}
	var be *BindingError
	if err := s.BridgeBind(ctx, "default", "fp-b"); !errors.As(err, &be) || be.Bound != "fp-a" {
		t.Fatalf("another identity: %v", err)
	}
	if _, err := s.BridgeAccept(ctx, "default", BridgeBatch{Cursor: "c", Messages: []BridgeMessage{claimMsg("1")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.BridgeComplete(ctx, "default", "1", []BridgeChunk{{ClientID: "c", Text: "t"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.BridgeSetSession(ctx, "default", BridgeSession{UserID: "u", SessionID: "s_1", Used: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.BridgeForget(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	st, err := s.BridgeState(ctx, "default")
	if err != nil || st.Fingerprint != "" || st.Cursor != "" || len(st.Claims)+len(st.Replies) != 0 {
		t.Errorf("after forget: %+v, %v", st, err)
	}
	if seen, _ := s.BridgeSeen(ctx, "default", "1"); seen {
		t.Error("seen ids survive forget")
	}
	if _, err := s.BridgeSession(ctx, "default", "", "u"); !errors.Is(err, ErrNotFound) {
		t.Errorf("session map survives forget: %v", err)
	}
	if err := s.BridgeBind(ctx, "default", "fp-b"); err != nil {
		t.Errorf("bind after forget: %v", err)
	}
}

func TestBridgeSessions(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	direct := BridgeSession{UserID: "alice", SessionID: "s_direct", Used: at}
	group := BridgeSession{GroupID: "g1", UserID: "alice", SessionID: "s_group", NoTools: true, Used: at}
	for _, x := range []BridgeSession{direct, group} {
		if err := s.BridgeSetSession(ctx, "default", x); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []BridgeSession{direct, group} {
		got, err := s.BridgeSession(ctx, "default", want.GroupID, want.UserID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Used.Equal(want.Used) || got.SessionID != want.SessionID || got.NoTools != want.NoTools {
			t.Errorf("session of %q/%q = %+v, want %+v", want.GroupID, want.UserID, got, want)
		}
	}
	direct.SessionID, direct.Used = "s_new", at.Add(time.Hour)
	if err := s.BridgeSetSession(ctx, "default", direct); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.BridgeSession(ctx, "default", "", "alice"); got.SessionID != "s_new" {
		t.Errorf("replaced session = %+v", got)
	}
	if err := s.BridgeDropSession(ctx, "default", "", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BridgeSession(ctx, "default", "", "alice"); !errors.Is(err, ErrNotFound) {
		t.Errorf("dropped session: %v", err)
	}
	if _, err := s.BridgeSession(ctx, "default", "g1", "alice"); err != nil {
		t.Errorf("group session went with the direct one: %v", err)
	}
}
