package tui

import (
	"strings"

	"charm.land/glamour/v2"
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

// renderer turns items into lines: styles, the Ctrl+O target and one
// glamour renderer per width (glamour wraps at construction time).
type renderer struct {
	styles   styles
	style    string // glamour standard style name
	expanded *item
	md       *glamour.TermRenderer
	mdWidth  int
}

// assistant renders completed text as Markdown and streaming text as
// wrapped plain text, so half-received Markdown never flickers.
func (r *renderer) assistant(it *item, width int) []string {
	text := strings.TrimRight(it.text, "\n")
	if text == "" {
		return nil
	}
	if !it.streaming {
		if out, ok := r.markdown(text, width); ok {
			return out
		}
	}
	return prefixed("  ", "  ", text, width)
}

func (r *renderer) markdown(text string, width int) ([]string, bool) {
	if r.md == nil || r.mdWidth != width {
		md, err := glamour.NewTermRenderer(glamour.WithStandardStyle(r.style), glamour.WithWordWrap(max(width-4, 10)))
		if err != nil {
			return nil, false
		}
		r.md, r.mdWidth = md, width
	}
	out, err := r.md.Render(text)
	if err != nil {
		return nil, false
	}
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	// glamour pads lines to the wrap width; trailing blanks only cost space.
	for i, l := range lines {
		lines[i] = trimRightSpaces(l)
		if ansi.StringWidth(lines[i]) > width {
			lines[i] = ansi.Truncate(lines[i], width, "")
		}
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, true
}

// trimRightSpaces drops trailing spaces, also those followed only by SGR
// resets.
func trimRightSpaces(l string) string {
	if strings.TrimRight(ansi.Strip(l), " ") == ansi.Strip(l) {
		return l
	}
	return ansi.Truncate(l, ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " ")), "")
}
