package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// floodRSSBoundMiB is the peak resident memory allowed to `scv server
// --stdio` while one client floods it (docs/benchmarks/runtime.md, "Memory
// under a request flood"). Before the bounds, 4,000 queued turns took it
// to 1.29 GB.
const floodRSSBoundMiB = 96

// TestMemoryBoundUnderFlood drives the real `scv server --stdio` with a
// model that never answers: 2,000 session.start and then 10,000 turn.start
// of 250 KiB each on one connection. Everything past
// protocol.max_sessions_per_connection and session.max_queued_turns is
// refused with limit_exceeded, and the server's peak RSS stays under
// floodRSSBoundMiB; it is sampled while the flood runs, so an unbounded
// server is stopped as soon as it passes the bound.
func TestMemoryBoundUnderFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 2.5 GB through a pipe; skipped with -short")
	}
	const sessions, turns = 2000, 10000
	// A model that never answers: each request waits until the client
	// gives up or the test ends, so the first turn runs all along.
	stop := make(chan struct{})
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer model.Close()
	defer close(stop)
	in := newInstance(t, providerConfig(model.URL))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, scvBin, "--scv-home", in.home, "server", "--stdio")
	cmd.Dir, cmd.Env = in.ws, in.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr testutil.LockedBuffer
	cmd.Stderr = &stderr
	stdin, stdout := testutil.StartPiped(t, cmd)
	defer func() { cancel(); cmd.Wait() }()
	pid := cmd.Process.Pid

	// The reader counts answers; the server must never wait for us.
	type counts struct{ started, limit, enqueued, other int }
	events := make(chan counts, 1)
	sid := make(chan string, 1)
	ended := make(chan struct{})
	go func() {
		var c counts
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			ev, err := proto.DecodeEvent(sc.Bytes())
			if err != nil {
				continue
			}
			switch e := ev.(type) {
			case *proto.SessionStarted:
				if c.started == 0 {
					sid <- e.SessionID
				}
				c.started++
			case *proto.Error:
				switch {
				case e.Code == proto.ErrLimit:
					c.limit++
				case e.RequestID == "end":
					close(ended)
				default:
					c.other++
				}
			case *proto.QueueEnqueued:
				c.enqueued++
			case *proto.Initialized, *proto.TurnStarted, *proto.TurnCancelled:
			default:
				c.other++
			}
		}
		events <- c
	}()
	w := bufio.NewWriterSize(stdin, 1<<20)
	send := func(line []byte) {
		if _, err := w.Write(line); err != nil {
			t.Fatalf("write to the server: %v (stderr:\n%s)", err, stderr.String())
		}
	}
	check := func(when string) {
		if rss := testutil.StatusKB(t, pid, "VmRSS"); rss > floodRSSBoundMiB<<10 {
			t.Fatalf("%s: the server's RSS is %d MiB, above the bound of %d MiB", when, rss>>10, floodRSSBoundMiB)
		}
	}
	send([]byte(`{"type":"initialize","request_id":"i","protocol_version":1,"client":{"name":"flood","version":"0"}}` + "\n"))
	start := []byte(fmt.Sprintf(`{"type":"session.start","request_id":"s","cwd":%q}`+"\n", in.ws))
	for i := range sessions {
		send(start)
		if i%500 == 499 {
			w.Flush()
			check(fmt.Sprintf("after %d session.start", i+1))
		}
	}
	w.Flush()
	var id string
	select {
	case id = <-sid:
	case <-time.After(30 * time.Second):
		t.Fatalf("no session started; stderr:\n%s", stderr.String())
	}
	prompt := strings.Repeat("p", 250<<10)
	line := []byte(fmt.Sprintf(`{"type":"turn.start","request_id":"t","session_id":%q,"prompt":%q}`+"\n", id, prompt))
	for i := range turns {
		send(line)
		if i%500 == 499 {
			w.Flush()
			check(fmt.Sprintf("after %d turn.start", i+1))
		}
	}
	// A last request whose answer says everything before it was handled;
	// the peak is read while the server still runs.
	send([]byte(`{"type":"flood.end","request_id":"end"}` + "\n"))
	w.Flush()
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatalf("the server did not answer the last request; stderr:\n%s", stderr.String())
	}
	peak := testutil.StatusKB(t, pid, "VmHWM")
	stdin.Close()
	var c counts
	select {
	case c = <-events:
	case <-ctx.Done():
		t.Fatal("the server did not end after EOF")
	}
	t.Logf("peak RSS %d MiB; sessions started %d, limit_exceeded %d, enqueued %d", peak>>10, c.started, c.limit, c.enqueued)
	const perConn, queued = 32, 16
	if c.started != perConn || c.enqueued != queued || c.limit != sessions-perConn+turns-1-queued || c.other != 0 {
		t.Errorf("answers: %+v; want %d sessions, %d enqueued, %d refused, nothing else", c, perConn, queued, sessions-perConn+turns-1-queued)
	}
	if peak > floodRSSBoundMiB<<10 {
		t.Errorf("peak RSS %d MiB, above the bound of %d MiB", peak>>10, floodRSSBoundMiB)
	}
}
