package web

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/scv-agent/scv/internal/tool"
)

// read turns a final response into a page. A declared binary type is
// refused from the headers alone: the body is closed unread, which makes
// the transport drop the connection instead of draining it.
func (f *fetcher) read(ctx context.Context, u *url.URL, resp *http.Response) (*page, *tool.Result) {
	defer resp.Body.Close()
	declared := strings.TrimSpace(resp.Header.Get("Content-Type"))
	mt := mediaType(declared)
	if declared != "" && isBinary(mt) {
		return nil, failf(tool.Failed, "refused %s: its content type %s is binary; web_fetch returns text only (images, audio, video, PDF, archives and octet-streams are not downloaded)", u, mt)
	}
	br := bufio.NewReaderSize(io.LimitReader(resp.Body, f.opts.MaxBytes+1), 4096)
	if declared == "" {
		head, _ := br.Peek(512)
		mt = mediaType(http.DetectContentType(head))
		if isBinary(mt) {
			return nil, failf(tool.Failed, "refused %s: it declares no content type and looks like %s, which is binary; web_fetch returns text only", u, mt)
		}
	}
	body, err := io.ReadAll(br)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, failf(tool.Failed, "fetch %s: timed out after %s while reading the body (web.fetch_timeout_seconds)", u, f.opts.Timeout)
		}
		return nil, failf(tool.Failed, "fetch %s: reading the body: %v", u, err)
	}
	cut := int64(len(body)) > f.opts.MaxBytes
	if cut {
		body = body[:f.opts.MaxBytes]
	}
	text, fail := toText(u, mt, declared, body)
	if fail != nil {
		return nil, fail
	}
	if strings.TrimSpace(text) == "" {
		text = "[the response body is empty]"
	}
	return &page{
		url: u.String(), status: resp.StatusCode, contentType: declared,
		text: text, total: utf8.RuneCountInString(text), cutAt: cutBytes(cut, f.opts.MaxBytes),
	}, nil
}

func cutBytes(cut bool, n int64) int64 {
	if cut {
		return n
	}
	return 0
}

// toText decodes the body to UTF-8 and converts HTML; other text passes
// through.
func toText(u *url.URL, mt, declared string, body []byte) (string, *tool.Result) {
	isHTML := mt == "text/html" || mt == "application/xhtml+xml"
	if !isHTML && !isTextual(mt) && !looksText(body) {
		return "", failf(tool.Failed, "refused %s: content type %s is not text and the body does not look like text", u, mt)
	}
	body = decode(body, declared, isHTML)
	// Text has no NUL bytes once decoded (UTF-16 text has them before):
	// a body that does is binary, whatever its content type claims.
	if i := bytes.IndexByte(body, 0); i >= 0 {
		return "", failf(tool.Failed, "refused %s: its body holds a NUL byte (at byte %d after decoding), so it is binary although its content type is %s; web_fetch returns text only", u, i, mt)
	}
	if !isHTML {
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	text, err := htmlToText(body, u.String())
	if err != nil {
		return "", failf(tool.Failed, "convert %s: %v", u, err)
	}
	return strings.ToValidUTF8(text, "\uFFFD"), nil
}

// decode converts a declared (or, for HTML, a <meta>-declared) charset to
// UTF-8. Bodies that are already valid UTF-8 without a declared charset are
// left alone.
func decode(body []byte, declared string, isHTML bool) []byte {
	_, params, _ := mime.ParseMediaType(declared)
	cs := strings.ToLower(params["charset"])
	if cs == "utf-8" || cs == "utf8" || (cs == "" && !isHTML && utf8.Valid(body)) {
		return body
	}
	enc, name := charset.Lookup(cs)
	if enc == nil {
		enc, name, _ = charset.DetermineEncoding(body, declared)
	}
	if enc == nil || name == "utf-8" {
		return body
	}
	if out, err := enc.NewDecoder().Bytes(body); err == nil {
		return out
	}
	return body
}

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

var binaryTypes = []string{
	"application/pdf", "application/octet-stream", "application/zip",
	"application/gzip", "application/x-gzip", "application/x-tar",
	"application/x-bzip2", "application/x-xz", "application/zstd",
	"application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar",
	"application/java-archive", "application/x-msdownload", "application/vnd.android.package-archive",
	"application/x-iso9660-image", "application/x-apple-diskimage", "application/wasm",
	"application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
	"application/x-shockwave-flash", "application/x-executable", "application/x-sharedlib",
	"application/x-debian-package", "application/x-rpm", "application/ogg",
}

// isBinary says a media type is never worth converting to text: images,
// audio, video, fonts, PDF, archives, executables and octet-streams.
func isBinary(mt string) bool {
	if slices.Contains(binaryTypes, mt) {
		return true
	}
	for _, p := range []string{"image/", "audio/", "video/", "font/", "application/vnd.openxmlformats-", "application/vnd.oasis.opendocument."} {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	return strings.HasSuffix(mt, "+zip") || strings.HasSuffix(mt, "+gzip")
}

func isTextual(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
		"application/x-ndjson", "application/jsonl", "application/sql", "application/graphql",
		"application/x-sh", "application/x-httpd-php", "application/csv":
		return true
	}
	return false
}

// looksText accepts an undeclared or unfamiliar type whose body is UTF-8
// without NUL bytes.
func looksText(b []byte) bool {
	return utf8.Valid(b) && !bytes.ContainsRune(b, 0)
}
