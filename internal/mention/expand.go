package mention

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/scv-agent/scv/internal/imagefile"
	"github.com/scv-agent/scv/internal/proto"
)

// DefaultMaxMentions bounds how many mentions of one prompt are attached;
// the rest are listed as not attached.
const DefaultMaxMentions = 10

// File is what a Source gives for one mentioned file: its content (at
// most the limit asked for), the image it holds, or why it is refused.
type File struct {
	Content   string
	Total     int64 // the file's size
	Truncated bool
	Refused   string
	// Image is set for an image file (PNG, JPEG, GIF or WebP by its
	// content, read with imagefile's limits): it goes to the model as an
	// input image of the prompt, not as text.
	Image *imagefile.File
}

// Expansion is what a prompt's mentions attach: Text to append to the
// prompt, one Mention per distinct mentioned path (for the client's
// chips), and the mentioned image files, in the order of the prompt,
// their Path absolute.
type Expansion struct {
	Text     string
	Mentions []proto.Mention
	Images   []imagefile.File
}

// Source reads mentioned files and judges mentioned directories with the
// checks of the file tools (the workspace root, secret-like paths, binary
// content); the app passes the `read` tool's (fs.MentionSource).
type Source interface {
	// File reads the workspace file rel, at most limit bytes.
	File(ctx context.Context, rel string, limit int) File
	// DirRefused says why the directory rel must not be listed, or "".
	DirRefused(rel string) string
}

// Expander attaches the files and directories a prompt mentions.
type Expander struct {
	Workspace string
	// Limit is tools.output_limit_bytes: the most bytes of content (or
	// listing) one mention attaches.
	Limit int
	// MaxMentions bounds the mentions attached (DefaultMaxMentions when 0).
	MaxMentions int
	Source      Source
}

// Token is one `@path` of a prompt: the path as written (quotes removed).
type Token struct {
	Path string
	// Loose says the path was written bare and may carry trailing
	// punctuation of the sentence ("see @main.go.").
	Loose bool
}

// Tokens finds the `@path` mentions of a prompt: an `@` at the start of
// the text or after white space, then either a quoted path (`@"my
// file.txt"`) or the characters up to the next white space. An `@` inside
// a word (a@b.com) is no mention.
func Tokens(prompt string) []Token {
	var out []Token
	for i := 0; i < len(prompt); i++ {
		if prompt[i] != '@' || (i > 0 && !isSpace(prompt[i-1])) {
			continue
		}
		rest := prompt[i+1:]
		if strings.HasPrefix(rest, `"`) {
			if end := strings.IndexByte(rest[1:], '"'); end > 0 {
				out = append(out, Token{Path: rest[1 : 1+end]})
				i += 2 + end
			}
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' })
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			out = append(out, Token{Path: rest[:end], Loose: true})
		}
		i += end
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// trailing is the sentence punctuation a bare mention may end with.
const trailing = ".,;:!?)]}'\"`"

// Expand finds the prompt's mentions and returns the text to append to
// the prompt for the model (empty when nothing is mentioned), what was
// attached or refused, one entry per distinct mentioned path, for the
// client's chips, and the mentioned images. carried are the sizes of the
// images the prompt already carries (turn.start's images): a mentioned
// image counts with them against imagefile.MaxPerPrompt and
// imagefile.MaxTotalBytes. A bare word that names nothing in the
// workspace and has neither "/" nor "." (@alice) is no mention.
func (e Expander) Expand(ctx context.Context, prompt string, carried []int64) Expansion {
	toks := Tokens(prompt)
	if len(toks) == 0 || e.Workspace == "" || e.Source == nil {
		return Expansion{}
	}
	root, err := os.OpenRoot(e.Workspace)
	if err != nil {
		return Expansion{}
	}
	defer root.Close()
	maxN := e.MaxMentions
	if maxN <= 0 {
		maxN = DefaultMaxMentions
	}
	var b strings.Builder
	var out []proto.Mention
	ims := imageBudget{sizes: slices.Clone(carried)}
	seen := map[string]bool{}
	for _, t := range toks {
		rel, fi, err := resolve(root, t)
		if rel == "" {
			continue
		}
		if seen[rel] {
			continue
		}
		seen[rel] = true
		m := proto.Mention{Path: rel, Kind: proto.MentionFile}
		switch {
		case len(out) >= maxN:
			m.Refused = fmt.Sprintf("more than %d mentions in one prompt; only the first %d are attached", maxN, maxN)
		case err != nil:
			m.Refused = err.Error()
		case fi.IsDir():
			m.Kind, m.Path = proto.MentionDir, rel+"/"
			e.dir(ctx, rel, &m, &b)
		default:
			e.file(ctx, rel, &m, &b, &ims)
		}
		if m.Refused != "" {
			fmt.Fprintf(&b, "<not-attached path=%s>%s</not-attached>\n", strconv.Quote(m.Path), m.Refused)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return Expansion{}
	}
	return Expansion{
		Text:     "\n\nThe user mentioned these workspace paths with @; their content as of this prompt:\n\n" + b.String(),
		Mentions: out,
		Images:   ims.files,
	}
}

// imageBudget counts a prompt's images against imagefile's limits.
type imageBudget struct {
	sizes []int64 // of every image of the prompt so far
	files []imagefile.File
}

// take adds f to the prompt's images, or says why it cannot be.
func (ib *imageBudget) take(f imagefile.File) string {
	if len(ib.sizes) >= imagefile.MaxPerPrompt {
		return fmt.Sprintf("the prompt would carry more than %d images, the most one prompt takes; send fewer", imagefile.MaxPerPrompt)
	}
	if err := imagefile.CheckTotal(append(slices.Clone(ib.sizes), f.Size)...); err != nil {
		return err.Error()
	}
	ib.sizes = append(ib.sizes, f.Size)
	ib.files = append(ib.files, f)
	return ""
}

// resolve finds what a token names: its cleaned workspace-relative path
// and what it is. A bare token that names nothing is tried without its
// trailing punctuation. rel is "" when the token is no mention at all.
func resolve(root *os.Root, t Token) (string, fs.FileInfo, error) {
	cands := []string{t.Path}
	if t.Loose {
		for p := t.Path; len(p) > 1 && strings.ContainsAny(p[len(p)-1:], trailing); {
			p = p[:len(p)-1]
			cands = append(cands, p)
		}
	}
	var firstRel string
	var firstErr error
	missing := true
	for _, c := range cands {
		rel, err := cleanRel(c)
		if err != nil {
			if firstErr == nil {
				firstRel, firstErr = c, err
			}
			continue
		}
		fi, err := root.Stat(rel)
		if err == nil {
			return rel, fi, nil
		}
		missing = missing && errors.Is(err, fs.ErrNotExist)
		if firstErr == nil {
			firstRel, firstErr = rel, statError(err)
		}
	}
	if t.Loose && missing && !strings.ContainsAny(strings.TrimRight(t.Path, trailing), "/.") {
		return "", nil, nil // @alice: a name, not a path
	}
	return firstRel, nil, firstErr
}

// cleanRel checks a mentioned path lexically: relative, inside.
func cleanRel(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", errors.New("not a path")
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return "", errors.New("absolute paths are not attached; mention a path relative to the workspace")
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", errors.New("it leads outside the workspace; only workspace paths are attached")
	}
	if c == "." {
		return "", errors.New("the workspace itself is not attached; mention a file or directory in it")
	}
	return c, nil
}

func statError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file or directory in the workspace")
	case strings.Contains(err.Error(), "path escapes from parent"):
		return errors.New("it resolves through a symbolic link that leads outside the workspace; not attached")
	}
	return fmt.Errorf("cannot be opened: %v", err)
}

func (e Expander) file(ctx context.Context, rel string, m *proto.Mention, b *strings.Builder, ims *imageBudget) {
	f := e.Source.File(ctx, rel, e.Limit)
	if f.Refused != "" {
		m.Refused = f.Refused
		return
	}
	if im := f.Image; im != nil {
		m.Kind = proto.MentionImage
		abs := *im
		abs.Path = filepath.Join(e.Workspace, filepath.FromSlash(rel))
		if m.Refused = ims.take(abs); m.Refused != "" {
			return
		}
		m.Bytes = im.Size
		fmt.Fprintf(b, "<image path=%s bytes=\"%d\" media_type=%s>attached to this message as an input image</image>\n",
			strconv.Quote(rel), im.Size, strconv.Quote(im.MediaType))
		return
	}
	m.Bytes, m.Truncated = int64(len(f.Content)), f.Truncated
	attrs := "path=" + strconv.Quote(rel) + " bytes=\"" + strconv.FormatInt(f.Total, 10) + "\""
	if f.Truncated {
		attrs += fmt.Sprintf(" truncated=\"first %d bytes; read the rest with the read tool\"", len(f.Content))
	}
	fmt.Fprintf(b, "<file %s>\n%s", attrs, f.Content)
	if !strings.HasSuffix(f.Content, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("</file>\n")
}

// dir attaches a directory's own entries (one level, .gitignore applied,
// sorted, subdirectories ending in "/"), within Limit bytes.
func (e Expander) dir(ctx context.Context, rel string, m *proto.Mention, b *strings.Builder) {
	if why := e.Source.DirRefused(rel); why != "" {
		m.Refused = why
		return
	}
	w, err := NewWalker(e.Workspace, WalkOptions{Dir: rel, MaxDepth: 1, MaxEntries: DefaultMaxEntries})
	if err != nil {
		m.Refused = fmt.Sprintf("cannot be listed: %v", err)
		return
	}
	defer w.Close()
	ents, err := w.Next(ctx, 0)
	if err != nil {
		m.Refused = "cancelled"
		return
	}
	slices.Sort(ents)
	var list strings.Builder
	shown := 0
	for _, p := range ents {
		line := strings.TrimPrefix(p, rel+"/") + "\n"
		if e.Limit > 0 && list.Len()+len(line) > e.Limit {
			break
		}
		list.WriteString(line)
		shown++
	}
	m.Bytes, m.Truncated = int64(list.Len()), shown < len(ents)
	attrs := "path=" + strconv.Quote(rel+"/") + " entries=\"" + strconv.Itoa(len(ents)) + "\""
	if m.Truncated {
		attrs += fmt.Sprintf(" truncated=\"first %d entries\"", shown)
	}
	fmt.Fprintf(b, "<directory %s>\n%s</directory>\n", attrs, list.String())
}
