package fs

import (
	"context"
	_ "embed"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scv-agent/scv/internal/textcut"
	"github.com/scv-agent/scv/internal/tool"
)

//go:embed read.md
var readDescription string

// ReadParams is the input of `read`.
type ReadParams struct {
	Path   string `json:"path" jsonschema:"workspace-relative path of the file"`
	Offset *int64 `json:"offset,omitempty" jsonschema:"byte offset to start at (default 0)"`
	Limit  *int64 `json:"limit,omitempty" jsonschema:"most bytes to return (default and cap: tools.max_read_bytes)"`
}

// ReadResult is the JSON output of `read` (docs/fs.md).
type ReadResult struct {
	Path       string `json:"path"`
	Offset     int64  `json:"offset"`
	Content    string `json:"content"`
	TotalBytes int64  `json:"total_bytes"`
	Truncated  bool   `json:"truncated"`
}

// NewRead returns the `read` tool.
func NewRead(opts Options) tool.Tool {
	return tool.WithRiskClass(newReadTool(opts), "read_only (filesystem for secret-like paths)")
}

func newReadTool(opts Options) tool.Tool {
	opts = opts.withDefaults()
	max := int64(opts.MaxReadBytes)
	desc := strings.ReplaceAll(readDescription, "{{MAX}}", strconv.FormatInt(max, 10))
	adjust := func(s *jsonschema.Schema) {
		zero := 0.0
		for _, name := range []string{"offset", "limit"} {
			p := s.Properties[name]
			p.Type, p.Types, p.Minimum = "integer", nil, &zero
		}
		s.Properties["limit"].Description = "most bytes to return (default and cap: " + strconv.FormatInt(max, 10) + ")"
	}
	return tool.MustDefine("read", desc, adjust, func(env tool.Env, p ReadParams) (tool.Plan, error) {
		rel, terr := cleanPath(p.Path)
		if terr != nil {
			return tool.Plan{}, terr
		}
		offset, limit, explicit := int64(0), max, false
		if p.Offset != nil {
			offset = *p.Offset
		}
		if p.Limit != nil && *p.Limit <= max {
			limit, explicit = *p.Limit, true
		}
		if offset < 0 || limit < 0 {
			return tool.Plan{}, tool.Errorf(tool.InvalidArguments, "`offset` and `limit` must not be negative")
		}
		// The name and, for a symbolic link, what it resolves to are both
		// judged: README pointing at .env reads as .env.
		risk := tool.ReadOnly
		if SecretLike(rel) || secretTarget(env.Workspace, rel) {
			risk = tool.Filesystem
		}
		sel := selection{rel: rel, offset: offset, limit: limit, explicit: explicit, outputLimit: env.OutputLimit, approved: risk != tool.ReadOnly}
		ws := env.Workspace
		return tool.Plan{
			Risk:    risk,
			Summary: "read " + rel,
			// A secret-like read is asked about every time.
			NoGrant:    risk != tool.ReadOnly,
			NoGrantWhy: "`" + rel + "` looks like it holds secrets: its reads are asked every time and never covered by a grant",
			Run: func(ctx context.Context) tool.Result {
				return readFile(ctx, ws, sel)
			},
		}, nil
	})
}

// selection is one validated read request.
type selection struct {
	rel           string
	offset, limit int64
	// explicit says the model chose the limit; otherwise the end of the
	// range is the tool's (default or cap) and a character it cuts is left
	// for the next read instead of being an error.
	explicit bool
	// outputLimit is tools.output_limit_bytes (0: none); the encoded result
	// is kept within it so it stays valid JSON.
	outputLimit int
	// approved says the call had the secret-like risk (and so was asked
	// for, under ask-on-risk); a read_only call refuses a file that turns out
	// secret-like when opened (a link changed since the plan).
	approved bool
}

func readFile(ctx context.Context, workspace string, sel selection) tool.Result {
	rel, offset, limit := sel.rel, sel.offset, sel.limit
	if ctx.Err() != nil {
		return tool.Fail(tool.Cancelled, "read %s: cancelled", rel)
	}
	root, fail := openRoot(workspace)
	if fail != nil {
		return *fail
	}
	defer root.Close()
	f, err := root.OpenFile(rel, readFlags, 0)
	if err != nil {
		return ioFail(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ioFail(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return tool.Fail(tool.Failed, "%q is %s, not a regular file; read names files only", rel, describeKind(fi.Mode()))
	}
	if !sel.approved && openedSecret(f, workspace) {
		return tool.Fail(tool.Failed, "%q now resolves to a secret-like file (a symbolic link changed after the call was planned); call read again so it is judged as such", rel)
	}
	total := fi.Size()
	if offset > total {
		return tool.Fail(tool.InvalidArguments, "`offset` %d is past the end of %q, which has %d bytes; use an offset from 0 to %d", offset, rel, total, total)
	}
	buf := make([]byte, min(limit, total-offset))
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return ioFail(rel, err)
	}
	buf = buf[:n]
	if !sel.explicit && offset+int64(n) < total {
		buf = textcut.TrimEnd(buf)
	}
	if msg := utf8Problem(buf, offset); msg != "" {
		return tool.Fail(tool.Failed, "%q: the selected bytes %d to %d are not valid UTF-8: %s", rel, offset, offset+int64(n), msg)
	}
	return result(ReadResult{Path: rel, Offset: offset, Content: string(buf), TotalBytes: total}, sel.outputLimit)
}

// result encodes r, first shortening its content to what fits in
// outputLimit bytes of JSON, and sets truncated from what follows.
func result(r ReadResult, outputLimit int) tool.Result {
	if outputLimit > 0 {
		// The fixed part is sized with "truncated":false, the longer value.
		empty := r
		empty.Content, empty.Truncated = "", false
		head := tool.JSONWithin(true, "", empty, false, outputLimit)
		if !head.Success {
			return head
		}
		whole := r.Content
		r.Content = tool.FitJSON(whole, outputLimit-len(head.Output))
		if r.Content == "" && whole != "" {
			return tool.Fail(tool.Limit, "tools.output_limit_bytes (%d) leaves no room for content in the result; raise it", outputLimit)
		}
	}
	r.Truncated = r.Offset+int64(len(r.Content)) < r.TotalBytes
	return tool.JSONResult(true, "", r, r.Truncated)
}

// utf8Problem explains why b (read from offset) is not valid UTF-8, or
// returns "". A range that merely cuts a multi-byte character at either end
// gets the offset or limit that would avoid the cut.
func utf8Problem(b []byte, offset int64) string {
	if utf8.Valid(b) {
		return ""
	}
	lead := 0
	for lead < len(b) && lead < utf8.UTFMax-1 && !utf8.RuneStart(b[lead]) {
		lead++
	}
	tail := len(b)
	for i := len(b) - 1; i >= lead && i >= len(b)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				tail = i
			}
			break
		}
	}
	if utf8.Valid(b[lead:tail]) {
		var hints []string
		if lead > 0 {
			hints = append(hints, "`offset` "+strconv.FormatInt(offset, 10)+" starts inside a multi-byte character; use offset "+strconv.FormatInt(offset+int64(lead), 10))
		}
		if tail < len(b) {
			hints = append(hints, "the range ends inside a multi-byte character; use limit "+strconv.Itoa(tail-lead))
		}
		return strings.Join(hints, "; ")
	}
	bad := 0
	for bad < len(b) {
		r, size := utf8.DecodeRune(b[bad:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		bad += size
	}
	return "invalid byte at offset " + strconv.FormatInt(offset+int64(bad), 10) + "; the file may be binary, which read does not return in v0.1"
}
