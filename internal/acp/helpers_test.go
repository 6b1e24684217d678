package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/model/modeltest"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/testutil"
)

func protoStart(ws string) proto.SessionStart {
	return proto.SessionStart{Cwd: ws, Origin: proto.OriginTUI}
}

func turnStart(sid, prompt string) *proto.TurnStart {
	return &proto.TurnStart{SessionID: sid, Prompt: prompt}
}

// approvalNeeded approves an approval request of the stored turn.
func approvalNeeded(conn *client.Conn, sid string, ev proto.Event) bool {
	e, ok := ev.(*proto.ApprovalRequested)
	if ok {
		_ = conn.Send(&proto.ApprovalResolve{SessionID: sid, ApprovalID: e.ApprovalID, Approved: true})
	}
	return ok
}

func ended(ev proto.Event) bool {
	switch ev.(type) {
	case *proto.TurnCompleted, *proto.TurnCancelled, *proto.TurnFailed:
		return true
	}
	return false
}

// homeEnv is an SCV home whose config points at fake, and the environment
// of an scv using it.
func homeEnv(tb testing.TB, fake *modeltest.Server) (home string, env []string) {
	home = tb.TempDir()
	testutil.WriteFile(tb, filepath.Join(home, "config.toml"), fmt.Sprintf("[providers.openai]\nbase_url = %q\nmax_retries = 0\n", fake.URL()))
	return home, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SCV_HOME=" + home, "OPENAI_API_KEY=sk-test-key"}
}

// acpProc is a running scv acp with line access to its stdio; chunks is
// the text of the agent_message_chunk updates read so far.
type acpProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	chunks string
}

// startACP starts bin acp with args.
func startACP(tb testing.TB, bin string, env []string, args ...string) *acpProc {
	cmd := exec.Command(bin, append([]string{"acp"}, args...)...)
	cmd.Env = env
	in, out := testutil.StartPiped(tb, cmd)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	return &acpProc{cmd: cmd, in: in, out: sc}
}

// call sends a request and reads lines until its answer.
func (p *acpProc) call(tb testing.TB, id int, method string, params any) map[string]any {
	tb.Helper()
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		tb.Fatal(err)
	}
	for p.out.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result map[string]any  `json:"result"`
			Error  any             `json:"error"`
		}
		if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
			tb.Fatal(err)
		}
		if m.Method == "session/update" {
			p.chunks += chunkText(m.Params)
		}
		if m.Method == "" && m.ID != nil && *m.ID == id {
			if m.Error != nil {
				tb.Fatalf("%s: %v", method, m.Error)
			}
			return m.Result
		}
	}
	tb.Fatalf("scv acp ended before answering %s", method)
	return nil
}

// chunkText is the text of a session/update that is an
// agent_message_chunk, "" for any other.
func chunkText(params json.RawMessage) string {
	var u struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	_ = json.Unmarshal(params, &u)
	if u.Update.SessionUpdate != "agent_message_chunk" {
		return ""
	}
	return u.Update.Content.Text
}

// close ends the input, reads the output to its end and waits for the
// process, which must exit 0.
func (p *acpProc) close(tb testing.TB) {
	tb.Helper()
	p.in.Close()
	for p.out.Scan() {
	}
	if err := p.cmd.Wait(); err != nil {
		tb.Fatalf("scv acp: %v", err)
	}
}
