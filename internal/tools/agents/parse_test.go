package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/proc"
)

// replay runs a recorded stream through the parser (in uneven chunks, as a
// pipe delivers it) and the result builder, exactly as a live run would.
func replay(t *testing.T, agent, name string) Result {
	t.Helper()
	dir := filepath.Join("testdata", "streams", agent, name)
	stdout, _ := os.ReadFile(filepath.Join(dir, "stdout.jsonl"))
	stderr, err := os.ReadFile(filepath.Join(dir, "stderr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	codeText, err := os.ReadFile(filepath.Join(dir, "exit_code"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(codeText)))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := Lookup(agent)
	tl := &agentTool{a: Adapter{Descriptor: d}}
	p := newParser(d.Format, DefaultOutputLimit)
	for i, n := 0, 1; len(stdout) > 0; i++ {
		n = min(len(stdout), 1+(i*977)%4096)
		p.Write(stdout[:n])
		stdout = stdout[n:]
	}
	tail := &tailBuffer{n: StderrTailBytes}
	tail.Write(stderr)
	outDir := ""
	if d.Format == FormatCodex {
		outDir = t.TempDir()
		if b, err := os.ReadFile(filepath.Join(dir, "last-message.txt")); err == nil {
			os.WriteFile(filepath.Join(outDir, "last-message.txt"), b, 0o600)
		}
	}
	return tl.result(p.finish(), proc.Result{ExitCode: &code}, false, tail.String(), DefaultOutputLimit, outDir)
}

func hintFor(agent string) string {
	d, _ := Lookup(agent)
	tl := &agentTool{a: Adapter{Descriptor: d}}
	one := 1
	return tl.result(outcome{ErrMsg: "Not logged in"}, proc.Result{ExitCode: &one}, false, "", 100, "").Hint
}

func TestRecordedStreams(t *testing.T) {
	u := func(in, out int64) *Usage { return &Usage{InputTokens: in, OutputTokens: out} }
	const hello = "Hello from the fake model."
	const ten = "All ten steps ran: step 1 through step 10."
	const shell = "The command printed: hi"
	tests := []struct {
		agent, name, status, reply string
		usage                      *Usage
		hint                       bool
	}{
		{"claude", "text", StatusCompleted, hello, u(19534, 6), false},
		{"claude", "stdin-pipe", StatusCompleted, hello, u(19539, 6), false},
		{"claude", "shell", StatusCompleted, shell, u(39180, 17), false},
		{"claude", "loop10", StatusCompleted, ten, u(219880, 130), false},
		{"claude", "badkey", StatusFailed, "Failed to authenticate. API Error: 401 Incorrect API key provided (scripted).", u(0, 0), true},
		{"claude", "nocreds", StatusFailed, "Not logged in · Please run /login", u(0, 0), true},
		{"claude", "http500", StatusFailed, "API Error: 500 scripted internal error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:43155).", u(0, 0), false},
		{"claude", "model-not-found", StatusFailed, "There's an issue with the selected model (no-such-model). It may not exist or you may not have access to it. Run --model to pick a different model.", u(0, 0), false},
		{"claude", "root-bypass", StatusFailed, "", nil, false},
		{"codex", "text", StatusCompleted, hello, u(10345, 6), false},
		{"codex", "stdin-pipe", StatusCompleted, hello, u(10351, 6), false},
		{"codex", "shell", StatusCompleted, shell, u(20812, 17), false},
		{"codex", "loop10", StatusCompleted, ten, u(120246, 130), false},
		{"codex", "badkey", StatusFailed, "unexpected status 401 Unauthorized: Incorrect API key provided (scripted)., url: http://127.0.0.1:36083/v1/responses", nil, true},
		{"codex", "nocreds", StatusFailed, "unexpected status 401 Unauthorized: You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)., url: http://127.0.0.1:35441/v1/responses", nil, true},
		{"codex", "nocreds-provider", StatusFailed, "Missing environment variable: `FAKE_OPENAI_API_KEY`.", nil, true},
		{"codex", "http500", StatusFailed, "We’re currently experiencing high demand, which may cause temporary errors.", nil, false},
		{"codex", "model-not-found", StatusFailed, "The model `no-such-model` does not exist or you do not have access to it.", nil, false},
		{"codex", "not-git-repo", StatusFailed, "", nil, false},
		{"pi", "text", StatusCompleted, hello, u(1422, 6), false},
		{"pi", "stdin-pipe", StatusCompleted, hello, u(1424, 6), false},
		{"pi", "shell", StatusCompleted, shell, u(2941, 17), false},
		{"pi", "loop10", StatusCompleted, ten, u(19779, 130), false},
		{"pi", "badkey", StatusFailed, "401 Incorrect API key provided (scripted).", u(0, 0), true},
		{"pi", "nocreds-provider", StatusFailed, "401 Incorrect API key provided: SCV***AR", u(0, 0), true},
		{"pi", "nocreds", StatusFailed, "", nil, true},
		{"pi", "http500", StatusFailed, "500 scripted internal error", u(0, 0), false},
		{"pi", "model-not-found-provider", StatusFailed, "404 The model `retired-model` does not exist or you do not have access to it.", u(0, 0), false},
		{"pi", "model-not-found", StatusFailed, "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+tt.name, func(t *testing.T) {
			got := replay(t, tt.agent, tt.name)
			dir := filepath.Join("testdata", "streams", tt.agent, tt.name)
			stderr, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
			code, _ := os.ReadFile(filepath.Join(dir, "exit_code"))
			c, _ := strconv.Atoi(strings.TrimSpace(string(code)))
			want := Result{Agent: tt.agent, Status: tt.status, Reply: tt.reply, Usage: tt.usage, ExitCode: &c, StderrTail: string(stderr)}
			if tt.hint {
				want.Hint = hintFor(tt.agent)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHintNamesLoginCommand(t *testing.T) {
	h := hintFor("codex")
	if !strings.Contains(h, "scv agents login codex") {
		t.Errorf("hint %q does not name scv agents login codex", h)
	}
}

// A recorded stream run through the parser line by line must not depend on
// how the pipe split it.
func TestParserChunking(t *testing.T) {
	stdout, err := os.ReadFile("testdata/streams/pi/loop10/stdout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	whole := newParser(FormatPi, 1000)
	whole.Write(stdout)
	want := whole.finish()
	for _, size := range []int{1, 7, 4096} {
		p := newParser(FormatPi, 1000)
		for b := stdout; len(b) > 0; {
			n := min(size, len(b))
			p.Write(b[:n])
			b = b[n:]
		}
		if diff := cmp.Diff(want, p.finish()); diff != "" {
			t.Errorf("chunk size %d (-whole +chunked):\n%s", size, diff)
		}
	}
}

func TestParserCanned(t *testing.T) {
	big := strings.Repeat("x", MaxLineBytes+10)
	tests := []struct {
		name   string
		format Format
		input  string
		limit  int
		want   outcome
	}{
		{
			name:   "oversized line skipped, later events kept",
			format: FormatCodex,
			input: `{"type":"item.completed","item":{"type":"agent_message","text":"early"}}` + "\n" +
				`{"type":"item.completed","item":{"type":"agent_message","text":"` + big + `"}}` + "\n" +
				`{"type":"item.completed","item":{"type":"agent_message","text":"late"}}` + "\n" +
				`{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":4}}`,
			limit: 16,
			want: outcome{Reply: "late", HaveReply: true, Usage: &Usage{InputTokens: 3, OutputTokens: 4}, SawJSON: true,
				Text: `{"type":"item.co`, TextTruncated: true, SkippedLines: 1},
		},
		{
			name:   "oversized final line without newline",
			format: FormatClaude,
			input:  `{"type":"result","is_error":false,"result":"ok"}` + "\n" + big,
			limit:  4,
			want:   outcome{Reply: "ok", HaveReply: true, SawJSON: true, Text: `{"ty`, TextTruncated: true, SkippedLines: 1},
		},
		{
			name:   "structured stream without JSON falls back to text",
			format: FormatClaude,
			input:  "Error: something broke\nsee logs\n",
			limit:  100,
			want:   outcome{Text: "Error: something broke\nsee logs\n"},
		},
		{
			name:   "unknown events and fields ignored",
			format: FormatClaude,
			input: `{"type":"brand_new","result":"nope"}` + "\n" + `not json` + "\n" +
				`{"type":"result","is_error":false,"result":"yes","extra":{"a":[1,2]},"usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":5,"new":1}}` + "\n",
			limit: 1000,
			want: outcome{Reply: "yes", HaveReply: true, SawJSON: true, Usage: &Usage{InputTokens: 1, OutputTokens: 2, CachedInputTokens: 5},
				Text: `{"type":"brand_new","result":"nope"}` + "\n" + `not json` + "\n" +
					`{"type":"result","is_error":false,"result":"yes","extra":{"a":[1,2]},"usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":5,"new":1}}` + "\n"},
		},
		{
			name:   "claude sign-out",
			format: FormatClaude,
			input: `{"type":"assistant","message":{"content":[{"type":"text","text":"Not logged in · Please run /login"}]},"error":"authentication_failed"}` + "\n" +
				`{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login"}` + "\n",
			limit: 10,
			want: outcome{Reply: "Not logged in · Please run /login", HaveReply: true, Failed: true, ErrMsg: "Not logged in · Please run /login",
				ErrCode: "authentication_failed", SawJSON: true, Text: `{"type":"a`, TextTruncated: true},
		},
		{
			name:   "text is bounded on a character boundary",
			format: FormatText,
			input:  "héllo wörld",
			limit:  2,
			want:   outcome{Text: "h", TextTruncated: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParser(tt.format, tt.limit)
			for b := []byte(tt.input); len(b) > 0; {
				n := min(len(b), 64<<10)
				p.Write(b[:n])
				b = b[n:]
			}
			if diff := cmp.Diff(tt.want, p.finish()); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if cap(p.line) > MaxLineBytes+64<<10 {
				t.Errorf("line buffer grew to %d bytes", cap(p.line))
			}
		})
	}
}

func TestBoundedReply(t *testing.T) {
	d, _ := Lookup("claude")
	tl := &agentTool{a: Adapter{Descriptor: d}}
	zero := 0
	reply := strings.Repeat("é", 10) // 20 bytes
	got := tl.result(outcome{Reply: reply, HaveReply: true, SawJSON: true}, proc.Result{ExitCode: &zero}, false, "", 7, "")
	want := Result{Agent: "claude", Status: StatusCompleted, Reply: "ééé", ExitCode: &zero, Truncated: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCodexOutputFile(t *testing.T) {
	d, _ := Lookup("codex")
	tl := &agentTool{a: Adapter{Descriptor: d}}
	zero := 0
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "last-message.txt"), []byte("from the file"), 0o600)
	stream := `{"type":"thread.started","thread_id":"x"}` + "\n" + `{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}` + "\n"
	p := newParser(FormatCodex, 100)
	p.Write([]byte(stream))
	got := tl.result(p.finish(), proc.Result{ExitCode: &zero}, false, "", 100, dir)
	want := Result{Agent: "codex", Status: StatusCompleted, Reply: "from the file", Usage: &Usage{InputTokens: 1, OutputTokens: 1}, ExitCode: &zero}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The stream's own message wins over the file.
	p = newParser(FormatCodex, 100)
	p.Write([]byte(`{"type":"item.completed","item":{"type":"agent_message","text":"from the stream"}}` + "\n"))
	if got := tl.result(p.finish(), proc.Result{ExitCode: &zero}, false, "", 100, dir); got.Reply != "from the stream" {
		t.Errorf("reply = %q, want the stream's", got.Reply)
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{n: 5}
	tb.Write([]byte("abc"))
	tb.Write([]byte("déf"))
	tb.Write(bytes.Repeat([]byte("z"), 2))
	if got := tb.String(); got != "éfzz" {
		t.Errorf("tail = %q, want éfzz", got)
	}
	mid := &tailBuffer{n: 4}
	mid.Write([]byte("défzz"))
	if got := mid.String(); got != "fzz" {
		t.Errorf("tail cut inside a character = %q, want fzz", got)
	}
	tb2 := &tailBuffer{n: 4}
	tb2.Write([]byte("0123456789"))
	if got := tb2.String(); got != "6789" {
		t.Errorf("tail = %q, want 6789", got)
	}
}
