package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/scv-agent/scv/internal/approval"
)

// Approvals is the [approvals] table: saved rules that allow or deny tool
// calls without asking (docs/configuration.md, "Saved approval rules").
type Approvals struct {
	Rules []ApprovalRule `toml:"rules"`
}

// ApprovalRule is one [[approvals.rules]] table: a tool, at most one of a
// command prefix, a path and a domain, a decision and an optional
// workspace.
type ApprovalRule struct {
	Tool     string `toml:"tool"`
	Prefix   string `toml:"prefix"`
	Path     string `toml:"path"`
	Domain   string `toml:"domain"`
	Decision string `toml:"decision"`
	// Workspace limits the rule to sessions whose workspace is this
	// absolute directory or lies under it.
	Workspace string `toml:"workspace"`
	// Source and Line are where the rule is written (set at load).
	Source string `toml:"-"`
	Line   int    `toml:"-"`
}

// Decisions of a rule; MaxApprovalRules bounds the rules of all layers.
const (
	DecisionAllow    = "allow"
	DecisionDeny     = "deny"
	MaxApprovalRules = 256
)

// Where is the rule's file:line.
func (r ApprovalRule) Where() string {
	if r.Line > 0 {
		return r.Source + ":" + strconv.Itoa(r.Line)
	}
	return r.Source
}

// Spec is the rule as internal/approval checks and builds it.
func (r ApprovalRule) Spec() approval.Spec {
	return approval.Spec{Tool: r.Tool, Prefix: r.Prefix, Path: r.Path, Domain: r.Domain,
		Deny: r.Decision == DecisionDeny, Workspace: r.Workspace, Source: r.Where()}
}

// Grants builds the loaded rules (checked at load, so no error is left).
func (a Approvals) Grants() []approval.Grant {
	out := []approval.Grant{}
	for _, r := range a.Rules {
		if g, err := r.Spec().Rule(); err == nil {
			out = append(out, g)
		}
	}
	return out
}

// layerRules adds a file's rules after the lower layers', each marked with
// the file and the line of its [[approvals.rules]] header. A project
// (workspace) config may add deny rules only: an allow rule there is a
// problem at its line, because a repository must never let its own
// commands run unasked.
func layerRules(old, fresh reflect.Value, file, layer string, lines []int) (reflect.Value, []Problem) {
	all := slices.Clone(old.Interface().([]ApprovalRule))
	var probs []Problem
	for i, r := range fresh.Interface().([]ApprovalRule) {
		r.Source = file
		if i < len(lines) {
			r.Line = lines[i]
		} else if len(lines) > 0 {
			r.Line = lines[len(lines)-1]
		}
		if msg := checkRule(r); msg != "" {
			probs = append(probs, Problem{Source: file, Line: r.Line, Key: "approvals.rules", Msg: msg})
			continue
		}
		if layer == LayerProject && r.Decision != DecisionDeny {
			probs = append(probs, Problem{Source: file, Line: r.Line, Key: "approvals.rules",
				Msg: "a workspace config may add deny rules only (a repository must not let its own commands run unasked); remove this rule, or save it as an allow rule in $SCV_HOME/config.toml with workspace = \"<this workspace>\""})
			continue
		}
		all = append(all, r)
	}
	if len(all) > MaxApprovalRules {
		probs = append(probs, Problem{Source: file, Key: "approvals.rules", Msg: fmt.Sprintf("%d rules defined, at most %d allowed", len(all), MaxApprovalRules)})
	}
	return reflect.ValueOf(all), probs
}

// checkRule says what is wrong with one rule, or "".
func checkRule(r ApprovalRule) string {
	if r.Decision != DecisionAllow && r.Decision != DecisionDeny {
		return fmt.Sprintf("rule for %q: decision %q is not \"allow\" or \"deny\"", r.Tool, r.Decision)
	}
	if _, err := r.Spec().Rule(); err != nil {
		return fmt.Sprintf("rule for %q: %v", r.Tool, err)
	}
	return ""
}

// formatRules renders the rules for `scv config show`, one per rule with
// where it is written.
func formatRules(rs []ApprovalRule) string {
	if len(rs) == 0 {
		return "[]"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		f := []string{"tool = " + strconv.Quote(r.Tool)}
		for _, kv := range [][2]string{{"prefix", r.Prefix}, {"path", r.Path}, {"domain", r.Domain}} {
			if kv[1] != "" {
				f = append(f, kv[0]+" = "+strconv.Quote(kv[1]))
			}
		}
		f = append(f, "decision = "+strconv.Quote(r.Decision))
		if r.Workspace != "" {
			f = append(f, "workspace = "+strconv.Quote(r.Workspace))
		}
		parts[i] = "{ " + strings.Join(f, ", ") + " } (" + r.Where() + ")"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
