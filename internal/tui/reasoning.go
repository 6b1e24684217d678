package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Reasoning (assistant.reasoning) is shown dimmed while it streams, its
// last reasoningLines lines only, and collapsed to one line once the turn
// ends. It is never part of the answer.
const reasoningLines = 8

// reasoningItem is the reasoning row receiving fragments, opened on the
// first fragment after other output.
func (m *Model) reasoningItem() *item {
	if m.thinking == nil {
		m.thinking = m.addItem(&item{kind: kindReasoning, streaming: true})
		m.turnThinking = append(m.turnThinking, m.thinking)
	}
	return m.thinking
}

func (m *Model) addReasoning(text string) {
	it := m.reasoningItem()
	if len(it.text) < maxStoredOutput {
		it.text += text
		if len(it.text) > maxStoredOutput {
			it.text, it.truncated = strings.ToValidUTF8(it.text[:maxStoredOutput], ""), true
		}
	}
	it.touch()
}

// endReasoning closes the open reasoning row: other output follows.
func (m *Model) endReasoning() {
	if m.thinking != nil {
		m.thinking.streaming = false
		m.thinking.touch()
		m.thinking = nil
	}
}

// collapseReasoning folds the turn's reasoning rows to one line each.
func (m *Model) collapseReasoning() {
	m.endReasoning()
	for _, it := range m.turnThinking {
		it.collapsed = true
		it.touch()
	}
	m.turnThinking = nil
}

func renderReasoning(it *item, width int, r *renderer) []string {
	dim := r.styles.dim
	text := strings.TrimSpace(it.text)
	all := strings.Split(text, "\n")
	if it.collapsed {
		first := ""
		for _, l := range all {
			if l = strings.TrimSpace(l); l != "" {
				first = l
				break
			}
		}
		head := fmt.Sprintf("✻ thought (%d lines): ", len(all))
		return []string{dim.Render(head + ansi.Truncate(first, max(width-ansi.StringWidth(head), 8), "…"))}
	}
	lines := prefixed("✻ ", "  ", text, width)
	if n := len(lines) - reasoningLines; n > 0 {
		lines = append([]string{fmt.Sprintf("✻ … %d earlier lines", n)}, lines[n+1:]...)
	}
	for i := range lines {
		lines[i] = dim.Italic(true).Render(lines[i])
	}
	return lines
}
