package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/mention"
	"github.com/scv-agent/scv/internal/textcut"
)

// MentionSource is how an `@` mention reads the workspace: with the
// `read` tool's checks, so a mention attaches nothing read would not show
// without asking. A secret-like file (by its name or what its links
// resolve to) is refused, never asked about: the prompt is the user's,
// and the model may still ask to read it through the approval. So are
// binary files and what is not a regular file.
func MentionSource(workspace string) mention.Source { return mentionSource{ws: workspace} }

type mentionSource struct{ ws string }

// imageExt says rel is named like an image file: such a file is read as
// one (and refused with imagefile's reason when its content is none).
func imageExt(rel string) bool {
	switch strings.ToLower(path.Ext(rel)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// binarySniff is how much of a file's start is searched for a NUL byte.
const binarySniff = 8 << 10

const secretRefusal = "it looks like it holds secrets, so it is never attached; ask the agent to read it, which asks you first"

// sniffImage reports whether f's content starts like an accepted image
// type, and leaves f at its start again.
func sniffImage(f *os.File) bool {
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	_, ok := imagefile.Sniff(head[:n])
	_, err := f.Seek(0, io.SeekStart)
	return ok && err == nil
}

func (s mentionSource) DirRefused(rel string) string {
	if SecretLike(rel) || secretTarget(s.ws, rel) {
		return secretRefusal
	}
	return ""
}

func (s mentionSource) File(ctx context.Context, rel string, limit int) mention.File {
	refuse := func(why string) mention.File { return mention.File{Refused: why} }
	c, terr := cleanPath(rel)
	if terr != nil {
		return refuse(terr.Message)
	}
	if SecretLike(c) || secretTarget(s.ws, c) {
		return refuse(secretRefusal)
	}
	if ctx.Err() != nil {
		return refuse("cancelled")
	}
	if limit <= 0 {
		limit = DefaultMaxReadBytes
	}
	root, fail := openRoot(s.ws)
	if fail != nil {
		return refuse(fail.Output)
	}
	defer root.Close()
	f, err := root.OpenFile(c, readFlags, 0)
	if err != nil {
		return refuse(ioFail(c, err).Output)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return refuse(ioFail(c, err).Output)
	}
	if !fi.Mode().IsRegular() {
		return refuse(describeKind(fi.Mode()) + ", not a regular file")
	}
	if openedSecret(f, s.ws) {
		return refuse(secretRefusal)
	}
	if imageExt(c) || sniffImage(f) {
		im, err := imagefile.ReadOpened(c, f)
		if err != nil {
			return refuse(err.Error())
		}
		return mention.File{Total: im.Size, Image: &im}
	}
	buf := make([]byte, min(int64(limit), fi.Size()))
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return refuse(ioFail(c, err).Output)
	}
	buf = buf[:n]
	truncated := int64(n) < fi.Size()
	if truncated {
		buf = textcut.TrimEnd(buf)
	}
	if bytes.IndexByte(buf[:min(len(buf), binarySniff)], 0) >= 0 || !utf8.Valid(buf) {
		return refuse("binary (not UTF-8 text), so it is not attached")
	}
	return mention.File{Content: string(buf), Total: fi.Size(), Truncated: truncated}
}
