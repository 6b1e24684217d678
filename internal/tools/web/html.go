package web

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/JohannesKaufmann/dom"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

// nearEmptyChars is the amount of visible text below which a page that
// carries scripts is reported as a script-rendered shell.
const nearEmptyChars = 80

// htmlToText converts an HTML document to readable Markdown-flavoured text.
// Links become "text[n]" with a numbered "References" list at the end (one
// number per distinct URL, relative URLs resolved against base); images keep
// only their alt text.
func htmlToText(doc []byte, baseURL string) (string, error) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return "", fmt.Errorf("parse html: %w", err)
	}
	scripts := countScripts(root)
	links := &linkRefs{index: map[string]int{}, base: stripFragment(baseURL)}
	conv := converter.NewConverter(
		converter.WithEscapeMode(converter.EscapeModeDisabled),
		converter.WithPlugins(
			base.NewBasePlugin(),
			commonmark.NewCommonmarkPlugin(),
			table.NewTablePlugin(),
			links,
		),
	)
	out, err := conv.ConvertNode(root, converter.WithDomain(baseURL))
	if err != nil {
		return "", fmt.Errorf("convert html: %w", err)
	}
	text := strings.TrimSpace(string(out))
	if visible := countVisible(text); visible < nearEmptyChars && (scripts > 0 || visible == 0) {
		note := fmt.Sprintf("[This page has almost no text without JavaScript (%d visible characters, %d scripts); it is probably rendered in the browser. Try the site's API, a raw or documentation source, or web_search.]", visible, scripts)
		if text == "" {
			text = note
		} else {
			text += "\n\n" + note
		}
	}
	if len(links.urls) > 0 {
		var b strings.Builder
		b.WriteString(text)
		b.WriteString("\n\nReferences:\n")
		for i, u := range links.urls {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, u)
		}
		text = strings.TrimSuffix(b.String(), "\n")
	}
	return text, nil
}

func countScripts(n *html.Node) int {
	c := 0
	if n.Type == html.ElementNode && n.Data == "script" {
		c++
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c += countScripts(ch)
	}
	return c
}

func countVisible(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// linkRefs is a converter plugin that renders links reference-style with
// numbers (html-to-markdown v2 does not implement referenced links yet).
type linkRefs struct {
	urls  []string
	index map[string]int
	base  string
}

func (l *linkRefs) Name() string { return "scv-link-refs" }

func (l *linkRefs) Init(conv *converter.Converter) error {
	conv.Register.RendererFor("a", converter.TagTypeInline, l.renderLink, converter.PriorityEarly)
	conv.Register.RendererFor("img", converter.TagTypeInline, renderImage, converter.PriorityEarly)
	return nil
}

func (l *linkRefs) renderLink(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	var buf bytes.Buffer
	ctx.RenderChildNodes(ctx, &buf, n)
	content := bytes.TrimSpace(bytes.ReplaceAll(buf.Bytes(), []byte("\n"), []byte(" ")))
	href := strings.TrimSpace(dom.GetAttributeOr(n, "href", ""))
	if href != "" {
		href = ctx.AssembleAbsoluteURL(ctx, "a", href)
	}
	if !referable(href) || len(content) == 0 || stripFragment(href) == l.base {
		w.Write(content)
		return converter.RenderSuccess
	}
	num, ok := l.index[href]
	if !ok {
		l.urls = append(l.urls, href)
		num = len(l.urls)
		l.index[href] = num
	}
	w.Write(content)
	fmt.Fprintf(w, "[%d]", num)
	return converter.RenderSuccess
}

// referable keeps http(s) and mailto links; in-page anchors and script
// links tell a reader nothing.
func referable(href string) bool {
	u, err := url.Parse(href)
	if err != nil || href == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return true
	}
	return false
}

func renderImage(_ converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	alt := strings.Join(strings.Fields(dom.GetAttributeOr(n, "alt", "")), " ")
	if alt != "" {
		fmt.Fprintf(w, "[image: %s]", alt)
	}
	return converter.RenderSuccess
}

func stripFragment(u string) string {
	s, _, _ := strings.Cut(u, "#")
	return s
}
