package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const hookTable = "[[hooks.run]]\nevent = \"pre_tool\"\nmatch = \"bash\"\ncommand = [\"/bin/check\", \"-x\"]\n"

func TestHooksFromTheUserConfig(t *testing.T) {
	f := newFixture(t)
	user := f.user(t, hookTable+"\n[[hooks.run]]\nname = \"fmt\"\nevent = \"post_tool\"\nmatch = \"write\"\ncommand = [\"gofmt\", \"-l\"]\ntimeout_seconds = 30\non_error = \"allow\"\n")
	l := mustLoad(t, f.opts())
	want := []HookRun{
		{Event: "pre_tool", Match: "bash", Command: []string{"/bin/check", "-x"}, Source: user},
		{Name: "fmt", Event: "post_tool", Match: "write", Command: []string{"gofmt", "-l"}, TimeoutSeconds: 30, OnError: "allow", Source: user},
	}
	if d := cmp.Diff(want, l.Config.Hooks.Run); d != "" {
		t.Errorf("hooks (-want +got):\n%s", d)
	}
	if n := HookName(l.Config.Hooks.Run, 0); n != "pre_tool-1" {
		t.Errorf("default name = %q", n)
	}
}

// A workspace's hooks are refused unless the user config opts in; with the
// opt-in they follow the user's hooks. A workspace never opts itself in.
func TestWorkspaceHooks(t *testing.T) {
	refused := "a workspace config may define hooks only when the user config sets [hooks] allow_workspace = true"
	probs := projectProblems(t, "", hookTable)
	if len(probs) != 1 || probs[0].Key != "hooks.run" || !strings.HasPrefix(probs[0].Msg, refused) {
		t.Errorf("workspace hooks without the opt-in: %+v", probs)
	}
	probs = projectProblems(t, "", "[hooks]\nallow_workspace = true\n")
	if d := cmp.Diff([]Problem{{"P", 2, "hooks.allow_workspace", forbidMsg}}, probs); d != "" {
		t.Errorf("a workspace opting itself in (-want +got):\n%s", d)
	}
	f := newFixture(t)
	user := f.user(t, "[hooks]\nallow_workspace = true\n"+hookTable)
	proj := f.project(t, "[[hooks.run]]\nevent = \"turn_end\"\ncommand = [\"notify-send\", \"done\"]\n")
	l := mustLoad(t, f.opts())
	var got []string
	for _, h := range l.Config.Hooks.Run {
		got = append(got, h.Event+"@"+h.Source)
	}
	if d := cmp.Diff([]string{"pre_tool@" + user, "turn_end@" + proj}, got); d != "" {
		t.Errorf("hooks with the opt-in (-want +got):\n%s", d)
	}
}

func TestHookValidation(t *testing.T) {
	tests := []struct{ name, body, msg string }{
		{"event", "[[hooks.run]]\nevent = \"before_tool\"\ncommand = [\"x\"]\n", `hook 1: event "before_tool" is not one of "session_start", "user_prompt", "pre_tool", "post_tool", "approval_requested", "turn_end", "session_end"`},
		{"no command", "[[hooks.run]]\nevent = \"pre_tool\"\n", `hook 1: command must be a non-empty array`},
		{"timeout", "[[hooks.run]]\nevent = \"pre_tool\"\ncommand = [\"x\"]\ntimeout_seconds = 601\n", `hook 1: timeout_seconds 601 is not between 0`},
		{"on_error", "[[hooks.run]]\nevent = \"pre_tool\"\ncommand = [\"x\"]\non_error = \"ignore\"\n", `hook 1: on_error "ignore" is not one of "deny", "allow"`},
		{"glob", "[[hooks.run]]\nevent = \"pre_tool\"\nmatch = \"[\"\ncommand = [\"x\"]\n", `hook 1: match "[" is not a valid glob`},
		{"match on a session event", "[[hooks.run]]\nevent = \"turn_end\"\nmatch = \"bash\"\ncommand = [\"x\"]\n", `hook 1: match applies to the tool events only`},
		{"same name", "[[hooks.run]]\nname = \"a\"\nevent = \"turn_end\"\ncommand = [\"x\"]\n[[hooks.run]]\nname = \"a\"\nevent = \"turn_end\"\ncommand = [\"x\"]\n", `hook "a": the name is used by another hook`},
		{"unknown key", "[[hooks.run]]\nevent = \"turn_end\"\ncommand = [\"x\"]\nmatcher = \"bash\"\n", `unknown`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.user(t, tc.body)
			_, err := Load(f.opts())
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error = %v, want one containing %q", err, tc.msg)
			}
		})
	}
}
