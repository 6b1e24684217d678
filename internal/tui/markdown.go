package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// styles are the lipgloss styles of the UI. Colour is decided by the
// terminal's profile at output time; tests strip it.
type styles struct {
	user, dim, err, warn, ok, accent, bold, header, rule, panel lipgloss.Style
}

func defaultStyles() styles {
	return styles{
		user:   lipgloss.NewStyle().Foreground(lipgloss.Color("12")).Bold(true),
		dim:    lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		err:    lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		warn:   lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		ok:     lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		accent: lipgloss.NewStyle().Foreground(lipgloss.Color("14")),
		bold:   lipgloss.NewStyle().Bold(true),
		header: lipgloss.NewStyle().Bold(true),
		rule:   lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		panel:  lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("11")).Padding(0, 1),
	}
}

// renderer turns items into lines: styles, the Ctrl+O target and the
// Markdown renderer (built on first use).
type renderer struct {
	styles   styles
	expanded *item
	// target and selected are the transcript's Ctrl+O row and its
	// selected row, as of the frame being drawn.
	target, selected *item
	md               *markdown
}

// assistant renders completed text as Markdown and streaming text as
// wrapped plain text, so half-received Markdown never flickers.
func (r *renderer) assistant(it *item, width int) []string {
	text := strings.TrimRight(it.text, "\n")
	if text == "" {
		return nil
	}
	if it.streaming {
		return prefixed("  ", "  ", text, width)
	}
	if r.md == nil {
		r.md = newMarkdown()
	}
	lines := r.md.render(text, width-4)
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
		if ansi.StringWidth(lines[i]) > width {
			lines[i] = ansi.Truncate(lines[i], width, "")
		}
	}
	return lines
}
