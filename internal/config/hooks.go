package config

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Hooks is the [hooks] table: commands SCV runs at points of a session
// (docs/hooks.md). Only the user config (and the --config file) may
// define hooks; a workspace's .scv/config.toml may add some only when the
// user config sets AllowWorkspace, because a hook runs a command.
type Hooks struct {
	AllowWorkspace bool      `toml:"allow_workspace"`
	Run            []HookRun `toml:"run"`
}

// HookRun is one [[hooks.run]] table.
type HookRun struct {
	// Name names the hook in events and `scv hooks list` (default:
	// "<event>-<n>", n counting from 1 in the order of definition).
	Name    string   `toml:"name"`
	Event   string   `toml:"event"`
	Match   string   `toml:"match"`
	Command []string `toml:"command"`
	// TimeoutSeconds 0 means the default, DefaultHookTimeoutSeconds.
	TimeoutSeconds int    `toml:"timeout_seconds"`
	OnError        string `toml:"on_error"`
	// Source is the file that defined the hook (set at load).
	Source string `toml:"-"`
}

// Hook events, on_error values and bounds.
const (
	HookSessionStart      = "session_start"
	HookUserPrompt        = "user_prompt"
	HookPreTool           = "pre_tool"
	HookPostTool          = "post_tool"
	HookApprovalRequested = "approval_requested"
	HookTurnEnd           = "turn_end"
	HookSessionEnd        = "session_end"

	HookOnErrorDeny  = "deny"
	HookOnErrorAllow = "allow"

	DefaultHookTimeoutSeconds = 10
	MaxHookTimeoutSeconds     = 600
	// MaxHooks bounds the hooks of all layers together.
	MaxHooks = 64
)

// HookEvents lists the events a hook may name, in the order they happen.
var HookEvents = []string{HookSessionStart, HookUserPrompt, HookPreTool, HookPostTool, HookApprovalRequested, HookTurnEnd, HookSessionEnd}

// toolEvents are the events whose hooks may name a tool in match.
var toolEvents = []string{HookPreTool, HookPostTool, HookApprovalRequested}

// hooksRefusal is why a project config may not define hooks here.
func (l *Loaded) hooksRefusal(pattern string) string {
	if pattern == "hooks.run" && !l.Config.Hooks.AllowWorkspace {
		return "a workspace config may define hooks only when the user config sets [hooks] allow_workspace = true (a hook runs a command on this machine); the workspace's hooks are not used: remove them, or opt in in $SCV_HOME/config.toml if you trust this workspace"
	}
	return ""
}

// layerHooks is the hooks after a layer: the lower layers' hooks and then
// those of the file, each marked with the file.
func layerHooks(old, fresh reflect.Value, file string) reflect.Value {
	all := slices.Clone(old.Interface().([]HookRun))
	for _, h := range fresh.Interface().([]HookRun) {
		h.Source = file
		all = append(all, h)
	}
	return reflect.ValueOf(all)
}

// checkHooks validates every hook; names are defaulted here (so they are
// unique across layers when the load ends).
func checkHooks(hs []HookRun) string {
	if len(hs) > MaxHooks {
		return fmt.Sprintf("%d hooks defined, at most %d allowed", len(hs), MaxHooks)
	}
	names := map[string]bool{}
	for i, h := range hs {
		where := fmt.Sprintf("hook %d", i+1)
		if h.Name != "" {
			where = fmt.Sprintf("hook %q", h.Name)
		}
		switch {
		case !slices.Contains(HookEvents, h.Event):
			return fmt.Sprintf("%s: event %q is not one of %s", where, h.Event, quoteList(HookEvents))
		case len(h.Command) == 0 || h.Command[0] == "":
			return fmt.Sprintf("%s: command must be a non-empty array, e.g. command = [\"/usr/local/bin/check\", \"--strict\"]", where)
		case h.TimeoutSeconds < 0 || h.TimeoutSeconds > MaxHookTimeoutSeconds:
			return fmt.Sprintf("%s: timeout_seconds %d is not between 0 (the default, %d) and %d", where, h.TimeoutSeconds, DefaultHookTimeoutSeconds, MaxHookTimeoutSeconds)
		case h.OnError != "" && h.OnError != HookOnErrorDeny && h.OnError != HookOnErrorAllow:
			return fmt.Sprintf("%s: on_error %q is not one of \"deny\", \"allow\"", where, h.OnError)
		case h.Match != "" && !slices.Contains(toolEvents, h.Event):
			return fmt.Sprintf("%s: match applies to the tool events only (%s), not to %s", where, quoteList(toolEvents), h.Event)
		case strings.ContainsAny(h.Name, " \t\n\"'") || len(h.Name) > 64:
			return fmt.Sprintf("%s: a name is at most 64 characters without spaces or quotes", where)
		}
		if h.Match != "" {
			if _, err := path.Match(h.Match, ""); err != nil {
				return fmt.Sprintf("%s: match %q is not a valid glob: %v", where, h.Match, err)
			}
		}
		if h.Name != "" {
			if names[h.Name] {
				return fmt.Sprintf("%s: the name is used by another hook", where)
			}
			names[h.Name] = true
		}
	}
	return ""
}

// HookName is the name of the i-th hook (from 0) of hs: its own, or
// "<event>-<n>" counting the hooks of that event from 1.
func HookName(hs []HookRun, i int) string {
	if hs[i].Name != "" {
		return hs[i].Name
	}
	n := 0
	for _, h := range hs[:i+1] {
		if h.Event == hs[i].Event {
			n++
		}
	}
	return hs[i].Event + "-" + strconv.Itoa(n)
}

func quoteList(s []string) string { return strings.Join(quoteAll(s), ", ") }

// formatHooks renders hooks for `scv config show`.
func formatHooks(hs []HookRun) string {
	if len(hs) == 0 {
		return "[]"
	}
	parts := make([]string, len(hs))
	for i, h := range hs {
		f := []string{"event = " + strconv.Quote(h.Event)}
		if h.Match != "" {
			f = append(f, "match = "+strconv.Quote(h.Match))
		}
		f = append(f, "command = ["+strings.Join(quoteAll(h.Command), ", ")+"]")
		parts[i] = "{ name = " + strconv.Quote(HookName(hs, i)) + ", " + strings.Join(f, ", ") + " }"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
