package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark/text"

	"github.com/scv-agent/scv/internal/testutil"
)

// TestMarkdownGolden pins the layout of every construct the renderer knows
// (headings, emphasis, lists, quotes, code, links, tables, HTML) at a wide
// and a narrow width, colour stripped.
func TestMarkdownGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "markdown", "sample.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := newMarkdown()
	for _, width := range []int{60, 30} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			lines := m.render(string(src), width)
			var b strings.Builder
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("line %d is %d cells wide, over %d: %q", i, w, width, l)
				}
				b.WriteString(ansi.Strip(l))
				b.WriteByte('\n')
			}
			file := filepath.Join("testdata", "markdown", "sample_w"+strconv.Itoa(width)+".golden")
			if testutil.Update() {
				if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("read golden (run go test -update): %v", err)
			}
			if d := cmp.Diff(string(want), b.String()); d != "" {
				t.Errorf("rendering (-want +got):\n%s", d)
			}
		})
	}
}

// Each construct gets its styling, and every styled run ends on its own
// line, so a line can be cut or prefixed without bleeding colour.
func TestMarkdownStyles(t *testing.T) {
	m := newMarkdown()
	tests := []struct {
		name, src string
		want      string // the styled run, escape sequences included
	}{
		{"strong", "a **b** c", "\x1b[1mb\x1b[m"},
		{"emphasis", "a *b* c", "\x1b[3mb\x1b[m"},
		{"inline code", "a `b` c", "\x1b[95mb\x1b[m"},
		{"link", "[b](https://x.test)", "\x1b[94;4mb\x1b[m\x1b[90m (https://x.test)\x1b[m"},
		{"autolink", "<https://x.test>", "\x1b[94;4mhttps://x.test\x1b[m"},
		{"heading 1", "# b", "\x1b[90m# \x1b[m\x1b[94;1;4mb\x1b[m"},
		{"heading 2", "## b", "\x1b[90m## \x1b[m\x1b[96;1mb\x1b[m"},
		{"heading 3", "### b", "\x1b[90m### \x1b[m\x1b[1mb\x1b[m"},
		{"code block", "```\nb\n```", "  \x1b[36mb\x1b[m"},
		{"bullet", "- b", "\x1b[90m• \x1b[mb"},
		{"quote", "> b", "\x1b[90m│\x1b[m b"},
		{"bold in italic", "*a **b***", "\x1b[3ma \x1b[m\x1b[1;3mb\x1b[m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(m.render(tt.src, 40), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("render(%q) = %q, want it to contain %q", tt.src, got, tt.want)
			}
		})
	}
	sgr := regexp.MustCompile("\x1b\\[[0-9;]*m")
	long := "**" + strings.Repeat("bold words that wrap ", 10) + "** and [a link that wraps over lines](https://x.test)"
	for i, l := range m.render(long, 20) {
		codes := sgr.FindAllString(l, -1)
		if len(codes) > 0 && codes[len(codes)-1] != "\x1b[m" {
			t.Errorf("line %d leaves a style open: %q", i, l)
		}
	}
}

func TestFindTable(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want *mdTable
	}{
		{"outer pipes", "| a | b |\n|---|:-:|\n| 1 | 2 |", &mdTable{rows: [][]string{{"a", "b"}, {"1", "2"}}, align: []int{alignLeft, alignCenter}}},
		{"no outer pipes", "a | b\n--: | :--\n1 | 2", &mdTable{rows: [][]string{{"a", "b"}, {"1", "2"}}, align: []int{alignRight, alignLeft}}},
		{"lead paragraph", "text\n| a |\n| --- |\n| 1 |", &mdTable{lead: "text", rows: [][]string{{"a"}, {"1"}}, align: []int{alignLeft}}},
		{"escaped pipe", "| a |\n|---|\n| x \\| y |", &mdTable{rows: [][]string{{"a"}, {"x | y"}}, align: []int{alignLeft}}},
		{"short and long rows", "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |", &mdTable{rows: [][]string{{"a", "b"}, {"1"}, {"1", "2", "3"}}, align: []int{alignLeft, alignLeft}}},
		{"cell count differs", "| a | b |\n|---|\n| 1 | 2 |", nil},
		{"not a delimiter", "| a |\n|-x-|", nil},
		{"plain paragraph", "just text\nover two lines", nil},
	}
	m := newMarkdown()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			doc := m.p.Parse(text.NewReader(src))
			got, ok := findTable(doc.FirstChild(), src)
			if tt.want == nil {
				if ok {
					t.Fatalf("found a table: %+v", got)
				}
				return
			}
			if !ok {
				t.Fatal("no table found")
			}
			if d := cmp.Diff(*tt.want, got, cmp.AllowUnexported(mdTable{})); d != "" {
				t.Errorf("table (-want +got):\n%s", d)
			}
		})
	}
}

func TestFitColumns(t *testing.T) {
	tests := []struct {
		natural []int
		avail   int
		want    []int
	}{
		{[]int{3, 4}, 20, []int{3, 4}},
		{[]int{3, 40}, 20, []int{3, 17}},
		{[]int{30, 40}, 20, []int{10, 10}},
		{[]int{2, 30, 40}, 21, []int{2, 10, 9}},
		{[]int{0, 5}, 3, []int{1, 2}},
	}
	for _, tt := range tests {
		got := fitColumns(tt.natural, tt.avail)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("fitColumns(%v, %d) (-want +got):\n%s", tt.natural, tt.avail, d)
		}
		sum := 0
		for _, w := range got {
			sum += w
		}
		if sum > tt.avail && sum > len(got) {
			t.Errorf("fitColumns(%v, %d) uses %d cells", tt.natural, tt.avail, sum)
		}
	}
}
