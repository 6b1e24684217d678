package diff

import (
	"fmt"
	"strings"
	"testing"
)

// benchInput is a 1 MiB Go-like file and the same file with 1,000 of its
// lines changed, spread evenly (every 16th line of about 16,000).
func benchInput() (old, nw []byte) {
	var a, b strings.Builder
	for i := 0; a.Len() < 1<<20; i++ {
		l := fmt.Sprintf("\tvalue%d := compute(%d, \"a line of ordinary source text\") // %d\n", i%97, i%13, i)
		a.WriteString(l)
		if i%16 == 7 {
			b.WriteString(strings.ToUpper(l))
		} else {
			b.WriteString(l)
		}
	}
	return []byte(a.String()), []byte(b.String())
}

// BenchmarkReplace1MiB: the diff of a planned write of a 1 MiB file with
// 1,000 changed lines, with the default bounds (docs/benchmarks/approvals.md).
func BenchmarkReplace1MiB(b *testing.B) {
	old, nw := benchInput()
	var r Result
	b.ReportAllocs()
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		r = Replace("big.go", old, true, nw, Bounds{})
	}
	b.ReportMetric(float64(len(r.Text)), "shown-bytes")
	b.ReportMetric(float64(strings.Count(r.Text, "\n")), "shown-lines")
	b.ReportMetric(float64(r.Omitted), "omitted-lines")
	b.ReportMetric(float64(r.Removed), "changed-lines")
}
