package acpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/tools/agents/acpclient"
)

// agentSide is the agent's end of a connection: it reads what the client
// wrote and writes lines to it.
type agentSide struct {
	in  *bufio.Scanner // the client's lines
	out io.WriteCloser // lines to the client
}

func pipes(t *testing.T, h acpclient.Handler) (*acpclient.Conn, *agentSide) {
	t.Helper()
	toClient, agentOut := io.Pipe()
	agentIn, fromClient := io.Pipe()
	c := acpclient.New(toClient, fromClient, h)
	t.Cleanup(func() {
		agentOut.Close()
		agentIn.Close()
		c.Wait()
	})
	return c, &agentSide{in: bufio.NewScanner(agentIn), out: agentOut}
}

func (a *agentSide) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(a.out, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (a *agentSide) next(t *testing.T) map[string]any {
	t.Helper()
	if !a.in.Scan() {
		t.Fatal("the client wrote nothing more")
	}
	var m map[string]any
	if err := json.Unmarshal(a.in.Bytes(), &m); err != nil {
		t.Fatalf("client line %q: %v", a.in.Text(), err)
	}
	return m
}

// TestAgentRequests: the agent's fs/* and terminal/* requests are answered
// "method not found", its permission request with the option the handler
// chose (or cancelled), its updates reach the handler.
func TestAgentRequests(t *testing.T) {
	var updates []string
	c, agent := pipes(t, acpclient.Handler{
		Update: func(sid string, u acpclient.Update) { updates = append(updates, sid+" "+u.Kind+" "+u.Title) },
		Permission: func(_ context.Context, r acpclient.PermissionRequest) string {
			if r.ToolCall.Title == "no" {
				return ""
			}
			return r.Option("allow_once")
		},
	})
	_ = c // the agent drives this test
	for _, method := range []string{"fs/read_text_file", "fs/write_text_file", "terminal/create", "x/other"} {
		agent.send(t, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{}}`)
		m := agent.next(t)
		e, _ := m["error"].(map[string]any)
		if m["id"] != 7.0 || e["code"] != float64(acpclient.CodeMethodNotFound) {
			t.Errorf("%s answered %v, want method not found", method, m)
		}
	}
	agent.send(t, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"a","title":"Edit x"}}}`)
	perm := `{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"a","title":"%s","kind":"edit"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"never","name":"No","kind":"reject_once"}]}}`
	agent.send(t, strings.Replace(perm, "%s", "yes", 1))
	if got := agent.next(t); cmp.Diff(map[string]any{"jsonrpc": "2.0", "id": "p1", "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "yes"}}}, got) != "" {
		t.Errorf("allowed permission answered %v", got)
	}
	agent.send(t, strings.Replace(perm, "%s", "no", 1))
	if got := agent.next(t); cmp.Diff(map[string]any{"jsonrpc": "2.0", "id": "p1", "result": map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}}, got) != "" {
		t.Errorf("unanswered permission answered %v", got)
	}
	if d := cmp.Diff([]string{"s1 tool_call Edit x"}, updates); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
}

// TestCallsAndClose: a call gets its result by id, an error response is
// an *RPCError, and calls fail with ErrClosed once the agent's output ends.
func TestCallsAndClose(t *testing.T) {
	c, agent := pipes(t, acpclient.Handler{})
	done := make(chan error, 1)
	var sid string
	go func() {
		var err error
		sid, err = c.NewSession(t.Context(), "/w")
		done <- err
	}()
	req := agent.next(t)
	if req["method"] != "session/new" || req["params"].(map[string]any)["cwd"] != "/w" {
		t.Fatalf("request %v", req)
	}
	id, _ := json.Marshal(req["id"])
	agent.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"sessionId":"s9"}}`)
	if err := <-done; err != nil || sid != "s9" {
		t.Fatalf("NewSession = %q, %v", sid, err)
	}
	go func() { _, err := c.Prompt(t.Context(), "s9", "hi"); done <- err }()
	req = agent.next(t)
	id, _ = json.Marshal(req["id"])
	agent.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32000,"message":"Authentication required"}}`)
	var rpc *acpclient.RPCError
	if err := <-done; !errors.As(err, &rpc) || rpc.Code != -32000 {
		t.Errorf("Prompt error = %v, want the agent's error", err)
	}
	go func() { _, err := c.Prompt(t.Context(), "s9", "again"); done <- err }()
	agent.next(t)
	agent.out.Close()
	if err := <-done; !errors.Is(err, acpclient.ErrClosed) {
		t.Errorf("Prompt after the agent closed = %v, want ErrClosed", err)
	}
	<-c.Done()
	if _, err := c.NewSession(t.Context(), "/w"); !errors.Is(err, acpclient.ErrClosed) {
		t.Errorf("NewSession after the agent closed = %v, want ErrClosed", err)
	}
}
