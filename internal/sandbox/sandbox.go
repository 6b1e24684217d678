// Package sandbox confines the commands SCV runs for the model (bash calls,
// MCP servers, delegated agents) with the kernel's own mechanisms: Landlock
// rules for the filesystem, TCP and IPC scoping, and a seccomp filter for the
// socket families Landlock does not cover. Wrap derives a command's rules
// and returns Command.Confine, which restricts the calling OS thread with
// them; the caller's runner (proc.Spec.Confine) starts the child from such
// a thread and discards the thread, so the process group, signals,
// deadline and environment tag apply unchanged and no re-executed helper
// costs a process start. `scv sandbox-exec --policy=JSON -- PATH ARGS...`
// (Main) does the same by hand: it confines itself and execs the command.
// Probe says what the running kernel can enforce. Only Linux has it: elsewhere the sandbox is
// reported unavailable and a command that asks for it is refused.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is sandbox.mode.
type Mode string

// Modes, from loosest to strictest.
const (
	ModeOff            Mode = "off"
	ModeWorkspaceWrite Mode = "workspace-write"
	ModeReadOnly       Mode = "read-only"
)

// Rank orders modes by strictness: off < workspace-write < read-only; -1 for
// an unknown one.
func Rank(m Mode) int {
	switch m {
	case ModeOff:
		return 0
	case ModeWorkspaceWrite:
		return 1
	case ModeReadOnly:
		return 2
	}
	return -1
}

// HelperCommand is the hidden subcommand of SCV's binary that runs Main
// (for trying rules by hand; SCV itself confines a thread instead).
const HelperCommand = "sandbox-exec"

// Config is the sandbox as configured for one kind of child (the [sandbox]
// table, with paths already absolute).
type Config struct {
	Mode Mode
	// Network lets the child use the network (TCP, UDP, any socket family).
	Network bool
	// WritableRoots are directories writable besides the workspace
	// (workspace-write only).
	WritableRoots []string
	// DenyRead are paths the child can neither read nor list.
	DenyRead []string
	// BestEffort runs the child with what the kernel can enforce when it
	// cannot enforce everything; false refuses to run it.
	BestEffort bool
}

// On says the child is to be sandboxed.
func (c Config) On() bool { return c.Mode == ModeWorkspaceWrite || c.Mode == ModeReadOnly }

// Summary is what an approver reads about how a call will run:
// "sandboxed: workspace-write, no network", or "not sandboxed".
func (c Config) Summary() string {
	if !c.On() {
		return "not sandboxed"
	}
	net := "no network"
	if c.Network {
		net = "network allowed"
	}
	return fmt.Sprintf("sandboxed: %s, %s", c.Mode, net)
}

// Policy is what one confined command may do; for the helper it travels
// as JSON on its command line (it holds paths only, never a secret).
type Policy struct {
	Mode    Mode `json:"mode"`
	Network bool `json:"network"`
	// Workspace is readable, and writable in workspace-write.
	Workspace     string   `json:"workspace"`
	WritableRoots []string `json:"writable_roots,omitempty"`
	DenyRead      []string `json:"deny_read,omitempty"`
	// TempDir is the command's own temporary directory (its TMPDIR),
	// writable in every mode and removed when the command ends.
	TempDir    string `json:"temp_dir,omitempty"`
	BestEffort bool   `json:"best_effort"`
}

// Command is a command line ready to start, with the confinement to start
// it under when the sandbox is on.
type Command struct {
	Path string
	Args []string
	Env  []string
	// TempDir is the command's temporary directory ("" when unsandboxed).
	TempDir string
	// Confine (nil when unsandboxed) restricts the calling OS thread with
	// the command's rules; the command must be started from that thread,
	// which must be locked to its goroutine and never unlocked, so the
	// runtime ends it rather than run other goroutines confined.
	// proc.Spec.Confine does exactly that. The rules are derived when
	// Wrap runs; Confine only hands them to the kernel, so it may run
	// again for a retried start.
	Confine func() error
}

// Close removes the command's temporary directory; call it once the
// command and everything it started has ended.
func (c Command) Close() {
	if c.TempDir != "" {
		_ = os.RemoveAll(c.TempDir)
	}
}

// Wrap returns the command that runs path with args under c's rules in
// workspace, with env plus TMPDIR pointing at a fresh temporary directory
// and Confine set. With the sandbox off it returns the command unchanged.
// It fails with a message saying what to do when this system cannot
// sandbox, or cannot enforce every rule and c.BestEffort is false.
func Wrap(c Config, workspace, path string, args, env []string) (Command, error) {
	if !c.On() {
		return Command{Path: path, Args: args, Env: env}, nil
	}
	rep := Probe()
	if !rep.Available {
		return Command{}, fmt.Errorf("%w: %s; set sandbox.mode = \"off\" to run commands unconfined", ErrUnavailable, rep.Reason)
	}
	if missing := rep.Missing(c.Network); len(missing) > 0 && !c.BestEffort {
		return Command{}, fmt.Errorf("%w: this kernel (Landlock ABI %d) cannot enforce: %s; set sandbox.best_effort = true to run with the rest enforced, or sandbox.mode = \"off\"",
			ErrIncomplete, rep.ABI, strings.Join(missing, "; "))
	}
	tmp, err := os.MkdirTemp("", "scv-sandbox-")
	if err != nil {
		return Command{}, fmt.Errorf("sandbox temp dir: %w", err)
	}
	p := Policy{Mode: c.Mode, Network: c.Network, Workspace: workspace, WritableRoots: c.WritableRoots,
		DenyRead: c.DenyRead, TempDir: tmp, BestEffort: c.BestEffort}
	confine, err := confiner(p, rep)
	if err != nil {
		os.RemoveAll(tmp)
		return Command{}, err
	}
	return Command{Path: path, Args: args, Env: setEnv(env, "TMPDIR", tmp), TempDir: tmp, Confine: confine}, nil
}

// setEnv returns env with key set to value (any other entry of key removed).
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// Errors of Wrap.
var (
	ErrUnavailable = fmt.Errorf("the sandbox is unavailable on this system")
	ErrIncomplete  = fmt.Errorf("the sandbox cannot enforce every rule here")
)

// DefaultDenyRead are the paths hidden from a sandboxed command unless
// configured otherwise, relative to the user's home: keys, credentials
// and tokens of common tools. SCV's own home is added by the caller.
var DefaultDenyRead = []string{
	".ssh", ".gnupg", ".aws", ".config/gh", ".netrc", "_netrc",
	".npmrc", ".pypirc", ".pgpass", ".git-credentials",
	".docker/config.json", ".kube", ".config/gcloud",
}

// cleanAbs cleans absolute paths, drops relative and duplicate ones.
func cleanAbs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// under says p is d or lies below it.
func under(p, d string) bool {
	return p == d || d == "/" || strings.HasPrefix(p, d+"/")
}

// devices are always writable: the /dev/null-style sinks and sources
// ordinary commands write to.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}
