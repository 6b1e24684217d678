package clawbot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/clawbot/ilinktest"
	"github.com/scv-agent/scv/internal/store"
)

// Only user text messages with a sender, an id and a context token are
// answered, each exactly once; everything else is remembered as seen and
// never answered; ids are kept exactly.
func TestMessageAcceptance(t *testing.T) {
	h := newHarness(t)
	nonText := ilinktest.Text(2, "alice", "")
	nonText["item_list"] = []any{map[string]any{"type": 2, "image_item": map[string]any{"url": "x"}}}
	bot := ilinktest.Text(3, "alice", "bot echo")
	bot["message_type"] = 2
	noToken := ilinktest.Text(4, "alice", "no token")
	delete(noToken, "context_token")
	empty := ilinktest.Text(5, "alice", "")
	big := json.RawMessage(`{"message_id":18446744073709551615,"from_user_id":"alice","message_type":1,"context_token":"ctx-big","item_list":[{"type":1,"text_item":{"text":"u64"}}]}`)
	h.fake.Batch("c1", big, nonText, bot, noToken, empty, ilinktest.Text("ab-ß", "bob", "string id"), big)
	h.fake.Batch("c2", big, ilinktest.Text("ab-ß", "bob", "again"), ilinktest.Text(6, "alice", "later"))
	h.start()
	sent := h.waitSent(3)
	st := h.waitIdle("default")
	want := []string{"alice: echo: u64", "bob: echo: string id", "alice: echo: later"}
	got := texts(sent)
	slices.Sort(got)
	slices.Sort(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replies (-want +got):\n%s", d)
	}
	tokens := map[string]string{}
	for _, s := range sent {
		tokens[s.Text] = s.ContextToken
	}
	if tokens["echo: u64"] != "ctx-big" || tokens["echo: string id"] != "ctx-ab-ß" {
		t.Errorf("context tokens = %v", tokens)
	}
	if n := len(h.fd.Turns()); n != 3 {
		t.Errorf("%d turns ran, want 3: %+v", n, h.fd.Turns())
	}
	for _, id := range []string{"18446744073709551615", "2", "3", "4", "5", "ab-ß", "6"} {
		if seen, err := h.store.BridgeSeen(context.Background(), "default", id); err != nil || !seen {
			t.Errorf("message %s seen = %v, %v", id, seen, err)
		}
	}
	if st.Cursor != "c2" {
		t.Errorf("cursor = %q, want c2", st.Cursor)
	}
	// No more sends came late.
	time.Sleep(100 * time.Millisecond)
	if n := len(h.fake.Sent()); n != 3 {
		t.Errorf("%d sends, want 3", n)
	}
}

// A batch of more than 4,096 messages is refused before anything runs or
// the cursor moves; polling goes on from the old cursor.
func TestOversizedBatchRefused(t *testing.T) {
	h := newHarness(t)
	h.fake.Batch("c1", ilinktest.Text(1, "alice", "first"))
	var msgs []any
	for i := range store.BridgeMaxBatch + 1 {
		msgs = append(msgs, ilinktest.Text(1000+i, "alice", "flood"))
	}
	h.fake.Batch("c-flood", msgs...)
	h.fake.Batch("c3", ilinktest.Text(2, "alice", "after"))
	h.start()
	h.waitSent(2)
	st := h.waitIdle("default")
	for _, tr := range h.fd.Turns() {
		if tr.prompt == "flood" {
			t.Fatal("a message of the refused batch ran")
		}
	}
	cursors := h.fake.Cursors()
	i := slices.Index(cursors, "c1")
	if i < 0 || len(cursors) < i+2 || cursors[i+1] != "c1" {
		t.Errorf("cursors sent = %v: the poll after the refused batch must repeat c1", cursors)
	}
	if seen, _ := h.store.BridgeSeen(context.Background(), "default", "1000"); seen {
		t.Error("a message of the refused batch is marked seen")
	}
	if st.Cursor != "c3" {
		t.Errorf("cursor = %q", st.Cursor)
	}
	if !slices.Contains(cursors, "c1") || slices.Contains(cursors, "c-flood") {
		t.Errorf("the refused batch's cursor was used: %v", cursors)
	}
}

// Retryable send failures are retried under the same client id; a final
// refusal drops the rest of that reply and polling goes on.
func TestSendRetryAndFinality(t *testing.T) {
	h := newHarness(t)
	h.fake.SendAnswer(
		ilinktest.Answer{Status: 500}, ilinktest.Answer{Status: 401}, ilinktest.Answer{Status: 408}, ilinktest.Answer{Status: 429},
		ilinktest.Answer{Raw: "fine"}, // the first reply arrives at its 5th attempt
		ilinktest.Answer{Status: 400, JSON: map[string]any{"errmsg": "bad request"}},        // the second reply's first chunk: final
		ilinktest.Answer{JSON: map[string]any{"ret": -3, "errmsg": "user blocked the bot"}}, // the third reply: refused in a 2xx
	)
	long := strings.Repeat("x", clawbot.MaxChunkChars+10) // two chunks
	h.fd.reply = func(ctx context.Context, _ *fakeSession, prompt string, _ bool) (clawbot.Outcome, error) {
		if prompt == "long" {
			return clawbot.Outcome{State: clawbot.TurnCompleted, Answer: long}, nil
		}
		return clawbot.Outcome{State: clawbot.TurnCompleted, Answer: "echo: " + prompt}, nil
	}
	h.fake.Batch("c1", ilinktest.Text(1, "alice", "one"))
	h.start()
	sent := h.waitSent(5)
	for i, s := range sent[:5] {
		if s.ClientID != sent[0].ClientID || s.Text != "echo: one" {
			t.Errorf("attempt %d: %+v, want the same chunk under client id %s", i+1, s, sent[0].ClientID)
		}
	}
	h.waitIdle("default")
	h.fake.Batch("c2", ilinktest.Text(2, "alice", "long"))
	sent = h.waitSent(6)
	h.waitIdle("default")
	h.fake.Batch("c3", ilinktest.Text(3, "bob", "three"))
	h.waitSent(7)
	h.waitIdle("default")
	h.fake.Batch("c4", ilinktest.Text(4, "alice", "four"))
	sent = h.waitSent(8)
	h.waitIdle("default")
	time.Sleep(50 * time.Millisecond)
	sent = h.fake.Sent()
	got := texts(sent[5:])
	want := []string{"alice: " + long[:clawbot.MaxChunkChars], "bob: echo: three", "alice: echo: four"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sends after the retried reply (-want +got):\n%s", d)
	}
	if ids := map[string]bool{sent[0].ClientID: true, sent[5].ClientID: true, sent[6].ClientID: true, sent[7].ClientID: true}; len(ids) != 4 {
		t.Errorf("client ids reused across chunks: %v", ids)
	}
}

// Turns of one conversation run in order; another conversation's turn
// runs meanwhile.
func TestConversationsOrderAndConcurrency(t *testing.T) {
	h := newHarness(t)
	bobDone := make(chan struct{})
	h.fd.reply = func(ctx context.Context, _ *fakeSession, prompt string, _ bool) (clawbot.Outcome, error) {
		if prompt == "a1" {
			select { // alice's first turn waits for bob's: they overlap
			case <-bobDone:
			case <-time.After(5 * time.Second):
				return clawbot.Outcome{State: clawbot.TurnFailed, Code: "no_overlap"}, nil
			}
		}
		if prompt == "b1" {
			defer close(bobDone)
		}
		return clawbot.Outcome{State: clawbot.TurnCompleted, Answer: "done " + prompt}, nil
	}
	h.fake.Batch("c1", ilinktest.Text(1, "alice", "a1"), ilinktest.Text(2, "alice", "a2"), ilinktest.Text(3, "bob", "b1"), ilinktest.Text(4, "alice", "a3"))
	h.start()
	h.waitSent(4)
	h.waitIdle("default")
	var alice []string
	for _, tr := range h.fd.Turns() {
		if strings.HasPrefix(tr.prompt, "a") {
			alice = append(alice, tr.prompt)
		}
	}
	if d := cmp.Diff([]string{"a1", "a2", "a3"}, alice); d != "" {
		t.Errorf("alice's turns out of order (-want +got):\n%s", d)
	}
	for _, s := range h.fake.Sent() {
		if !strings.HasPrefix(s.Text, "done ") {
			t.Errorf("reply %q: the turns did not overlap", s.Text)
		}
	}
	var aliceSent []string
	for _, s := range h.fake.Sent() {
		if s.To == "alice" {
			aliceSent = append(aliceSent, s.Text)
		}
	}
	if d := cmp.Diff([]string{"done a1", "done a2", "done a3"}, aliceSent); d != "" {
		t.Errorf("alice's replies out of order (-want +got):\n%s", d)
	}
}

// At most four conversations of an account run at once.
func TestConcurrencyCap(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	var once sync.Once
	h.fd.reply = func(ctx context.Context, _ *fakeSession, prompt string, _ bool) (clawbot.Outcome, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return clawbot.Outcome{State: clawbot.TurnCompleted, Answer: "ok"}, nil
	}
	var msgs []any
	for i := range 7 {
		msgs = append(msgs, ilinktest.Text(i+1, fmt.Sprint("user", i), "hi"))
	}
	h.fake.Batch("c1", msgs...)
	h.start()
	h.waitFor("four turns running", func() bool {
		h.fd.mu.Lock()
		defer h.fd.mu.Unlock()
		return h.fd.running == 4
	})
	time.Sleep(100 * time.Millisecond) // a fifth would have started by now
	h.fd.mu.Lock()
	running := h.fd.running
	h.fd.mu.Unlock()
	if running != 4 {
		t.Errorf("%d turns running, want 4", running)
	}
	once.Do(func() { close(release) })
	h.waitSent(7)
	if h.fd.maxRunning != 4 {
		t.Errorf("at most %d turns ran at once, want 4", h.fd.maxRunning)
	}
}

// One session per direct-chat sender and one per (group, sender); all of
// them tool-free under remote_tools = "none".
func TestSessionsPerConversation(t *testing.T) {
	h := newHarness(t)
	h.fake.Batch("c1", ilinktest.Text(1, "alice", "x"), ilinktest.GroupText(2, "g1", "alice", "x"), ilinktest.Text(3, "bob", "x"),
		ilinktest.GroupText(4, "g1", "bob", "x"), ilinktest.GroupText(5, "g2", "alice", "x"))
	h.fake.Batch("c2", ilinktest.Text(6, "alice", "y"), ilinktest.GroupText(7, "g1", "alice", "y"))
	h.start()
	h.waitSent(7)
	h.waitIdle("default")
	bySession := map[string][]string{}
	for _, tr := range h.fd.Turns() {
		bySession[tr.session] = append(bySession[tr.session], tr.prompt)
	}
	if len(bySession) != 5 {
		t.Errorf("%d sessions, want 5 (alice, alice@g1, bob, bob@g1, alice@g2): %v", len(bySession), bySession)
	}
	for _, s := range h.fd.Specs() {
		if !s.NoTools || s.Workspace != h.ws {
			t.Errorf("session spec %+v, want tool-free in %s", s, h.ws)
		}
	}
	for _, c := range []struct{ group, user string }{{"", "alice"}, {"g1", "alice"}, {"", "bob"}, {"g1", "bob"}, {"g2", "alice"}} {
		rec, err := h.store.BridgeSession(context.Background(), "default", c.group, c.user)
		if err != nil || len(bySession[rec.SessionID]) == 0 {
			t.Errorf("recorded session of %+v = %+v, %v", c, rec, err)
		}
	}
}

// A conversation idle for the idle timeout loses its session: the next
// message starts a new one.
func TestIdleSessionsAreDropped(t *testing.T) {
	h := newHarness(t)
	h.opts.Tuning.IdleTimeout = 300 * time.Millisecond
	h.fake.Batch("c1", ilinktest.Text(1, "alice", "x"))
	h.start()
	h.waitSent(1)
	h.waitFor("the idle session to be closed and forgotten", func() bool {
		h.fd.mu.Lock()
		closed := len(h.fd.closed)
		h.fd.mu.Unlock()
		_, err := h.store.BridgeSession(context.Background(), "default", "", "alice")
		return closed == 1 && errors.Is(err, store.ErrNotFound)
	})
	h.fake.Batch("c2", ilinktest.Text(2, "alice", "y"))
	h.waitSent(2)
	turns := h.fd.Turns()
	if len(turns) != 2 || turns[0].session == turns[1].session {
		t.Errorf("turns %+v: want a new session after the idle drop", turns)
	}
}

// Sessions are resumed through the daemon when it can; when it cannot, a
// fresh session starts.
func TestSessionResumeAndFallback(t *testing.T) {
	for _, resumable := range []bool{true, false} {
		t.Run(fmt.Sprint("resumable=", resumable), func(t *testing.T) {
			h := newHarness(t)
			h.fd.resumable = resumable
			if err := h.store.BridgeSetSession(context.Background(), "default", store.BridgeSession{UserID: "alice", SessionID: "s_old", NoTools: true, Used: time.Now()}); err != nil {
				t.Fatal(err)
			}
			// A recorded owner session is never resumed as a tool-free one.
			if err := h.store.BridgeSetSession(context.Background(), "default", store.BridgeSession{UserID: "bob", SessionID: "s_tools", NoTools: false, Used: time.Now()}); err != nil {
				t.Fatal(err)
			}
			h.fake.Batch("c1", ilinktest.Text(1, "alice", "x"), ilinktest.Text(2, "bob", "x"))
			h.start()
			h.waitSent(2)
			h.waitIdle("default")
			specs := map[string]string{}
			for _, s := range h.fd.Specs() {
				specs[s.Resume] = "asked"
			}
			if specs["s_old"] != "asked" || specs["s_tools"] != "" {
				t.Errorf("resume requests %v: want s_old only", h.fd.Specs())
			}
			rec, _ := h.store.BridgeSession(context.Background(), "default", "", "alice")
			if resumable != (rec.SessionID == "s_old") {
				t.Errorf("alice's session after start = %s (resumable %v)", rec.SessionID, resumable)
			}
		})
	}
}

// A claim left by a previous run is answered "please resend", never run
// again; a pending reply left by it is sent with its stored client id.
func TestRecoveryOfClaimsAndPendingReplies(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.store.BridgeBind(ctx, "default", clawbot.Credentials{BotID: botID, UserID: ownerID, BaseURL: h.fake.URL()}.Fingerprint()); err != nil {
		t.Fatal(err)
	}
	_, err := h.store.BridgeAccept(ctx, "default", store.BridgeBatch{Cursor: "c-old", Messages: []store.BridgeMessage{
		{ID: "1", Claim: true, Recipient: "alice", ContextToken: "ctx-1"},
		{ID: "2", Claim: true, Recipient: "bob", ContextToken: "ctx-2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.BridgeComplete(ctx, "default", "2", []store.BridgeChunk{{N: 0, ClientID: "scv-kept-id", Text: "stored answer"}}); err != nil {
		t.Fatal(err)
	}
	h.start()
	sent := h.waitSent(2)
	st := h.waitIdle("default")
	got := map[string]ilinktest.Sent{}
	for _, s := range sent {
		got[s.To] = s
	}
	if got["alice"].Text != "SCV restarted before finishing this; please resend." || got["alice"].ContextToken != "ctx-1" {
		t.Errorf("reply to the interrupted claim = %+v", got["alice"])
	}
	if got["bob"].Text != "stored answer" || got["bob"].ClientID != "scv-kept-id" {
		t.Errorf("pending reply = %+v", got["bob"])
	}
	if len(h.fd.Turns()) != 0 {
		t.Errorf("recovery ran turns: %+v", h.fd.Turns())
	}
	if cs := h.fake.Cursors(); len(cs) == 0 || cs[0] != "c-old" || st.Cursor != "c-old" {
		t.Errorf("cursors = %v, stored %q: polling must resume at c-old", cs, st.Cursor)
	}
}

// Failed, cancelled and overlong turns get short fixed replies; answers
// lose keys and host paths.
func TestRepliesAreShortAndSanitized(t *testing.T) {
	h := newHarness(t)
	h.opts.Tuning.ToolFreeLimit = 200 * time.Millisecond
	h.fd.reply = func(ctx context.Context, _ *fakeSession, prompt string, _ bool) (clawbot.Outcome, error) {
		switch prompt {
		case "fail":
			return clawbot.Outcome{State: clawbot.TurnFailed, Code: "provider_error"}, nil
		case "slow":
			<-ctx.Done()
			return clawbot.Outcome{State: clawbot.TurnCancelled}, nil
		case "leak":
			return clawbot.Outcome{State: clawbot.TurnCompleted, Answer: "token tok-default, key sk-configured-key-1, file " + h.ws + "/notes.txt, home " + h.layout.Home + "/config.toml"}, nil
		case "empty":
			return clawbot.Outcome{State: clawbot.TurnCompleted}, nil
		case "broken":
			return clawbot.Outcome{}, fmt.Errorf("connection reset at /secret/path")
		}
		return clawbot.Outcome{State: clawbot.TurnCancelled}, nil
	}
	h.fake.Batch("c1", ilinktest.Text(1, "u1", "fail"), ilinktest.Text(2, "u2", "slow"), ilinktest.Text(3, "u3", "leak"),
		ilinktest.Text(4, "u4", "empty"), ilinktest.Text(5, "u5", "cancel"), ilinktest.Text(6, "u6", "broken"))
	h.start()
	sent := h.waitSent(6)
	got := map[string]string{}
	for _, s := range sent {
		got[s.To] = s.Text
	}
	want := map[string]string{
		"u1": "Sorry, the model could not answer this right now. Please try again later.",
		"u2": "Sorry, this took too long and was stopped.",
		"u3": "token …, key …, file ./notes.txt, home $SCV_HOME/config.toml",
		"u4": "(The answer was empty.)",
		"u5": "Sorry, this was cancelled before an answer.",
		"u6": "Sorry, something went wrong while answering this. Please try again.",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("replies (-want +got):\n%s", d)
	}
}

// Authority: the owner in a direct chat of an account with remote_tools =
// "owner" gets tools and granted approvals; everyone else a tool-free
// session whose approvals are denied.
func TestAuthority(t *testing.T) {
	tests := []struct {
		name, remote, owner string
		msg                 map[string]any
		tools               bool
	}{
		{"owner direct, owner mode", clawbot.RemoteToolsOwner, ownerID, ilinktest.Text(1, ownerID, "x"), true},
		{"owner in a group", clawbot.RemoteToolsOwner, ownerID, ilinktest.GroupText(1, "g", ownerID, "x"), false},
		{"another sender", clawbot.RemoteToolsOwner, ownerID, ilinktest.Text(1, "mallory", "x"), false},
		{"no owner known", clawbot.RemoteToolsOwner, "", ilinktest.Text(1, "", "x"), false},
		{"owner direct, none mode", clawbot.RemoteToolsNone, ownerID, ilinktest.Text(1, ownerID, "x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.login("default", tt.owner)
			h.settings("default", clawbot.Settings{Enabled: true, RemoteTools: tt.remote})
			if tt.owner == "" {
				tt.msg["from_user_id"] = "someone" // a sender is needed to be answered at all
			}
			h.fake.Batch("c1", tt.msg)
			h.start()
			h.waitSent(1)
			specs, turns := h.fd.Specs(), h.fd.Turns()
			if len(specs) != 1 || specs[0].NoTools == tt.tools || len(turns) != 1 || turns[0].grant != tt.tools {
				t.Errorf("specs %+v, turns %+v; want tools %v", specs, turns, tt.tools)
			}
			wantTools := clawbot.RemoteToolsNone
			if tt.remote == clawbot.RemoteToolsOwner && tt.owner != "" {
				wantTools = clawbot.RemoteToolsOwner
			}
			if got := h.status("default").RemoteTools; got != wantTools {
				t.Errorf("effective remote tools = %s, want %s", got, wantTools)
			}
		})
	}
}
