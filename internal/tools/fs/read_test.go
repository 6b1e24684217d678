package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scv-agent/scv/internal/testutil"
	"github.com/scv-agent/scv/internal/tool"
)

// readWorkspace builds a workspace and a sibling directory outside it.
func readWorkspace(t *testing.T) (ws, out string) {
	t.Helper()
	ws, out = besideSecret(t)
	testutil.Files(t, ws, map[string]string{
		"hello.txt":          "hello world",
		"empty.txt":          "",
		"twenty.txt":         "0123456789abcdefghij",
		"utf.txt":            "a\u00e9\u20ac\U0001F600", // 1+2+3+4 bytes
		"bin.dat":            "\xff\xfe\x00",
		"dir/":               "",
		"sub/inner.txt":      "inner",
		"link-in":            "->hello.txt",
		"link-in-dir":        "->sub",
		"link-in-abs":        "->" + filepath.Join(ws, "hello.txt"),
		"link-out-abs":       "->" + filepath.Join(out, "secret.txt"),
		"link-out-rel":       "->../outside/secret.txt",
		"link-out-dir-abs":   "->" + out,
		"link-out-dir-rel":   "->../outside",
		"dangling":           "->missing.txt",
		"dangling-out":       "->/nonexistent-scv-test/x",
		TempPrefix + "0a1b2": "half-written",
	})
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, out
}

func TestRead(t *testing.T) {
	ws, _ := readWorkspace(t)
	full := NewRead(Options{})
	small := NewRead(Options{MaxReadBytes: 8})
	ok := func(path string, off int64, content string, total int64, trunc bool) *ReadResult {
		return &ReadResult{Path: path, Offset: off, Content: content, TotalBytes: total, Truncated: trunc}
	}
	const inside = "must stay inside the workspace"
	tests := []struct {
		name    string
		tool    tool.Tool
		args    string
		want    *ReadResult    // on success
		kind    tool.ErrorKind // on failure
		message []string       // substrings of the failure message
	}{
		{"whole file", full, `{"path":"hello.txt"}`, ok("hello.txt", 0, "hello world", 11, false), "", nil},
		{"offset and limit", full, `{"path":"hello.txt","offset":6,"limit":3}`, ok("hello.txt", 6, "wor", 11, true), "", nil},
		{"range up to the end", full, `{"path":"hello.txt","offset":6,"limit":5}`, ok("hello.txt", 6, "world", 11, false), "", nil},
		{"limit beyond the end", full, `{"path":"hello.txt","offset":6,"limit":100}`, ok("hello.txt", 6, "world", 11, false), "", nil},
		{"offset at the end", full, `{"path":"hello.txt","offset":11}`, ok("hello.txt", 11, "", 11, false), "", nil},
		{"offset past the end", full, `{"path":"hello.txt","offset":12}`, nil, tool.InvalidArguments, []string{"past the end", "11 bytes", "from 0 to 11"}},
		{"limit 0", full, `{"path":"hello.txt","limit":0}`, ok("hello.txt", 0, "", 11, true), "", nil},
		{"limit 0 at the end", full, `{"path":"hello.txt","offset":11,"limit":0}`, ok("hello.txt", 11, "", 11, false), "", nil},
		{"empty file", full, `{"path":"empty.txt"}`, ok("empty.txt", 0, "", 0, false), "", nil},
		{"limit defaults to max_read_bytes", small, `{"path":"twenty.txt"}`, ok("twenty.txt", 0, "01234567", 20, true), "", nil},
		{"limit capped at max_read_bytes", small, `{"path":"twenty.txt","offset":4,"limit":1000}`, ok("twenty.txt", 4, "456789ab", 20, true), "", nil},
		{"last chunk under the cap", small, `{"path":"twenty.txt","offset":16}`, ok("twenty.txt", 16, "ghij", 20, false), "", nil},
		{"whole multi-byte characters", full, `{"path":"utf.txt","offset":6,"limit":4}`, ok("utf.txt", 6, "\U0001F600", 10, false), "", nil},
		{"range ends inside a character", full, `{"path":"utf.txt","limit":2}`, nil, tool.Failed, []string{"not valid UTF-8", "ends inside a multi-byte character", "use limit 1"}},
		{"range starts inside a character", full, `{"path":"utf.txt","offset":2}`, nil, tool.Failed, []string{"not valid UTF-8", "starts inside a multi-byte character", "use offset 3"}},
		{"range cut at both ends", full, `{"path":"utf.txt","offset":4,"limit":4}`, nil, tool.Failed, []string{"use offset 6", "ends inside"}},
		{"binary file", full, `{"path":"bin.dat"}`, nil, tool.Failed, []string{"not valid UTF-8", "invalid byte at offset 0", "binary"}},
		{"negative offset", full, `{"path":"hello.txt","offset":-1}`, nil, tool.InvalidArguments, []string{"offset", "minimum 0"}},
		{"negative limit", full, `{"path":"hello.txt","limit":-5}`, nil, tool.InvalidArguments, []string{"limit", "minimum 0"}},
		{"null offset", full, `{"path":"hello.txt","offset":null}`, nil, tool.InvalidArguments, []string{"offset"}},
		{"fractional limit", full, `{"path":"hello.txt","limit":1.5}`, nil, tool.InvalidArguments, []string{"limit"}},
		{"missing path", full, `{}`, nil, tool.InvalidArguments, []string{"missing required field `path`"}},
		{"empty path", full, `{"path":""}`, nil, tool.InvalidArguments, []string{"`path` is empty"}},
		{"unknown field", full, `{"path":"hello.txt","lines":3}`, nil, tool.InvalidArguments, []string{"unknown field"}},
		{"dot-dot staying inside", full, `{"path":"sub/../hello.txt"}`, ok("hello.txt", 0, "hello world", 11, false), "", nil},
		{"symlink inside", full, `{"path":"link-in"}`, ok("link-in", 0, "hello world", 11, false), "", nil},
		{"symlinked directory inside", full, `{"path":"link-in-dir/inner.txt"}`, ok("link-in-dir/inner.txt", 0, "inner", 5, false), "", nil},
		{"absolute path inside the workspace", full, testutil.JSON(map[string]string{"path": filepath.Join(ws, "hello.txt")}), nil, tool.InvalidArguments, []string{inside, "absolute"}},
		{"absolute path outside", full, `{"path":"/etc/passwd"}`, nil, tool.InvalidArguments, []string{inside}},
		{"dot-dot escape", full, `{"path":"../outside/secret.txt"}`, nil, tool.InvalidArguments, []string{inside, ".."}},
		{"nested dot-dot escape", full, `{"path":"sub/../../outside/secret.txt"}`, nil, tool.InvalidArguments, []string{inside}},
		{"file symlink, absolute target outside", full, `{"path":"link-out-abs"}`, nil, tool.InvalidArguments, []string{inside, "symbolic link"}},
		{"file symlink, relative target outside", full, `{"path":"link-out-rel"}`, nil, tool.InvalidArguments, []string{inside, "symbolic link"}},
		{"directory symlink, absolute target outside", full, `{"path":"link-out-dir-abs/secret.txt"}`, nil, tool.InvalidArguments, []string{inside}},
		{"directory symlink, relative target outside", full, `{"path":"link-out-dir-rel/secret.txt"}`, nil, tool.InvalidArguments, []string{inside}},
		{"absolute symlink even to inside", full, `{"path":"link-in-abs"}`, nil, tool.InvalidArguments, []string{inside}},
		{"dangling symlink", full, `{"path":"dangling"}`, nil, tool.Failed, []string{`"dangling" does not exist`, "dangling symbolic link"}},
		{"dangling symlink outside", full, `{"path":"dangling-out"}`, nil, tool.InvalidArguments, []string{inside}},
		{"missing file", full, `{"path":"nope.txt"}`, nil, tool.Failed, []string{`"nope.txt" does not exist`}},
		{"parent is a file", full, `{"path":"hello.txt/x"}`, nil, tool.Failed, []string{"not a directory"}},
		{"directory", full, `{"path":"dir"}`, nil, tool.Failed, []string{"a directory", "not a regular file"}},
		{"fifo does not block", full, `{"path":"fifo"}`, nil, tool.Failed, []string{"a named pipe"}},
		{"trailing slash", full, `{"path":"sub/"}`, nil, tool.InvalidArguments, []string{"names a directory"}},
		{"workspace itself", full, `{"path":"sub/.."}`, nil, tool.InvalidArguments, []string{"workspace directory itself"}},
		{"temporary file of a write", full, `{"path":"` + TempPrefix + `0a1b2"}`, nil, tool.InvalidArguments, []string{"reserved prefix"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, res := call(t, tc.tool, ws, tc.args)
			if tc.want != nil {
				if !res.Success || !res.JSON {
					t.Fatalf("want success, got %+v", res)
				}
				var got ReadResult
				if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(*tc.want, got); d != "" {
					t.Errorf("result (-want +got):\n%s", d)
				}
				if res.Truncated != tc.want.Truncated {
					t.Errorf("Result.Truncated = %v, want %v", res.Truncated, tc.want.Truncated)
				}
				return
			}
			if res.Success || res.Error != tc.kind {
				t.Fatalf("want failure %q, got %+v", tc.kind, res)
			}
			for _, m := range tc.message {
				if !strings.Contains(res.Output, m) {
					t.Errorf("message %q lacks %q", res.Output, m)
				}
			}
			if strings.Contains(res.Output, "SECRET") {
				t.Errorf("message leaks outside content: %q", res.Output)
			}
		})
	}
}

func TestReadCancelled(t *testing.T) {
	ws, _ := readWorkspace(t)
	p, err := NewRead(Options{}).Plan(tool.Env{Workspace: ws}, json.RawMessage(`{"path":"hello.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel(t)
	cancel()
	if res := p.Run(ctx); res.Error != tool.Cancelled || res.Success {
		t.Errorf("want cancelled, got %+v", res)
	}
}

func TestReadRiskAndSummary(t *testing.T) {
	tests := []struct {
		path string
		risk tool.Risk
	}{
		{".env", tool.Filesystem},
		{".ENV", tool.Filesystem},
		{"config/.env", tool.Filesystem},
		{".env.local", tool.Filesystem},
		{".Env.Production", tool.Filesystem},
		{"deploy/.env.d/app", tool.Filesystem},
		{"credentials.json", tool.Filesystem},
		{"aws/Credential", tool.Filesystem},
		{"my-credentials/notes.txt", tool.Filesystem},
		{"id_private_key", tool.Filesystem},
		{"keys/PRIVATE_KEY.txt", tool.Filesystem},
		{"certs/server.pem", tool.Filesystem},
		{"certs/SERVER.PEM", tool.Filesystem},
		{"tls.key", tool.Filesystem},
		{"a.key/readme.md", tool.Filesystem},
		{".envrc", tool.Filesystem},
		{"app.env", tool.Filesystem},
		{"deploy/PROD.ENV", tool.Filesystem},
		{"id_rsa", tool.Filesystem},
		{"keys/id_ed25519", tool.Filesystem},
		{"id_ecdsa_sk", tool.Filesystem},
		{".netrc", tool.Filesystem},
		{"_netrc", tool.Filesystem},
		{"home/.npmrc", tool.Filesystem},
		{".pypirc", tool.Filesystem},
		{".pgpass", tool.Filesystem},
		{".git-credentials", tool.Filesystem},
		{".ssh/config", tool.Filesystem},
		{"backup/.gnupg/pubring.kbx", tool.Filesystem},
		{".aws/config", tool.Filesystem},
		// Near misses.
		{"environment.txt", tool.ReadOnly},
		{"env", tool.ReadOnly},
		{"id_rsa.pub", tool.ReadOnly},
		{"id_ed25519.pub", tool.ReadOnly},
		{"npmrc.md", tool.ReadOnly},
		{"ssh/config", tool.ReadOnly},
		{".env-example", tool.ReadOnly},
		{"src/env.go", tool.ReadOnly},
		{"cred.txt", tool.ReadOnly},
		{"private-key.txt", tool.ReadOnly},
		{"privatekey", tool.ReadOnly},
		{"monkey", tool.ReadOnly},
		{"keys.txt", tool.ReadOnly},
		{"file.keys", tool.ReadOnly},
		{"pem.txt", tool.ReadOnly},
		{"main.go", tool.ReadOnly},
	}
	rd := NewRead(Options{})
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			p, err := rd.Plan(tool.Env{Workspace: t.TempDir()}, json.RawMessage(testutil.JSON(map[string]string{"path": tc.path})))
			if err != nil {
				t.Fatal(err)
			}
			if p.NoGrant != (tc.risk != tool.ReadOnly) {
				t.Errorf("NoGrant = %v for risk %s: a secret-like read is asked every time", p.NoGrant, tc.risk)
			}
			if p.Risk != tc.risk {
				t.Errorf("risk = %s, want %s", p.Risk, tc.risk)
			}
			if !strings.Contains(p.Summary, tc.path) {
				t.Errorf("summary %q does not show the path", p.Summary)
			}
			if got := SecretLike(tc.path); got != (tc.risk == tool.Filesystem) {
				t.Errorf("SecretLike = %v", got)
			}
		})
	}
}

// TestReadSymlinkSwappedDuringCalls swaps a directory for a symbolic link to
// the outside, over and over, while reads run: no read may ever return the
// outside content.
func TestReadSymlinkSwappedDuringCalls(t *testing.T) {
	base := t.TempDir()
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	testutil.Files(t, ws, map[string]string{"sub": "->real", "real/f.txt": "inside", "spare/f.txt": "inside"})
	testutil.Files(t, out, map[string]string{"f.txt": "SECRET"})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { swapLoop(t, ws, out, stop) })
	rd := NewRead(Options{})
	seen := map[string]int{}
	for range 400 {
		_, res := call(t, rd, ws, `{"path":"sub/f.txt"}`)
		if strings.Contains(res.Output, "SECRET") {
			t.Fatalf("read escaped through a swapped symlink: %+v", res)
		}
		seen[string(res.Error)]++
	}
	close(stop)
	wg.Wait()
	t.Logf("outcomes: %v", seen)
}

// swapLoop alternates ws/sub between a directory inside the workspace and a
// symbolic link to out until stop is closed.
func swapLoop(t *testing.T, ws, out string, stop <-chan struct{}) {
	sub := filepath.Join(ws, "sub")
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		tmp := filepath.Join(ws, "sub.next")
		_ = os.RemoveAll(tmp)
		var err error
		if i%2 == 0 {
			err = os.Symlink(out, tmp)
		} else {
			err = os.Symlink("real", tmp)
		}
		if err == nil {
			err = os.Rename(tmp, sub)
		}
		if err != nil {
			t.Errorf("swap: %v", err)
			return
		}
	}
}

// TestReadJudgesLinkTargets: a link with an innocent name that resolves to
// a secret-like file of the workspace has the secret-like risk; a link that
// is swapped to one after the plan (so the call was not asked for) is
// refused when opened.
func TestReadJudgesLinkTargets(t *testing.T) {
	ws := t.TempDir()
	testutil.Files(t, ws, map[string]string{
		".env": "TOKEN=s3cret", "notes.txt": "plain", "conf/.ssh/id_rsa": "KEY",
		"README.md": "->.env", "docs/setup.txt": "->../.env", "sshdir": "->conf/.ssh", "fine.md": "->notes.txt",
		"swap": "->notes.txt",
	})
	rd := NewRead(Options{})
	plan := func(p string) tool.Plan {
		t.Helper()
		pl, err := rd.Plan(tool.Env{Workspace: ws}, json.RawMessage(testutil.JSON(map[string]string{"path": p})))
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	for p, want := range map[string]tool.Risk{"README.md": tool.Filesystem, "docs/setup.txt": tool.Filesystem, "sshdir/id_rsa": tool.Filesystem,
		"fine.md": tool.ReadOnly, "notes.txt": tool.ReadOnly, "missing.txt": tool.ReadOnly} {
		if got := plan(p).Risk; got != want {
			t.Errorf("%s: risk %s, want %s", p, got, want)
		}
	}
	pl := plan("swap")
	if pl.Risk != tool.ReadOnly {
		t.Fatalf("swap planned as %s", pl.Risk)
	}
	if err := os.Remove(filepath.Join(ws, "swap")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(ws, "swap")); err != nil {
		t.Fatal(err)
	}
	res := pl.Run(t.Context())
	if res.Success || strings.Contains(res.Output, "s3cret") || !strings.Contains(res.Output, "secret-like") {
		t.Errorf("read of a link swapped to .env after the plan: %+v", res)
	}
	if res := plan("README.md").Run(t.Context()); !res.Success || !strings.Contains(res.Output, "s3cret") {
		t.Errorf("an asked-for secret-like read must still work: %+v", res)
	}
}
