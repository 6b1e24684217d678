package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/store"
)

// openDB opens the instance's session database the way `scv sessions`
// does (holding nothing), for a test to look at.
func (in *instance) openDB() *store.Store {
	in.t.Helper()
	st, err := store.Open(in.t.Context(), store.Options{Path: filepath.Join(in.home, "state", "scv.db")})
	if err != nil {
		in.t.Fatalf("open the session database: %v", err)
	}
	return st
}

// slowModel is a fake model server that waits up to maxDelay before each
// answer, so a turn takes long enough to be killed in the middle of it.
func slowModel(t *testing.T, h *modeltest.Handler, rng *rand.Rand, maxDelay time.Duration) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := time.Duration(rng.Int64N(int64(maxDelay)))
		mu.Unlock()
		time.Sleep(d)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// scriptCrashTurn queues one multi-step turn: a bash call (approved by
// the client), a read, then the answer.
func scriptCrashTurn(h *modeltest.Handler, i int) {
	h.Script(modeltest.ToolCall("c1", "bash", `{"command":"echo step-one-`+fmt.Sprint(i)+`"}`))
	h.Script(modeltest.ToolCall("c2", "read", `{"path":"a.txt"}`))
	h.Script(modeltest.Text("answer ", fmt.Sprint(i)), modeltest.Usage(100, 5))
}

// crashRun is what the client saw of one turn.
type crashRun struct {
	turnID    string
	completed bool
	lines     [][]byte // every event of the turn as received, tool.progress aside
	// unseen marks a turn stored completed whose turn.completed never
	// arrived: the kill fell between the commit and the send (a turn is
	// durable before its client sees it complete, so this is allowed);
	// the events received are then a prefix of those stored.
	unseen bool
}

// driveTurn sends prompt, approves every approval, and collects the turn's
// events until its end or the end of the connection.
func driveTurn(t *testing.T, c *client.Conn, sid, prompt string) crashRun {
	var run crashRun
	if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: prompt}); err != nil {
		return run
	}
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				return run
			}
			te, isTurn := ev.(proto.TurnEvent)
			if !isTurn || (run.turnID != "" && te.Turn().TurnID != run.turnID) {
				continue
			}
			run.turnID = te.Turn().TurnID
			if _, progress := ev.(*proto.ToolProgress); !progress {
				b, _ := proto.EncodeEvent(ev)
				run.lines = append(run.lines, b)
			}
			switch e := ev.(type) {
			case *proto.ApprovalRequested:
				_ = c.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: e.ApprovalID, Approved: true})
			case *proto.TurnCompleted:
				run.completed = true
				return run
			case *proto.TurnFailed, *proto.TurnCancelled:
				t.Errorf("turn %q ended with %s", prompt, ev.EventType())
				return run
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("turn %q: no event within 30 s", prompt)
		}
	}
}

// TestDaemonCrashSafety SIGKILLs the real daemon at random points of a
// multi-step turn (model requests, an approved bash call, a read), again
// and again on one session, then restarts it: the database always opens
// and passes its integrity checks; every turn the client saw completed is
// stored whole, its events byte for byte as they were sent, and the session
// resumes with it; no turn is half-applied (the history holds exactly the
// completed turns' prompts); the turn that was running is marked
// interrupted. 100 kills, 10 with -short; the full run stops early after
// a time budget (with at least 25 kills).
func TestDaemonCrashSafety(t *testing.T) {
	kills, budget := 100, 3*time.Minute
	if testing.Short() {
		kills = 10
	}
	in := newInstance(t, "")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	// Each daemon gets a new model server (a new port): the session,
	// stored at the previous one, is moved there explicitly on resume.
	var modelURL string
	seed := func(h *modeltest.Handler) {
		srv := slowModel(t, h, rng, 15*time.Millisecond)
		modelURL = srv.URL
		if err := os.WriteFile(filepath.Join(in.home, "config.toml"), []byte(providerConfig(srv.URL)), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// A first turn, not killed, creates the session and times a turn.
	h := modeltest.NewHandler()
	seed(h)
	scriptCrashTurn(h, 0)
	d := in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{Origin: proto.OriginTUI}).SessionID
	began := time.Now()
	first := driveTurn(t, c, sid, "turn 0")
	turnTime := time.Since(began)
	if !first.completed {
		t.Fatal("the first turn did not complete")
	}
	c.Close()
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.done

	completed := map[string]crashRun{first.turnID: first} // by turn id
	prompts := []string{"turn 0"}                         // of completed turns, in order
	var pending string                                    // the turn id killed while running
	midTurn, unseen, start := 0, 0, time.Now()
	i := 1
	for ; i <= kills; i++ {
		if i > 25 && time.Since(start) > budget {
			t.Logf("time budget reached after %d kills", i-1)
			break
		}
		h := modeltest.NewHandler()
		seed(h)
		scriptCrashTurn(h, i)
		d := in.startDaemon(in.env)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		c, err := in.dial(ctx)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		// Resuming checks the last kill: every completed turn is there with
		// its events as sent, and the killed one is interrupted.
		res, err := client.CallFor[*proto.SessionResumed](ctx, c, &proto.SessionResume{SessionID: sid, MaxTurns: proto.MaxResumeTurns, BaseURL: modelURL})
		cancel()
		if err != nil {
			t.Fatalf("kill %d: resume: %v", i-1, err)
		}
		checkResumed(t, i-1, res, completed, pending)
		if pending != "" {
			midTurn++
		}
		// The kill: anywhere from the turn's start to a little after a
		// whole turn's time.
		kill := time.AfterFunc(time.Duration(rng.Int64N(int64(turnTime*3/2+5*time.Millisecond))), func() {
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		})
		prompt := fmt.Sprintf("turn %d", i)
		run := driveTurn(t, c, sid, prompt)
		<-d.done // killed, whenever that was
		kill.Stop()
		c.Close()
		pending = ""
		if !run.completed && run.turnID != "" && storedCompleted(t, in, sid, run.turnID) {
			run.unseen = true
			unseen++
		}
		if run.completed || run.unseen {
			completed[run.turnID] = run
			prompts = append(prompts, prompt)
		} else {
			pending = run.turnID // "" when the kill came before turn.started
		}
		checkDatabase(t, in, i, sid, prompts)
	}
	// A last start recovers the last kill.
	d = in.startDaemon(in.env)
	c = in.connect()
	res, err := client.CallFor[*proto.SessionResumed](t.Context(), c, &proto.SessionResume{SessionID: sid, MaxTurns: proto.MaxResumeTurns, BaseURL: modelURL})
	if err != nil {
		t.Fatal(err)
	}
	checkResumed(t, i-1, res, completed, pending)
	t.Logf("%d kills: %d turns completed (%d of them killed between their commit and turn.completed), %d killed mid-turn", i-1, len(completed)-1, unseen, midTurn)
	if midTurn == 0 {
		t.Error("no kill landed in the middle of a turn; the kill window is wrong")
	}
}

// checkResumed verifies a session.resumed after kill k.
func checkResumed(t *testing.T, k int, res *proto.SessionResumed, completed map[string]crashRun, pending string) {
	t.Helper()
	seen := 0
	for _, st := range res.Turns {
		if run, ok := completed[st.TurnID]; ok {
			seen++
			if st.State != proto.TurnStateCompleted {
				t.Errorf("kill %d: turn %s (%q) reached turn.completed but is stored %s", k, st.TurnID, st.Prompt, st.State)
			}
			got := make([][]byte, len(st.Events))
			for i, e := range st.Events {
				got[i] = e
			}
			if run.unseen && len(got) >= len(run.lines) {
				got = got[:len(run.lines)]
			}
			if !slices.EqualFunc(got, run.lines, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Errorf("kill %d: turn %s's stored events differ from those sent:\nstored %s\nsent   %s", k, st.TurnID, got, run.lines)
			}
			continue
		}
		switch st.State {
		case proto.TurnStateInterrupted:
		case proto.TurnStateCompleted:
			t.Errorf("kill %d: turn %s (%q) is stored completed but no client saw it complete", k, st.TurnID, st.Prompt)
		default:
			t.Errorf("kill %d: turn %s (%q) is %s after a restart; want interrupted", k, st.TurnID, st.Prompt, st.State)
		}
	}
	if seen != len(completed) {
		t.Errorf("kill %d: the resumed session holds %d of the %d completed turns", k, seen, len(completed))
	}
	if pending != "" && !slices.ContainsFunc(res.Turns, func(st proto.StoredTurn) bool { return st.TurnID == pending && st.State == proto.TurnStateInterrupted }) {
		t.Errorf("kill %d: the turn killed while running (%s) is not marked interrupted", k, pending)
	}
}

// storedCompleted reports whether turn id of session sid is stored
// completed.
func storedCompleted(t *testing.T, in *instance, sid, id string) bool {
	t.Helper()
	st := in.openDB()
	defer st.Close()
	turns, err := st.Outline(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range turns {
		if x.ID == id {
			return x.State == store.TurnCompleted
		}
	}
	return false
}

// checkDatabase opens the file right after kill k: it passes the
// integrity checks, and the history holds exactly the prompts of the
// completed turns, in order.
func checkDatabase(t *testing.T, in *instance, k int, sid string, prompts []string) {
	t.Helper()
	st := in.openDB()
	defer st.Close()
	if err := st.Check(t.Context()); err != nil {
		t.Fatalf("kill %d: %v", k, err)
	}
	hist, err := st.History(t.Context(), sid)
	if err != nil {
		t.Fatalf("kill %d: %v", k, err)
	}
	var users []string
	for _, m := range hist {
		var msg struct{ Role, Content string }
		if err := json.Unmarshal(m, &msg); err != nil {
			t.Fatalf("kill %d: history message %s: %v", k, m, err)
		}
		if msg.Role == "user" {
			users = append(users, msg.Content)
		}
	}
	if !slices.Equal(users, prompts) {
		t.Fatalf("kill %d: the history's prompts are %q, want the completed turns' %q (a turn half-applied or lost)", k, users, prompts)
	}
}

// TestDaemonAndExecWriteAtOnce runs turns in the daemon for as long as
// `scv exec` runs keep starting in the same workspace, all writing to one
// database: every turn completes (no "database is locked" reaches anyone)
// and every one is stored.
func TestDaemonAndExecWriteAtOnce(t *testing.T) {
	minDaemonTurns, execRuns := 200, 50
	if testing.Short() {
		minDaemonTurns, execRuns = 20, 8
	}
	fm := modeltest.New(t)
	for range 20 * (minDaemonTurns + execRuns) {
		fm.Script(modeltest.Text("ok"))
	}
	in := newInstance(t, providerConfig(fm.URL()))
	in.startDaemon(in.env)
	c := in.connect()
	sid := in.startSession(c, proto.SessionStart{Origin: proto.OriginTUI}).SessionID
	stop := make(chan struct{})
	type outcome struct {
		turns int
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		i := 0
		for ; i < minDaemonTurns || !closed(stop); i++ {
			if err := c.Send(&proto.TurnStart{SessionID: sid, Prompt: fmt.Sprintf("daemon turn %d", i)}); err != nil {
				done <- outcome{i, err}
				return
			}
			for ended := false; !ended; {
				ev, ok := <-c.Events()
				if !ok {
					done <- outcome{i, fmt.Errorf("connection ended: %v", c.Err())}
					return
				}
				switch e := ev.(type) {
				case *proto.TurnCompleted:
					ended = true
				case *proto.TurnFailed:
					done <- outcome{i, fmt.Errorf("daemon turn %d failed: %s: %s", i, e.Code, e.Message)}
					return
				case *proto.Error:
					done <- outcome{i, fmt.Errorf("daemon turn %d: error %s: %s", i, e.Code, e.Message)}
					return
				}
			}
		}
		done <- outcome{i, nil}
	}()
	for i := range execRuns {
		r := in.run(in.env, "", "exec", fmt.Sprintf("exec turn %d", i))
		if r.code != 0 || strings.Contains(r.stderr, "locked") {
			close(stop)
			t.Fatalf("exec %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	close(stop)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	daemonTurns := res.turns
	t.Logf("%d daemon turns while %d exec runs ran", daemonTurns, execRuns)
	st := in.openDB()
	defer st.Close()
	if err := st.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	page, err := st.ListSessions(t.Context(), store.ListOptions{Limit: execRuns + 10})
	if err != nil {
		t.Fatal(err)
	}
	execSessions := 0
	for _, x := range page.Sessions {
		turns, _, err := st.Turns(t.Context(), x.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if x.ID == sid {
			want = daemonTurns
		} else {
			execSessions++
		}
		if len(turns) != want {
			t.Errorf("session %s (%s) holds %d turns, want %d", x.ID, x.Origin, len(turns), want)
		}
		for _, tn := range turns {
			if tn.State != store.TurnCompleted {
				t.Errorf("session %s turn %q is %s", x.ID, tn.Prompt, tn.State)
			}
		}
	}
	if execSessions != execRuns {
		t.Errorf("%d exec sessions stored, want %d", execSessions, execRuns)
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
