package web

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/scv-agent/scv/internal/tool"
)

// page is one fetched and converted response.
type page struct {
	url         string
	status      int
	contentType string
	text        string
	total       int   // characters (runes) in text
	cutAt       int64 // non-zero: the download stopped at this many bytes
}

// render returns the part of the page starting at character offset, sized
// so the whole output stays within limit bytes (the output form of
// docs/web.md).
func (p *page) render(offset, limit int) tool.Result {
	if offset > p.total {
		return tool.Fail(tool.InvalidArguments, "offset %d is past the end of %s (%d characters)", offset, p.url, p.total)
	}
	head := func(start, end int) string {
		ct := p.contentType
		if ct == "" {
			ct = "unknown"
		}
		return fmt.Sprintf("URL: %s\nStatus: %d\nContent-Type: %s\nCharacters: %d-%d of %d\n\n", p.url, p.status, ct, start, end, p.total)
	}
	// Reserve room for the widest header and closing line this page can
	// have, so the whole output stays within the limit.
	budget := limit - len(head(offset, p.total)) - max(len("\n"+trailer(p.total, p.total)), len(stopped(p.cutAt)))
	start := byteIndex(p.text, offset)
	end, n := start, offset
	for end < len(p.text) {
		_, size := utf8.DecodeRuneInString(p.text[end:])
		if end+size-start > budget {
			break
		}
		end += size
		n++
	}
	if end == start && start < len(p.text) {
		return tool.Fail(tool.Limit, "tools.output_limit_bytes (%d) leaves no room for the page's text after its header (the URL is %d bytes); raise it", limit, len(p.url))
	}
	var b strings.Builder
	b.WriteString(head(offset, n))
	b.WriteString(p.text[start:end])
	more := n < p.total
	if more {
		b.WriteString("\n" + trailer(p.total-n, n))
	} else {
		b.WriteString(stopped(p.cutAt))
	}
	r := tool.Result{Success: p.status < 400, Output: b.String(), Truncated: more || p.cutAt > 0}
	if !r.Success {
		r.Error = tool.Failed
	}
	return r
}

// stopped is the closing line of a page whose download hit
// web.fetch_max_bytes ("" when it did not).
func stopped(cutAt int64) string {
	if cutAt <= 0 {
		return ""
	}
	return fmt.Sprintf("\n[the download stopped at %d bytes (web.fetch_max_bytes); the rest of the page was not fetched]", cutAt)
}

func trailer(remaining, end int) string {
	return fmt.Sprintf("[%d more characters; call web_fetch with offset=%d for the next part]", remaining, end)
}

// byteIndex returns the byte position of the rune at index runes.
func byteIndex(s string, runes int) int {
	i := 0
	for n := 0; n < runes && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// pageCache keeps the last few converted pages so that paging through a
// long page with offset does not download it again.
type pageCache struct {
	mu      sync.Mutex
	max     int
	ttl     time.Duration
	entries []cacheEntry // most recent last
}

type cacheEntry struct {
	key string
	pg  *page
	at  time.Time
}

func newPageCache(max int, ttl time.Duration) *pageCache {
	return &pageCache{max: max, ttl: ttl}
}

func (c *pageCache) get(key string) (*page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == key && time.Since(e.at) < c.ttl {
			return c.entries[i].pg, true
		}
	}
	return nil, false
}

func (c *pageCache) put(key string, pg *page) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.entries[:0]
	for _, e := range c.entries {
		if e.key != key && time.Since(e.at) < c.ttl {
			kept = append(kept, e)
		}
	}
	c.entries = append(kept, cacheEntry{key: key, pg: pg, at: time.Now()})
	if len(c.entries) > c.max {
		c.entries = c.entries[len(c.entries)-c.max:]
	}
}
