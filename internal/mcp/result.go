package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scv-agent/scv/internal/tool"
)

// render turns a server's answer into the result the model sees: text
// blocks joined, structured content as JSON, images, audio and resources
// summarized by type and size, isError as a failed result. The output is at
// most limit bytes as it will be sent (a JSON document that does not fit is
// cut as text, and says so).
func render(r *sdk.CallToolResult, limit int) tool.Result {
	if r == nil {
		return tool.Fail(tool.Failed, "the MCP server returned no result")
	}
	var text []string
	for _, c := range r.Content {
		text = append(text, contentText(c))
	}
	joined := strings.Join(text, "\n")
	structured := ""
	if r.StructuredContent != nil {
		s, err := tool.EncodeJSON(r.StructuredContent)
		if err != nil {
			return tool.Fail(tool.Failed, "the MCP server's structured content is not valid JSON: %v", err)
		}
		structured = s
	}
	res := tool.Result{Success: !r.IsError}
	if r.IsError {
		res.Error = tool.Failed
	}
	switch {
	case structured != "" && (len(r.Content) == 0 || sameJSON(joined, structured)):
		res.Output, res.JSON = structured, true
	case structured != "":
		res.Output = joined + "\n[structured content] " + structured
	default:
		res.Output = joined
	}
	if res.Output == "" && r.IsError {
		res.Output = "the MCP tool reported an error without a message"
	}
	if len(res.Output) > limit {
		res.Output, res.Truncated = fit(res.Output, limit), true
		res.JSON = false
	}
	return res
}

// contentText is one content block as text.
func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.ResourceLink:
		s := fmt.Sprintf("[resource link: %s", c.URI)
		if c.Name != "" {
			s += ", " + c.Name
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Size != nil {
			s += fmt.Sprintf(", %d bytes", *c.Size)
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return "[resource: empty]"
		}
		rc := c.Resource
		kind, n := "text", len(rc.Text)
		if rc.Blob != nil {
			kind, n = "binary", len(rc.Blob)
		}
		return fmt.Sprintf("[resource: %s, %s, %s, %d bytes]", rc.URI, orUnknown(rc.MIMEType), kind, n)
	case nil:
		return ""
	}
	return fmt.Sprintf("[%T content]", c)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// sameJSON says text is the same JSON value as doc (servers usually repeat
// their structured content as a text block, and it is shown once).
func sameJSON(text, doc string) bool {
	if !json.Valid([]byte(text)) {
		return false
	}
	var a, b bytes.Buffer
	if json.Compact(&a, []byte(text)) != nil || json.Compact(&b, []byte(doc)) != nil {
		return false
	}
	if bytes.Equal(a.Bytes(), b.Bytes()) {
		return true
	}
	var x, y any
	_ = json.Unmarshal([]byte(text), &x)
	_ = json.Unmarshal([]byte(doc), &y)
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

// fit cuts s to at most limit bytes including a marker naming the cut.
func fit(s string, limit int) string {
	marker := func(shown int) string { return fmt.Sprintf("\n[output cut: %d of %d bytes shown]", shown, len(s)) }
	room := limit - len(marker(len(s)))
	if room <= 0 {
		return tool.TruncateUTF8(marker(0), limit)
	}
	cut := tool.TruncateUTF8(s, room)
	return cut + marker(len(cut))
}
