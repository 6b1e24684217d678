package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unicode/utf8"
)

// ErrConfigChanged: the file changed between reading it and publishing the
// new text; nothing was written.
var ErrConfigChanged = errors.New("the user config changed while the rule was being saved; nothing was written: try again")

// SaveOptions are the seams of SaveRule a test needs.
type SaveOptions struct {
	// beforeRename runs after the new text is written and synced to its
	// temporary file, just before the recheck and the rename.
	beforeRename func(tmp string)
}

// SaveRule appends r as one [[approvals.rules]] table to the user config
// at path and returns it with its Source and Line. The rest of the file
// is kept byte for byte (comments, order, spacing): the table is added at
// the end, never re-serialised. The file is replaced atomically: the new
// text goes to a temporary file in the same directory, is synced, and is
// renamed over the old one only if the file still holds what was read, so
// a crash leaves the old file or the new one and a concurrent edit is
// never lost (ErrConfigChanged). A file that does not load (a syntax
// error, an invalid value), or would not with the rule, is left alone and
// the error says why.
func SaveRule(path string, r ApprovalRule, opts SaveOptions) (ApprovalRule, error) {
	if msg := checkRule(r); msg != "" {
		return ApprovalRule{}, errors.New(msg)
	}
	old, mode, err := readFile(path)
	existed := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old, mode = nil, 0o600
	case err != nil:
		return ApprovalRule{}, fmt.Errorf("read the user config %s: %v", path, err)
	}
	if probs := loadsAsUser(path, old, mode); len(probs) > 0 {
		return ApprovalRule{}, fmt.Errorf("the user config does not load, so no rule was saved; fix it first: %s", probs[0])
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	if len(old) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString("# saved by scv from an approval (\"always (save rule)\")\n")
	r.Line = bytes.Count(b.Bytes(), []byte("\n")) + 1
	b.WriteString(ruleTOML(r))
	fresh := b.Bytes()
	if probs := loadsAsUser(path, fresh, mode); len(probs) > 0 {
		return ApprovalRule{}, fmt.Errorf("the user config would not load with the rule, so none was saved: %s", probs[0])
	}
	if len(fresh) > maxFileBytes {
		return ApprovalRule{}, fmt.Errorf("the user config would exceed %d bytes with the rule", maxFileBytes)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return ApprovalRule{}, fmt.Errorf("save the rule: %v", err)
	}
	// A config kept elsewhere and linked in (a dotfiles repository) stays
	// linked: the file the link names is replaced, not the link.
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	}
	if err := publish(target, fresh, mode, func() error {
		now, _, err := readFile(target)
		if errors.Is(err, fs.ErrNotExist) && !existed || err == nil && existed && bytes.Equal(now, old) {
			return nil
		}
		return ErrConfigChanged
	}, opts); err != nil {
		return ApprovalRule{}, err
	}
	r.Source = path
	return r, nil
}

// publish writes data to a synced temporary file beside path, checks
// unchanged, renames it over path and syncs the directory.
func publish(path string, data []byte, mode fs.FileMode, unchanged func() error, opts SaveOptions) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save the rule: %v", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("save the rule: %v", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("save the rule: %v", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("save the rule: %v", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save the rule: %v", err)
	}
	if opts.beforeRename != nil {
		opts.beforeRename(tmp)
	}
	if err := unchanged(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save the rule: %v", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// loadsAsUser is the problems data has as a user config.
func loadsAsUser(path string, data []byte, mode fs.FileMode) []Problem {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var fresh Config
	entries, probs := parseFile(path, data, &fresh)
	if len(probs) > 0 {
		return probs
	}
	l := &Loaded{Config: Defaults(""), origins: map[string]origin{}}
	return l.apply(path, LayerUser, mode, entries, reflect.ValueOf(&fresh).Elem())
}

// ruleTOML is r as one [[approvals.rules]] table.
func ruleTOML(r ApprovalRule) string {
	var b strings.Builder
	b.WriteString("[[approvals.rules]]\n")
	for _, kv := range [][2]string{{"tool", r.Tool}, {"prefix", r.Prefix}, {"path", r.Path}, {"domain", r.Domain}, {"decision", r.Decision}, {"workspace", r.Workspace}} {
		if kv[1] != "" {
			b.WriteString(kv[0] + " = " + tomlString(kv[1]) + "\n")
		}
	}
	return b.String()
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
