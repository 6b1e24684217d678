package tui_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/scv-agent/scv/internal/proto"
)

// fakeDaemon speaks the protocol on $SCV_HOME/server.sock with a fixed
// script: every prompt proposes one bash call that needs approval.
type fakeDaemon struct {
	t  testing.TB
	ln net.Listener
	// blast, when set, plays that many whole turns right after
	// session.started, the last answer ending in "blast-finished".
	blast int

	mu       sync.Mutex
	starts   []proto.SessionStart
	conns    []net.Conn
	resolved []bool
	wg       sync.WaitGroup
}

func startFakeDaemon(t testing.TB, home string, blast int) *fakeDaemon {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(home, "server.sock"))
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{t: t, ln: ln, blast: blast}
	d.wg.Add(1)
	go d.accept()
	t.Cleanup(d.close)
	return d
}

func (d *fakeDaemon) close() {
	d.ln.Close()
	d.dropAll()
	d.wg.Wait()
}

// dropAll closes every client connection, as a dying daemon would.
func (d *fakeDaemon) dropAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
}

func (d *fakeDaemon) accept() {
	defer d.wg.Done()
	for {
		c, err := d.ln.Accept()
		if err != nil {
			return
		}
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.serve(c)
		}()
	}
}

func (d *fakeDaemon) serve(c net.Conn) {
	defer c.Close()
	var seq uint64
	emit := func(ev proto.Event) {
		if se, ok := ev.(proto.SessionEvent); ok {
			seq++
			se.Session().SessionID, se.Session().Seq = "s1", seq
		}
		b, _ := proto.EncodeEvent(ev)
		c.Write(append(b, '\n'))
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(nil, proto.MaxClientFrameBytes)
	for sc.Scan() {
		var env proto.Envelope
		if json.Unmarshal(sc.Bytes(), &env) != nil {
			return
		}
		switch env.Type {
		case proto.TypeInitialize:
			emit(req(env.RequestID, &proto.Initialized{ProtocolVersion: proto.Version, Server: proto.Peer{Name: "scv", Version: "fake"}}))
		case proto.TypeSessionStart:
			var s proto.SessionStart
			json.Unmarshal(sc.Bytes(), &s)
			d.mu.Lock()
			d.starts = append(d.starts, s)
			d.mu.Unlock()
			model := s.Model
			if model == "" {
				model = "fake-model"
			}
			c.Write([]byte(`{"type":"session.started","request_id":"` + env.RequestID + `","session_id":"s1","cwd":"` + s.Cwd + `","model":"` + model + `","context_max_tokens":8000,"tools":["bash"]}` + "\n"))
			for i := range d.blast {
				blastTurn(emit, i, i == d.blast-1)
			}
		case proto.TypeTurnStart:
			emit(&proto.TurnStarted{TurnHeader: th("t1")})
			emit(&proto.AssistantDelta{TurnHeader: th("t1"), Content: "Let me run it."})
			emit(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "Let me run it."})
			emit(&proto.ToolProposed{TurnHeader: th("t1"), CallID: "call1", Name: "bash", Arguments: json.RawMessage(`{"command":"echo hello-from-bash"}`)})
			emit(&proto.ApprovalRequested{TurnHeader: th("t1"), ApprovalID: "a1", CallID: "call1", Name: "bash", Risk: "process", Cwd: "/w", Summary: "echo hello-from-bash"})
		case proto.TypeApprovalResolve:
			var a proto.ApprovalResolve
			json.Unmarshal(sc.Bytes(), &a)
			d.mu.Lock()
			d.resolved = append(d.resolved, a.Approved)
			d.mu.Unlock()
			if a.Approved {
				emit(&proto.ToolStarted{TurnHeader: th("t1"), CallID: "call1", Name: "bash"})
				emit(&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "call1", Name: "bash", Success: true, Output: "hello-from-bash\n", Truncated: false})
				emit(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "All done: it printed hello-from-bash."})
			} else {
				emit(&proto.ToolCompleted{TurnHeader: th("t1"), CallID: "call1", Name: "bash", Success: false, Error: "denied", Output: "denied"})
				emit(&proto.AssistantCompleted{TurnHeader: th("t1"), Content: "Skipped."})
			}
			emit(&proto.TurnCompleted{TurnHeader: th("t1"), Steps: 2, Usage: &proto.Usage{InputTokens: 2000, OutputTokens: 20, TotalTokens: 2020}})
		}
	}
}

// blastTurn is one whole turn of scripted traffic without approvals.
func blastTurn(emit func(proto.Event), i int, last bool) {
	turn, call := fmt.Sprintf("b%d", i), fmt.Sprintf("bc%d", i)
	emit(&proto.TurnStarted{TurnHeader: th(turn)})
	for _, frag := range []string{"Looking at ", "the **repository** ", "now."} {
		emit(&proto.AssistantDelta{TurnHeader: th(turn), Content: frag})
	}
	emit(&proto.AssistantCompleted{TurnHeader: th(turn), Content: "Looking at the **repository** now."})
	emit(&proto.ToolProposed{TurnHeader: th(turn), CallID: call, Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la"}`)})
	emit(&proto.ToolStarted{TurnHeader: th(turn), CallID: call, Name: "bash"})
	emit(&proto.ToolCompleted{TurnHeader: th(turn), CallID: call, Name: "bash", Success: true, Output: strings.Repeat("-rw-r--r-- 1 ada ada 1234 file.go\n", 60)})
	answer := fmt.Sprintf("Turn %d: the repository has `60` files.", i)
	if last {
		answer += " blast-finished"
	}
	emit(&proto.AssistantCompleted{TurnHeader: th(turn), Content: answer})
	emit(&proto.TurnCompleted{TurnHeader: th(turn), Usage: &proto.Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100}})
}

// th is the header of an event of turn id; emit adds the session.
func th(id string) proto.TurnHeader { return proto.TurnHeader{TurnID: id} }

// req sets the request_id that ev answers.
func req[T proto.Event](id string, ev T) T {
	ev.Head().RequestID = id
	return ev
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestBinaryApproveAndQuit(t *testing.T) {
	scv := scvBinary(t)
	home, ws := t.TempDir(), t.TempDir()
	d := startFakeDaemon(t, home, 0)
	p := startSCV(t, 100, 30, scv, home, ws, "--model override-model")
	p.waitFor("override-model", "connected", "ready")
	p.submit("run the echo")
	s := p.waitFor("Approve this tool call?", "risk:    process", "echo hello-from-bash", "awaiting approval")
	if !strings.Contains(s, "› run the echo") {
		t.Errorf("prompt not in the transcript:\n%s", s)
	}
	p.keys("y")
	p.waitFor("hello-from-bash", "All done: it printed hello-from-bash.", "[done]", "ready")
	p.quit()

	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.starts) != 1 || d.starts[0].Model != "override-model" || d.starts[0].Cwd != ws {
		t.Errorf("session.start = %+v, want model override-model in %s", d.starts, ws)
	}
	if len(d.resolved) != 1 || !d.resolved[0] {
		t.Errorf("approval answers = %v, want one approval", d.resolved)
	}
}

// TestBinaryLostConnection: the daemon goes away; the TUI keeps its
// draft, tries to reconnect, Esc stops it and sending is refused; with a
// daemon back, Enter on an empty composer reconnects.
func TestBinaryLostConnection(t *testing.T) {
	scv := scvBinary(t)
	home := t.TempDir()
	d := startFakeDaemon(t, home, 0)
	p := startPane(t, 100, 30, shellQuote(scv)+" --scv-home "+shellQuote(home)+" tui")
	p.waitFor("connected", "ready")
	p.text("draft prompt")
	d.close()
	p.waitFor("daemon disconnected, reconnecting…", "connection to the SCV daemon on", "reconnecting (attempt")
	p.keys("Escape")
	p.waitFor("stopped reconnecting", "disconnected", "scv run", "scv start")
	p.keys("Enter") // sending is disabled; the draft stays
	p.waitFor("not connected (nothing was sent)", "> draft prompt")
	startFakeDaemon(t, home, 0)
	p.keys("C-c", "Enter") // clear the draft, then reconnect
	p.waitFor("reconnected to the daemon", "Enter continues this session", "● connected")
	p.quit()
}

func TestBinarySIGTERMRestoresTerminal(t *testing.T) {
	scv := scvBinary(t)
	home := t.TempDir()
	startFakeDaemon(t, home, 0)
	p := startPane(t, 100, 30, shellQuote(scv)+" --scv-home "+shellQuote(home))
	p.waitFor("connected", "ready")
	if got := p.format("#{alternate_on}"); got != "1" {
		t.Errorf("alternate_on = %q while the TUI runs, want 1", got)
	}
	if err := syscall.Kill(p.childPID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.assertRestored(0)
}

func TestBinaryNeedsATerminal(t *testing.T) {
	scv := scvBinary(t)
	home := t.TempDir()
	startFakeDaemon(t, home, 0)
	p := startPane(t, 200, 30, shellQuote(scv)+" --scv-home "+shellQuote(home)+" </dev/null")
	p.waitFor("needs a terminal", "scv exec")
	p.assertRestored(1)
}
