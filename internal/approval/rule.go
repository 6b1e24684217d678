package approval

import (
	"errors"
	"fmt"
	pathpkg "path"
	"strings"

	"github.com/scv-agent/scv/internal/tool"
)

// Rules are grants a session starts with (`scv exec --allow`): the same
// kinds as the grants a person gives, with the same limits — a command
// rule is a prefix (never a shell, interpreter or runner without a fixed
// script), a write rule a path, and no rule covers a guarded path or a
// call marked NoGrant. A rule has no risk of its own: it covers the calls
// of its tool whatever their risk. Their ids start with "r"; they are
// listed and revoked like any grant.

// maxToolNameBytes bounds a rule's tool name.
const maxToolNameBytes = 128

func checkToolName(name string) error {
	if name == "" || len(name) > maxToolNameBytes {
		return fmt.Errorf("the tool name %q is empty or longer than %d bytes; name a tool as `scv tools list` shows it", name, maxToolNameBytes)
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("_-.", r)) {
			return fmt.Errorf("the tool name %q holds %q; name a tool as `scv tools list` shows it", name, r)
		}
	}
	return nil
}

// PrefixRule is a rule for the commands of toolName that start with
// prefix.
func PrefixRule(toolName, prefix, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	p := words(prefix)
	switch {
	case len(p) == 0:
		return Grant{}, fmt.Errorf("a %s rule needs a command prefix, such as `%s:go test`: a rule for every command would run anything", toolName, toolName)
	case len(prefix) > MaxPrefixBytes:
		return Grant{}, fmt.Errorf("the prefix is %d bytes; at most %d are accepted", len(prefix), MaxPrefixBytes)
	}
	for _, w := range p {
		if !plainWord(w) {
			return Grant{}, fmt.Errorf("the prefix word %q is not plain: use letters, digits and . _ - / + : = @ %% , ~ ^ only", w)
		}
	}
	if why := runnerWhy(p); why != "" {
		return Grant{}, errors.New(runnerRefusal(p, why))
	}
	if a := findAction(p); a != "" {
		return Grant{}, fmt.Errorf("the prefix %q holds `%s`, with which find runs or changes other things", NormalPrefix(prefix), a)
	}
	if why := CommandGuard(prefix); why != "" {
		return Grant{}, fmt.Errorf("the prefix %q %s", NormalPrefix(prefix), why)
	}
	return Grant{Tool: toolName, Prefix: NormalPrefix(prefix), Source: source}, nil
}

// PathRule is a rule for the writes of toolName under path ("" or "." is
// the whole workspace).
func PathRule(toolName, path, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	if strings.TrimSpace(path) == "" {
		path = WorkspaceRoot
	}
	c, err := cleanGrantPath(path)
	if err != nil {
		return Grant{}, err
	}
	if c != WorkspaceRoot {
		if why := tool.Guarded(c); why != "" {
			return Grant{}, fmt.Errorf("the path %q is guarded (%s): no rule covers it", c, why)
		}
		// A directory unless the last component names a file (has a
		// dot) and no final slash says otherwise.
		if strings.HasSuffix(strings.TrimSpace(path), "/") || !strings.Contains(pathpkg.Base(c), ".") {
			c += "/"
		}
	}
	return Grant{Tool: toolName, Path: c, Source: source}, nil
}

// ToolRule is a rule for every call of toolName (a tool that runs no
// command and writes no path).
func ToolRule(toolName, source string) (Grant, error) {
	if err := checkToolName(toolName); err != nil {
		return Grant{}, err
	}
	return Grant{Tool: toolName, Source: source}, nil
}

// AddRules gives the broker the rules a session starts with, ids r1, r2, …
func (b *Broker) AddRules(rules []Grant) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, g := range rules {
		g.ID = fmt.Sprintf("r%d", i+1)
		b.grants = append(b.grants, g)
	}
}
