package agent

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/scv-agent/scv/internal/tool"
)

// MaxAgentsMDBytes bounds each instruction file included in the system
// prompt (the user's and the workspace's).
const MaxAgentsMDBytes = 32 << 10

// Instructions are the instruction files a session's system prompt
// includes: the user's own rules (<SCV home>/AGENTS.md) and the
// workspace's (AGENTS.md, or CLAUDE.md when there is no AGENTS.md), each
// bounded to MaxAgentsMDBytes.
type Instructions struct {
	User string
	// Project is the workspace file's text and ProjectFile its name
	// ("AGENTS.md" or "CLAUDE.md"; empty when there is none).
	Project, ProjectFile string
}

// Prompt composes the system prompt: the configured base prompt, the
// workspace path, the user's instructions, the workspace's (bounded) and
// the skill list (empty in tool-free sessions).
func Prompt(base, workspace string, in Instructions, skills string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(base))
	b.WriteString("\n\nWorkspace: ")
	b.WriteString(workspace)
	b.WriteString("\nAll file paths you pass to tools are relative to the workspace.")
	if strings.TrimSpace(in.User) != "" {
		b.WriteString("\n\n# Your user's instructions (their own AGENTS.md, for every workspace)\n\n")
		b.WriteString(strings.TrimSpace(in.User))
	}
	if strings.TrimSpace(in.Project) != "" {
		b.WriteString("\n\n# " + in.ProjectFile + " (project instructions from the workspace)\n\n")
		b.WriteString(strings.TrimSpace(in.Project))
	}
	if strings.TrimSpace(skills) != "" {
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(skills))
	}
	return b.String()
}

// ReadInstructions reads the user's AGENTS.md in scvHome (skipped when
// scvHome is empty) and the workspace's AGENTS.md, or its CLAUDE.md when
// it has no AGENTS.md, each through its directory's root (a symlink
// leaving it is not followed) and bounded to MaxAgentsMDBytes. Missing
// files are not errors; the first error is returned with what could be
// read.
func ReadInstructions(scvHome, workspace string) (Instructions, error) {
	var in Instructions
	var first error
	if scvHome != "" {
		text, ok, err := readBounded(scvHome, "AGENTS.md")
		if ok {
			in.User = text
		}
		first = err
	}
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		text, ok, err := readBounded(workspace, name)
		if err != nil && first == nil {
			first = err
		}
		if ok {
			in.Project, in.ProjectFile = text, name
			break
		}
		if err != nil {
			break
		}
	}
	return in, first
}

// readBounded reads dir/name through dir's root, bounded to
// MaxAgentsMDBytes; ok is false when the file does not exist.
func readBounded(dir, name string) (text string, ok bool, err error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer root.Close()
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxAgentsMDBytes+1))
	if err != nil {
		return "", false, err
	}
	if len(b) > MaxAgentsMDBytes {
		return tool.TruncateUTF8(string(b), MaxAgentsMDBytes) + "\n[" + name + " truncated]", true, nil
	}
	return string(b), true, nil
}
