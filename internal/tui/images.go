package tui

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

// Input images (docs/tui.md): /image PATH, or pasting the path of an
// image file, attaches the file to the next prompt. The TUI checks it at
// once (imagefile.Read: PNG, JPEG, GIF or WebP by content, at most 8
// MiB) so a bad file is refused when attached, not when sent; it keeps
// only the path and size, and the server reads the file when the prompt
// is sent. The transcript shows each image as a chip under its prompt.

// attachedImage is an image waiting for the next prompt.
type attachedImage struct {
	path string // absolute
	size int64
}

// AttachImage attaches the image file at path (absolute, or relative to
// the session's workspace) to the next prompt and shows its chip; the
// error says why it was refused. An @ mention of an image file is the
// server's to attach (docs/mentions.md), not this.
func (m *Model) AttachImage(path string) error {
	if len(m.images) >= imagefile.MaxPerPrompt {
		return errors.New("the next prompt already carries " + itoa(imagefile.MaxPerPrompt) + " images, the most one prompt takes; send it first")
	}
	f, err := imagefile.Read(imagefile.Resolve(m.session.Cwd, "", path))
	if err != nil {
		return err
	}
	sizes := []int64{f.Size}
	for _, im := range m.images {
		if im.path == f.Path {
			return errors.New("image " + f.Path + " is attached already")
		}
		sizes = append(sizes, im.size)
	}
	if err := imagefile.CheckTotal(sizes...); err != nil {
		return err
	}
	m.images = append(m.images, attachedImage{path: f.Path, size: f.Size})
	m.addItem(&item{kind: kindNotice, text: termtext.Line(imagefile.Chip(f.Path, f.Size)) + " attached to the next prompt (/image clear removes it)"})
	return nil
}

// imageCommand is /image: PATH attaches a file, "clear" drops what is
// attached, no argument lists it.
func (m *Model) imageCommand(args []string) {
	switch {
	case len(args) == 0:
		if len(m.images) == 0 {
			m.addItem(&item{kind: kindNotice, text: "no image attached; /image PATH attaches a PNG, JPEG, GIF or WebP file (at most 8 MiB) to the next prompt, and so does pasting its path"})
			return
		}
		m.addItem(&item{kind: kindNotice, text: "attached to the next prompt: " + m.chips(m.images) + " (/image clear removes them)"})
	case len(args) == 1 && args[0] == "clear":
		n := len(m.images)
		m.images = nil
		m.addItem(&item{kind: kindNotice, text: "removed " + itoa(n) + " attached images"})
	default:
		if err := m.AttachImage(strings.Join(args, " ")); err != nil {
			m.addItem(&item{kind: kindError, text: termtext.Line(err.Error()) + " (nothing was attached)"})
		}
	}
}

// pasteImages attaches the pasted text when it is the path of one image
// file, or one such path a line, as terminals paste dropped files
// (quoted, file://, or with escaped spaces). It reports whether the paste
// was taken as images; any other text is left to the composer.
func (m *Model) pasteImages(text string) bool {
	var paths []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		p := pastedPath(l)
		if p == "" || !imagefile.HasImageName(p) {
			return false
		}
		if _, err := os.Stat(imagefile.Resolve(m.session.Cwd, "", p)); errors.Is(err, fs.ErrNotExist) {
			return false
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		if err := m.AttachImage(p); err != nil {
			m.addItem(&item{kind: kindError, text: termtext.Line(err.Error()) + " (nothing was attached)"})
		}
	}
	return true
}

// pastedPath is one pasted line as a path: unquoted, without file://,
// with backslash-escaped spaces undone; "" when it is no path.
func pastedPath(l string) string {
	l = strings.TrimSpace(l)
	if len(l) >= 2 && (l[0] == '\'' || l[0] == '"') && l[len(l)-1] == l[0] {
		l = l[1 : len(l)-1]
	}
	l = strings.TrimPrefix(l, "file://")
	l = strings.ReplaceAll(l, `\ `, " ")
	if l == "" || strings.ContainsAny(l, "\t\r") {
		return ""
	}
	return l
}

// takeImages empties the attachments into a turn.start's images and the
// chips its prompt shows.
func (m *Model) takeImages() ([]proto.Image, string) {
	if len(m.images) == 0 {
		return nil, ""
	}
	refs := make([]proto.Image, len(m.images))
	for i, im := range m.images {
		refs[i] = proto.Image{Path: im.path}
	}
	chips := m.chips(m.images)
	m.images = nil
	return refs, chips
}

func (m *Model) chips(ims []attachedImage) string {
	parts := make([]string, len(ims))
	for i, im := range ims {
		parts[i] = termtext.Line(imagefile.Chip(im.path, im.size))
	}
	return strings.Join(parts, " ")
}

// storedChips are the chips of a stored turn's images.
func storedChips(ims []proto.Image) string {
	parts := make([]string, len(ims))
	for i, im := range ims {
		parts[i] = imagefile.Chip(im.Path, im.Size)
	}
	return strings.Join(parts, " ")
}

func itoa(n int) string { return strconv.Itoa(n) }

// ownImages are the images a stored turn's prompt was sent with, without
// the ones its `@` mentions attached: the server records those after the
// prompt's own, and their chips are the mentions' (from turn.started).
func ownImages(t proto.StoredTurn) []proto.Image {
	n := 0
	for _, raw := range t.Events {
		ev, err := proto.DecodeEvent(raw)
		if err != nil {
			continue
		}
		if st, ok := ev.(*proto.TurnStarted); ok {
			for _, m := range st.Mentions {
				if m.Kind == proto.MentionImage && m.Refused == "" {
					n++
				}
			}
			break
		}
	}
	return t.Images[:max(len(t.Images)-n, 0)]
}
