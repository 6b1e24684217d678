package model_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/model"
	"github.com/scv-agent/scv/internal/testutil"
)

// The recorded provider streams of testdata/provider-streams (see the
// README and MANIFEST files there for their origins) are replayed through
// the client, each in several framings, and compared with one golden file
// per stream under testdata/replay.

const streamsDir = "testdata/provider-streams"

type recording struct {
	name, wire, kind, path string
}

// recordings lists every stream of both manifests and checks that the
// manifests and the directories agree.
func recordings(t *testing.T) []recording {
	t.Helper()
	var out []recording
	read := func(manifest, dir string, wireCol int) {
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if i == 0 {
				continue // header
			}
			f := strings.Split(line, "\t")
			r := recording{name: f[0], wire: model.WireAnthropic, kind: f[1], path: filepath.Join(dir, f[0]+".sse")}
			if wireCol >= 0 {
				r.wire, r.kind = f[wireCol], f[2]
			}
			out = append(out, r)
		}
	}
	read(filepath.Join(streamsDir, "MANIFEST.tsv"), streamsDir, 1)
	read(filepath.Join(streamsDir, "anthropic", "MANIFEST.tsv"), filepath.Join(streamsDir, "anthropic"), -1)
	files, _ := filepath.Glob(filepath.Join(streamsDir, "*.sse"))
	more, _ := filepath.Glob(filepath.Join(streamsDir, "anthropic", "*.sse"))
	files = append(files, more...)
	listed := map[string]bool{}
	for _, r := range out {
		listed[r.path] = true
		if _, err := os.Stat(r.path); err != nil {
			t.Errorf("manifest names %s: %v", r.path, err)
		}
	}
	for _, f := range files {
		if !listed[f] {
			t.Errorf("%s is in no manifest", f)
		}
	}
	if len(out) < 150 {
		t.Fatalf("only %d recorded streams", len(out))
	}
	return out
}

// replayed is what the client made of a stream: the golden file holds it
// as JSON. A failing stream keeps only its error.
type replayed struct {
	Content   string           `json:"content,omitempty"`
	Reasoning string           `json:"reasoning,omitempty"`
	ToolCalls []model.ToolCall `json:"tool_calls,omitempty"`
	// ThinkingBlocks counts the signed thinking blocks (Anthropic wire).
	ThinkingBlocks int          `json:"thinking_blocks,omitempty"`
	Usage          *model.Usage `json:"usage,omitempty"`
	Error          *replayError `json:"error,omitempty"`
}

type replayError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// framings rewrite a recorded body into an equivalent one.
var framings = []struct {
	name  string
	wire  string // "" for every wire
	chunk int    // deliver the body in reads of at most this many bytes
	edit  func([]byte) []byte
}{
	{name: "as recorded"},
	{name: "split every 7 bytes", chunk: 7},
	{name: "CRLF line ends", edit: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }},
	{name: "comment lines", edit: func(b []byte) []byte {
		return append([]byte(": keep-alive\n"), bytes.ReplaceAll(b, []byte("\n\n"), []byte("\n\n: ping\n:\n"))...)
	}},
	{name: "data: without a space", edit: func(b []byte) []byte { return noSpace.ReplaceAll(b, []byte("$1:")) }},
	{name: "without [DONE]", wire: model.WireChat, edit: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("data: [DONE]\n\n"), nil) }},
}

var noSpace = regexp.MustCompile(`(?m)^(data|event): `)

// replayTransport answers every request with body.
type replayTransport struct {
	body  []byte
	chunk int
}

func (rt replayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body io.Reader = bytes.NewReader(rt.body)
	if rt.chunk > 0 {
		body = &smallReads{r: body, n: rt.chunk}
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(body), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

type smallReads struct {
	r io.Reader
	n int
}

func (s *smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// TestReplayRecordedStreams replays every recorded stream in every framing
// and compares the result with the stream's golden file,
// testdata/replay/<name>.want.json (anthropic/ for the Messages wire).
// `go test ./internal/model -run TestReplay -update` writes them from the
// stream as recorded; review them with git diff.
func TestReplayRecordedStreams(t *testing.T) {
	recs := recordings(t)
	checkNoOrphanWants(t, recs)
	failures, empties := 0, 0
	for _, rec := range recs {
		body, err := os.ReadFile(rec.path)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := loadWant(t, rec, body)
		if !ok {
			continue
		}
		if want.Error != nil {
			failures++
			if strings.Contains(want.Error.Message, "empty answer") {
				empties++
			}
		}
		t.Run(rec.name, func(t *testing.T) {
			t.Parallel()
			for _, fr := range framings {
				if fr.wire != "" && fr.wire != rec.wire {
					continue
				}
				t.Run(fr.name, func(t *testing.T) {
					b := body
					if fr.edit != nil {
						b = fr.edit(bytes.Clone(body))
					}
					checkReplay(t, replayClient(t, rec.wire, b, fr.chunk), want)
				})
			}
			t.Run("over http", func(t *testing.T) {
				c, _ := newClient(t, rec.wire, rawServer(t, string(body)), func(o *model.Options) { o.MaxRetries = 0 })
				checkReplay(t, c, want)
			})
		})
	}
	// The corpus must keep exercising both outcomes.
	if failures < 8 || empties < 5 {
		t.Errorf("%d failing and %d empty streams in the corpus; want at least 8 and 5", failures, empties)
	}
}

func replayClient(t *testing.T, wire string, body []byte, chunk int) model.Client {
	hc := &http.Client{Transport: replayTransport{body: body, chunk: chunk}}
	c, _ := newClient(t, wire, "http://provider.invalid/v1", func(o *model.Options) { o.MaxRetries = 0; o.HTTPClient = hc })
	return c
}

const wantDir = "testdata/replay"

// wantPath is the golden file of rec: the stream's path under wantDir.
func wantPath(rec recording) string {
	rel, _ := filepath.Rel(streamsDir, rec.path)
	return filepath.Join(wantDir, strings.TrimSuffix(rel, ".sse")+".want.json")
}

// loadWant reads rec's golden file; with -update it first writes it from
// the stream as recorded. A missing or unreadable file is an error saying
// how to make it.
func loadWant(t *testing.T, rec recording, body []byte) (replayed, bool) {
	t.Helper()
	path := wantPath(rec)
	if testutil.Update() {
		got := replay(t, replayClient(t, rec.wire, body, 0))
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep <, > and & readable in the diff
		enc.SetIndent("", "  ")
		if err := enc.Encode(got); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s has no golden file (%v); write it with `go test ./internal/model -run TestReplay -update` and review it with git diff", rec.path, err)
		return replayed{}, false
	}
	var w replayed
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		t.Errorf("%s: %v; rewrite it with `go test ./internal/model -run TestReplay -update`", path, err)
		return replayed{}, false
	}
	return w, true
}

// checkNoOrphanWants fails for a golden file whose stream is gone.
func checkNoOrphanWants(t *testing.T, recs []recording) {
	t.Helper()
	have := map[string]bool{}
	for _, r := range recs {
		have[wantPath(r)] = true
	}
	files, _ := filepath.Glob(filepath.Join(wantDir, "*.want.json"))
	more, _ := filepath.Glob(filepath.Join(wantDir, "anthropic", "*.want.json"))
	for _, f := range append(files, more...) {
		if !have[f] {
			t.Errorf("%s belongs to no recorded stream in %s; delete it or restore its stream", f, streamsDir)
		}
	}
}

// replay streams hello through c and returns what came out.
func replay(t *testing.T, c model.Client) replayed {
	t.Helper()
	r, text, reasoning, err := stream(t, c, hello)
	if err != nil {
		var me *model.Error
		if !errors.As(err, &me) {
			t.Fatalf("Stream error %v (%T) is not a *model.Error", err, err)
		}
		return replayed{Error: &replayError{Code: me.Code, Message: me.Message}}
	}
	if text != r.Content {
		t.Errorf("answer deltas add up to %.80q, content is %.80q", text, r.Content)
	}
	return replayed{Content: r.Content, Reasoning: reasoning, ToolCalls: r.ToolCalls, ThinkingBlocks: len(r.Thinking), Usage: r.Usage}
}

func checkReplay(t *testing.T, c model.Client, want replayed) {
	t.Helper()
	if d := cmp.Diff(want, replay(t, c)); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
}
