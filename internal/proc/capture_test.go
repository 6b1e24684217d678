package proc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

type captureView struct {
	Out       string
	Truncated bool
	Total     int64
	Cut       int64
}

func viewOf(c *Capture) captureView {
	return captureView{Out: c.String(), Truncated: c.Truncated(), Total: c.Total(), Cut: c.Cut()}
}

func TestCaptureExact(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   captureView
	}{
		{"empty", 64, nil, captureView{}},
		{"fits", 64, []string{"hello ", "world\n"}, captureView{Out: "hello world\n", Total: 12}},
		{"exactly the limit", 10, []string{"0123456789"}, captureView{Out: "0123456789", Total: 10}},
		{"fits across head and tail", 10, []string{"01234", "5", "6789"}, captureView{Out: "0123456789", Total: 10}},
		{
			// limit 60: a marker with 3 digits is 25 bytes, leaving 17+18.
			name: "head and tail with marker", limit: 60,
			writes: []string{strings.Repeat("a", 100), strings.Repeat("b", 100)},
			want: captureView{
				Out:       strings.Repeat("a", 17) + "\n[… 165 bytes cut …]\n" + strings.Repeat("b", 18),
				Truncated: true, Total: 200, Cut: 165,
			},
		},
		{
			name: "limit too small for the marker keeps the head", limit: 10,
			writes: []string{strings.Repeat("x", 50)},
			want:   captureView{Out: "xxxxx", Truncated: true, Total: 50, Cut: 45},
		},
		{"zero limit", 0, []string{"abc"}, captureView{Out: "", Truncated: true, Total: 3, Cut: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCapture(tt.limit)
			for _, w := range tt.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if diff := cmp.Diff(tt.want, viewOf(c)); diff != "" {
				t.Errorf("capture (-want +got):\n%s", diff)
			}
		})
	}
}

var markerRE = regexp.MustCompile(`\n\[… (\d+) bytes cut …\]\n`)

// TestCaptureInvariants writes multi-byte text in chunks of many sizes and
// checks what every truncated rendering promises: at most limit bytes, valid
// UTF-8, a true prefix and suffix of the input, and a marker whose count is
// exactly what was left out.
func TestCaptureInvariants(t *testing.T) {
	input := strings.Repeat("aé€😀z", 400) // 1 + 2 + 3 + 4 + 1 bytes per round
	for _, limit := range []int{40, 41, 42, 43, 57, 64, 99, 100, 101, 255, 1000, 4096} {
		for _, chunk := range []int{1, 3, 7, 64, 5000} {
			t.Run(fmt.Sprintf("limit=%d/chunk=%d", limit, chunk), func(t *testing.T) {
				c := NewCapture(limit)
				for i := 0; i < len(input); i += chunk {
					_, _ = c.Write([]byte(input[i:min(i+chunk, len(input))]))
				}
				out := c.String()
				if len(out) > limit {
					t.Errorf("len = %d, above the limit %d", len(out), limit)
				}
				if !utf8.ValidString(out) {
					t.Errorf("output is not valid UTF-8: %q", out)
				}
				m := markerRE.FindStringSubmatchIndex(out)
				if m == nil {
					t.Fatalf("no marker in %q", out)
				}
				head, tail := out[:m[0]], out[m[1]:]
				cut, _ := strconv.ParseInt(out[m[2]:m[3]], 10, 64)
				if !strings.HasPrefix(input, head) || !strings.HasSuffix(input, tail) {
					t.Errorf("head %q / tail %q are not the input's ends", head, tail)
				}
				got := captureView{Truncated: c.Truncated(), Total: c.Total(), Cut: c.Cut()}
				want := captureView{Truncated: true, Total: int64(len(input)), Cut: int64(len(input) - len(head) - len(tail))}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("metadata (-want +got):\n%s", diff)
				}
				if cut != want.Cut {
					t.Errorf("marker says %d bytes cut, want %d", cut, want.Cut)
				}
				// The kept ends are not needlessly short: at most a character
				// each lost to boundaries beyond the marker's reservation.
				if slack := limit - len(out); slack > 2*utf8.UTFMax+2 {
					t.Errorf("output %d bytes for limit %d wastes %d bytes", len(out), limit, slack)
				}
			})
		}
	}
}

func TestCaptureConcurrentWriters(t *testing.T) {
	c := NewCapture(1024)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				_, _ = c.Write([]byte("0123456789"))
				_ = c.Truncated()
			}
		})
	}
	wg.Wait()
	if got, want := c.Total(), int64(8*1000*10); got != want {
		t.Errorf("Total = %d, want %d", got, want)
	}
	if n := len(c.String()); n > 1024 {
		t.Errorf("len = %d, above the limit", n)
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		writes    []string
		want      string
		truncated bool
	}{
		{"empty", 8, nil, "", false},
		{"fits", 8, []string{"abc", "def"}, "abcdef", false},
		{"keeps the last bytes", 4, []string{"abc", "defgh"}, "efgh", true},
		{"wraps around", 5, []string{"abc", "de", "fg", "h"}, "defgh", true},
		{"one big write", 3, []string{"0123456789"}, "789", true},
		{"starts on a character", 5, []string{"xx€€"}, "€", true},
		{"zero", 0, []string{"abc"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := NewTail(tt.n)
			for _, w := range tt.writes {
				_, _ = tl.Write([]byte(w))
			}
			got := []any{tl.String(), tl.Truncated()}
			if diff := cmp.Diff([]any{tt.want, tt.truncated}, got); diff != "" {
				t.Errorf("tail (-want +got):\n%s", diff)
			}
		})
	}
}
