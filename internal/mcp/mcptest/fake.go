// Package mcptest runs MCP servers for tests. The fake server is built with
// the official Go SDK and runs inside the test binary itself: a TestMain
// calls MaybeServe first, and Fake gives the command line that re-executes
// the binary as the server. The real servers from npm
// (@modelcontextprotocol/server-everything and server-filesystem) are
// installed by .ci/npm-install internal/mcp/testdata/npm; RequireNPM finds them.
//
// It is imported by tests only.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment of the fake server.
const (
	// EnvServe turns the test binary into the fake server.
	EnvServe = "SCV_MCPTEST_SERVE"
	// EnvDir is a directory where the fake leaves markers: pid-<pid> at
	// start, cancelled-<n> when a call was cancelled, setsid.pid.
	EnvDir = "SCV_MCPTEST_DIR"
	// EnvSetsid makes the fake start a `sleep 600` in a new session at
	// start-up (it leaves the process group; only the tag finds it).
	EnvSetsid = "SCV_MCPTEST_SETSID"
	// EnvEscape makes the fake start, at start-up and through a shell
	// that exits at once, `env -i setsid sh -c '…; exec sleep 600'`: a
	// process out of its group, without any of its environment (the tag
	// included) and no longer its child. It writes escapee.pid.
	EnvEscape = "SCV_MCPTEST_ESCAPE"
	// EnvExit makes the fake exit at once with this status, after a
	// message on stderr.
	EnvExit = "SCV_MCPTEST_EXIT"
	// EnvSleep delays the start-up by this many milliseconds.
	EnvSleep = "SCV_MCPTEST_SLEEP_MS"
	// EnvStderrLines makes the fake write this many stderr lines at start.
	EnvStderrLines = "SCV_MCPTEST_STDERR_LINES"
	// EnvShell adds the tool "sh" {command}: the server runs /bin/sh -c
	// command and answers "exit N" and its output (sandbox tests).
	EnvShell = "SCV_MCPTEST_SH"
)

// LongName is a tool name longer than model APIs accept.
var LongName = strings.Repeat("very_long_tool_name_", 4)

// MaybeServe runs the fake server on stdio and exits when EnvServe is set;
// otherwise it returns at once. Call it first thing in TestMain.
func MaybeServe() {
	if os.Getenv(EnvServe) == "" {
		return
	}
	Main()
}

// Main runs the fake server on stdio and exits (for testscript commands).
func Main() {
	os.Exit(serve())
}

// Fake returns the command and environment that run the fake server,
// leaving its markers in dir. extra are more KEY=VALUE entries.
func Fake(dir string, extra ...string) (command string, env []string) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe, append([]string{EnvServe + "=1", EnvDir + "=" + dir, "PATH=" + os.Getenv("PATH")}, extra...)
}

func serve() int {
	dir := os.Getenv(EnvDir)
	mark := func(name, body string) {
		if dir != "" {
			_ = os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600)
		}
	}
	mark("pid-"+strconv.Itoa(os.Getpid()), "")
	if ms, _ := strconv.Atoi(os.Getenv(EnvSleep)); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	if n, _ := strconv.Atoi(os.Getenv(EnvStderrLines)); n > 0 {
		for i := range n {
			fmt.Fprintf(os.Stderr, "fake stderr line %d\n", i)
		}
	}
	if code := os.Getenv(EnvExit); code != "" {
		fmt.Fprintln(os.Stderr, "fake: configured to fail at start")
		n, _ := strconv.Atoi(code)
		return n
	}
	if os.Getenv(EnvSetsid) != "" {
		cmd := exec.Command("sleep", "600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake: setsid:", err)
			return 1
		}
		mark("setsid.pid", strconv.Itoa(cmd.Process.Pid))
		_ = cmd.Process.Release()
	}
	if os.Getenv(EnvEscape) != "" {
		script := fmt.Sprintf(`env -i setsid sh -c 'echo $$ > %s; exec sleep 600' </dev/null >/dev/null 2>&1 &`, filepath.Join(dir, "escapee.pid"))
		if out, err := exec.Command("/bin/sh", "-c", script).CombinedOutput(); err != nil {
			fmt.Fprintln(os.Stderr, "fake: escape:", err, string(out))
			return 1
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "scv-fake", Version: "1.0"}, nil)
	addTools(s, mark)
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
	}
	return 0
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type sumOut struct {
	Sum float64 `json:"sum"`
}

type hugeIn struct {
	Bytes int    `json:"bytes"`
	JSON  bool   `json:"json,omitempty"`
	Chunk string `json:"chunk,omitempty"`
}

type slowIn struct {
	Steps int `json:"steps"`
}

type addToolIn struct {
	Name string `json:"name"`
}

type empty struct{}

type shIn struct {
	Command string `json:"command"`
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func addTools(s *sdk.Server, mark func(name, body string)) {
	var cancelled atomic.Int64
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back.", Annotations: readOnly},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	if os.Getenv(EnvShell) != "" {
		sdk.AddTool(s, &sdk.Tool{Name: "sh", Description: "Run a shell command as the server; answer \"exit N\" and its output."},
			func(_ context.Context, _ *sdk.CallToolRequest, in shIn) (*sdk.CallToolResult, any, error) {
				out, err := exec.Command("/bin/sh", "-c", in.Command).CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					code = -1
				}
				return text(fmt.Sprintf("exit %d\n%s", code, out)), nil, nil
			})
	}
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, sumOut, error) {
			return nil, sumOut{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit in the middle of the call."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "fake: crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answer; note the cancellation."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			<-ctx.Done()
			mark("cancelled-"+strconv.FormatInt(cancelled.Add(1), 10), ctx.Err().Error())
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "huge", Description: "Return a large text or structured result."},
		func(_ context.Context, _ *sdk.CallToolRequest, in hugeIn) (*sdk.CallToolResult, any, error) {
			chunk := in.Chunk
			if chunk == "" {
				chunk = "line \"quoted\" <é>\n"
			}
			body := strings.Repeat(chunk, in.Bytes/len(chunk)+1)[:in.Bytes]
			if in.JSON {
				return &sdk.CallToolResult{StructuredContent: map[string]any{"body": body}}, nil, nil
			}
			return text(body), nil, nil
		})
	addResultTools(s)
	addOddTools(s)
}

// addResultTools are the tools whose results take every shape: media,
// a tool error, progress, the server's own process, a tool list change.
func addResultTools(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "media", Description: "Return every kind of content."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			size := int64(2048)
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here is media"},
				&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
				&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 99)},
				&sdk.ResourceLink{URI: "file:///data/report.pdf", Name: "report", MIMEType: "application/pdf", Size: &size},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "hello notes"}},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Report a tool error."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the thing went wrong"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Report progress, then answer."},
		func(ctx context.Context, req *sdk.CallToolRequest, in slowIn) (*sdk.CallToolResult, any, error) {
			for i := range in.Steps {
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: float64(in.Steps), Message: "step"})
				}
				time.Sleep(20 * time.Millisecond)
			}
			return text("slow done"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "pid", Description: "Tell the server's PID and environment names."},
		func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
			var names []string
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				names = append(names, k)
			}
			cwd, _ := os.Getwd()
			b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "env": names, "cwd": cwd})
			return text(string(b)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add_tool", Description: "Add a tool (the server announces the change)."},
		func(_ context.Context, _ *sdk.CallToolRequest, in addToolIn) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: in.Name, Description: "A tool added at run time."},
				func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
					return text("added tool ran"), nil, nil
				})
			return text("added " + in.Name), nil, nil
		})
}

// addOddTools are the tools SCV must cope with: names it must sanitize and
// a schema no validator can use.
func addOddTools(s *sdk.Server) {
	// Names that need sanitizing: characters model APIs refuse, a name too
	// long, and two names that become the same.
	for _, name := range []string{"weird name/with.dots!", LongName, "a.b", "a_b"} {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: "Named " + name + "."},
			func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
				return text("ran " + name), nil, nil
			})
	}
	// A schema no validator can use: its reference leads nowhere.
	s.AddTool(&sdk.Tool{Name: "bad_schema", Description: "Has an unusable schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("bad_schema ran"), nil
		})
}
