package agent

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/scv-agent/scv/internal/tool"
)

// MaxAgentsMDBytes bounds the AGENTS.md included in the system prompt.
const MaxAgentsMDBytes = 32 << 10

// Prompt composes the system prompt: the configured base prompt, the
// workspace path, the workspace's AGENTS.md (bounded) and the skill list
// (empty in tool-free sessions).
func Prompt(base, workspace, agentsMD, skills string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(base))
	b.WriteString("\n\nWorkspace: ")
	b.WriteString(workspace)
	b.WriteString("\nAll file paths you pass to tools are relative to the workspace.")
	if strings.TrimSpace(agentsMD) != "" {
		b.WriteString("\n\n# AGENTS.md (project instructions from the workspace)\n\n")
		b.WriteString(strings.TrimSpace(agentsMD))
	}
	if strings.TrimSpace(skills) != "" {
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(skills))
	}
	return b.String()
}

// ReadAgentsMD reads <workspace>/AGENTS.md through the workspace root (a
// symlink leaving the workspace is not followed), bounded to
// MaxAgentsMDBytes. A missing file is not an error.
func ReadAgentsMD(workspace string) (string, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.Open("AGENTS.md")
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxAgentsMDBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxAgentsMDBytes {
		return tool.TruncateUTF8(string(b), MaxAgentsMDBytes) + "\n[AGENTS.md truncated]", nil
	}
	return string(b), nil
}
