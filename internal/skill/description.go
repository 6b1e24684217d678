package skill

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// metaBytes bounds how much of SKILL.md discovery reads for its description.
const metaBytes = 64 << 10

// readDescription opens name (a SKILL.md relative to root) through root,
// so a symbolic link that leaves the root is refused, without blocking on
// a FIFO; it must be a regular file. It returns the sanitized description.
func readDescription(root *os.Root, name string) (string, error) {
	f, err := root.OpenFile(name, readFlags, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, metaBytes))
	if err != nil {
		return "", err
	}
	return Describe(string(b)), nil
}

// Describe returns the description of a SKILL.md text: the `description:`
// of a leading YAML front matter, else the first non-empty line that is not
// a Markdown heading; sanitized and bounded to MaxDescription characters.
func Describe(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	body := lines
	if len(lines) > 0 && strings.TrimSpace(strings.TrimPrefix(lines[0], "\ufeff")) == "---" {
		body = lines[1:] // unterminated front matter: skip the marker only
		for i := 1; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); t == "---" || t == "..." {
				if d := frontMatterDescription(lines[1:i]); d != "" {
					return Sanitize(d)
				}
				body = lines[i+1:]
				break
			}
		}
	}
	for _, l := range body {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return Sanitize(t)
	}
	return ""
}

// frontMatterDescription finds a top-level `description:` key: a plain or
// quoted value on the same line, or a block scalar (`|`, `>`) or plain
// multi-line value on the following indented lines.
func frontMatterDescription(lines []string) string {
	for i, l := range lines {
		key, val, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(key) != "description" || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		val = strings.TrimSpace(val)
		if val != "" && !strings.HasPrefix(val, "|") && !strings.HasPrefix(val, ">") {
			return unquote(val)
		}
		var parts []string
		for _, next := range lines[i+1:] {
			if strings.TrimSpace(next) != "" && !strings.HasPrefix(next, " ") && !strings.HasPrefix(next, "\t") {
				break
			}
			if t := strings.TrimSpace(next); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		inner := v[1 : len(v)-1]
		if v[0] == '\'' {
			return strings.ReplaceAll(inner, "''", "'")
		}
		return strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, " ", `\t`, " ").Replace(inner)
	}
	return v
}

// Sanitize makes untrusted skill metadata safe to show in one line: invalid
// UTF-8 dropped, control and format characters removed (whitespace ones
// become spaces), runs of spaces collapsed, and the result cut to
// MaxDescription characters with a trailing "…" when cut.
func Sanitize(s string) string {
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if utf8.RuneCountInString(out) <= MaxDescription {
		return out
	}
	runes := []rune(out)
	return strings.TrimSpace(string(runes[:MaxDescription-1])) + "…"
}
