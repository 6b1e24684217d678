package e2e

import (
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

// stdioChild starts `scv server --stdio` with env and returns its stdin and
// stdout. When the test ends its stdin is closed, and the server must end
// within 10 s (EOF ends it); else the test fails and its group is killed.
func (in *instance) stdioChild(env []string) (io.WriteCloser, io.Reader, *testutil.LockedBuffer) {
	in.t.Helper()
	cmd := exec.Command(scvBin, "--scv-home", in.home, "server", "--stdio")
	cmd.Dir, cmd.Env = in.ws, env
	stderr := &testutil.LockedBuffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, stdout := testutil.StartPiped(in.t, cmd)
	in.t.Cleanup(func() {
		stdin.Close()
		// Wait closes stdout once the process exits, so it starts only now
		// that the test has read what it wanted (EOF included).
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			in.t.Errorf("scv server --stdio still running 10 s after EOF; stderr:\n%s", stderr)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return stdin, stdout, stderr
}

// startStdio runs `scv server --stdio` and speaks the protocol over its
// stdin/stdout; the connection is closed at the end of the test.
func (in *instance) startStdio(env []string) *client.Conn {
	in.t.Helper()
	stdin, stdout, stderr := in.stdioChild(env)
	c := client.NewConn(stdout, stdin)
	in.t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(in.t.Context(), "e2e", "test"); err != nil {
		in.t.Fatalf("initialize: %v; stderr:\n%s", err, stderr)
	}
	return c
}

// collapsedTypes lists event types with runs of assistant.delta kept once.
func collapsedTypes(evs []proto.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.EventType() == proto.EventAssistantDelta && len(out) > 0 && out[len(out)-1] == ev.EventType() {
			continue
		}
		out = append(out, ev.EventType())
	}
	return out
}

// certFile writes the TLS test server's certificate as PEM for SSL_CERT_FILE.
func certFile(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cert.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStdioWebFetchApproval: web_fetch asks for approval (network risk)
// unless the URL is HTTPS on an allowlisted host and its default port. The
// case that runs without approval needs a server on 127.0.0.1:443; it is
// skipped where that port cannot be bound (no privilege, or taken).
func TestStdioWebFetchApproval(t *testing.T) {
	page := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "hello page body\n")
	}
	plain := httptest.NewServer(http.HandlerFunc(page))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(page))
	t.Cleanup(tlsSrv.Close)
	certs := certFile(t, tlsSrv)
	on443 := ""
	if l, err := net.Listen("tcp", "127.0.0.1:443"); err == nil {
		srv443 := httptest.NewUnstartedServer(http.HandlerFunc(page))
		srv443.Listener.Close()
		srv443.Listener = l
		srv443.TLS = tlsSrv.TLS // the same certificate, trusted through certs
		srv443.StartTLS()
		t.Cleanup(srv443.Close)
		on443 = "https://127.0.0.1/"
	}

	withApproval := []string{
		"turn.started", "assistant.completed", "tool.proposed", "approval.requested",
		"tool.started", "tool.completed", "assistant.delta", "assistant.completed", "turn.completed",
	}
	withoutApproval := slices.DeleteFunc(slices.Clone(withApproval), func(s string) bool { return s == "approval.requested" })
	tests := []struct {
		name      string
		url       string
		allowlist string
		want      []string
	}{
		{"http on an allowlisted host asks", plain.URL + "/", `["127.0.0.1"]`, withApproval},
		{"https off the allowlist asks", tlsSrv.URL + "/", `["docs.rs"]`, withApproval},
		{"https on an allowlisted host but another port asks", tlsSrv.URL + "/", `["127.0.0.1"]`, withApproval},
		{"https on an allowlisted host and the default port runs", on443, `["127.0.0.1"]`, withoutApproval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.url == "" {
				t.Skip("127.0.0.1:443 cannot be bound here")
			}
			fm := modeltest.New(t)
			fm.Script(modeltest.ToolCall("w1", "web_fetch", fmt.Sprintf(`{"url":%q}`, tc.url)))
			fm.Script(modeltest.Text("fetched"))
			in := newInstance(t, providerConfig(fm.URL(),
				"[web]", "allow_private_addresses = true", "auto_approve_domains = "+tc.allowlist))
			c := in.startStdio(in.withEnv("SSL_CERT_FILE=" + certs))
			sid := in.startSession(c, proto.SessionStart{}).SessionID
			sendTurn(t, c, sid, "fetch it")

			var evs []proto.Event
			for {
				ev := next(t, c)
				evs = append(evs, ev)
				if ev, ok := ev.(*proto.ApprovalRequested); ok {
					if ev.Risk != "network" || ev.Name != "web_fetch" || ev.CallID != "w1" || !strings.Contains(ev.Summary, tc.url) {
						t.Errorf("approval.requested = %+v, want web_fetch w1 with risk network naming %s", ev, tc.url)
					}
					approve(t, c, sid, ev.ApprovalID)
				}
				if ev, ok := ev.(*proto.ToolStarted); ok && !strings.Contains(ev.Summary, tc.url) {
					t.Errorf("tool.started = %+v, want the full URL in its summary", ev)
				}
				if _, ok := ev.(*proto.TurnCompleted); ok {
					break
				}
				if _, ok := ev.(*proto.TurnFailed); ok {
					break
				}
			}
			if diff := cmp.Diff(tc.want, collapsedTypes(evs)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			reqs := modelRequests(t, fm, 2)
			out, _ := callOutput(reqs[1], "w1")
			if !strings.Contains(out, "hello page body") || !strings.Contains(out, "Status: 200") {
				t.Errorf("web_fetch result sent to the model = %q, want the page", out)
			}
		})
	}
}

// TestStdioHostedSearch: the hosted {"type":"web_search"} tool is offered
// only with web.search = "provider" and never in a no_tools session.
func TestStdioHostedSearch(t *testing.T) {
	tests := []struct {
		name       string
		search     string
		noTools    bool
		wantHosted bool
		wantTools  bool // function tools offered and listed in session.started
	}{
		{"provider search", "provider", false, true, true},
		{"provider search, no_tools session", "provider", true, false, false},
		{"search off", "off", false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := modeltest.New(t)
			fm.Script(modeltest.Text("ok"))
			in := newInstance(t, providerConfig(fm.URL(), "[web]", fmt.Sprintf("search = %q", tc.search)))
			c := in.startStdio(in.env)
			started := in.startSession(c, proto.SessionStart{NoTools: tc.noTools})
			sendTurn(t, c, started.SessionID, "search something")
			until(t, c, proto.EventTurnCompleted)

			reqs := modelRequests(t, fm, 1)
			r := reqs[0]
			if got := r.HasHostedWebSearch(); got != tc.wantHosted {
				t.Errorf("hosted web_search offered = %v, want %v; tools: %v", got, tc.wantHosted, r.Body["tools"])
			}
			names := r.ToolNames()
			if tc.wantTools {
				for _, want := range []string{"read", "bash", "web_fetch"} {
					if !slices.Contains(names, want) || !slices.Contains(started.Tools, want) {
						t.Errorf("tool %q missing: request offers %v, session.started lists %v", want, names, started.Tools)
					}
				}
			} else {
				if len(names) != 0 || len(started.Tools) != 0 {
					t.Errorf("no_tools session: request offers %v, session.started lists %v, want none", names, started.Tools)
				}
				if tools, _ := r.Body["tools"].([]any); len(tools) != 0 {
					t.Errorf("no_tools session: request tools = %v, want none", tools)
				}
			}
		})
	}
}
