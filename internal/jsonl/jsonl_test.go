package jsonl

import (
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "a\r\n\n" + long + "\nbb\n" + strings.Repeat("y", 10) + "\nlast"
	r := NewReader(strings.NewReader(in), 10)
	var got []string
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrLineTooLong) {
			got = append(got, "<too long>")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	want := []string{"a", "<too long>", "bb", strings.Repeat("y", 10), "last"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("lines (-want +got):\n%s", d)
	}
}

func TestReaderLongLineBeyondBuffer(t *testing.T) {
	// A line far larger than the bufio buffer is skipped without growing memory.
	in := strings.Repeat("z", 1<<20) + "\nok\n"
	r := NewReader(strings.NewReader(in), 1024)
	if _, err := r.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
	if cap(r.buf) > 64<<10 {
		t.Fatalf("buffer grew to %d bytes", cap(r.buf))
	}
	line, err := r.Next()
	if err != nil || string(line) != "ok" {
		t.Fatalf("next = %q, %v", line, err)
	}
}

// TestReaderLetsGoOfALargeLine: a line within the limit but larger than
// keepLineBytes is returned whole, and its buffer is not kept once the
// next line is read; a line of normal size keeps its buffer for reuse.
func TestReaderLetsGoOfALargeLine(t *testing.T) {
	big := strings.Repeat("i", 1<<20)
	small := strings.Repeat("s", 1000)
	r := NewReader(strings.NewReader(big+"\n"+small+"\n"+small+"\n"), 2<<20)
	line, err := r.Next()
	if err != nil || len(line) != len(big) {
		t.Fatalf("large line: %d bytes, %v", len(line), err)
	}
	if line, err = r.Next(); err != nil || string(line) != small {
		t.Fatalf("next = %d bytes, %v", len(line), err)
	}
	if c := cap(r.buf); c > keepLineBytes {
		t.Fatalf("the 1 MiB line's buffer (%d bytes) is still kept", c)
	}
	kept := &r.buf[:1][0]
	if line, err = r.Next(); err != nil || string(line) != small {
		t.Fatalf("third = %d bytes, %v", len(line), err)
	}
	if &r.buf[:1][0] != kept {
		t.Error("a small line's buffer was not reused")
	}
}

type blockingWriter struct{ release chan struct{} }

func (b *blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	return len(p), nil
}

func TestWriterSlowClient(t *testing.T) {
	bw := &blockingWriter{release: make(chan struct{})}
	defer close(bw.release)
	var slow atomic.Int32
	w := NewWriter(bw, WriterOptions{MaxFrames: 2, Patience: 100 * time.Millisecond, OnSlow: func() { slow.Add(1) }})
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = w.Send([]byte(`{}`))
	}
	if !errors.Is(err, ErrSlowClient) {
		t.Fatalf("err = %v, want ErrSlowClient", err)
	}
	if slow.Load() != 1 {
		t.Fatalf("OnSlow called %d times", slow.Load())
	}
	if err := w.Send([]byte(`{}`)); err == nil {
		t.Fatal("send after slow succeeded")
	}
}

func TestWriterByteBound(t *testing.T) {
	bw := &blockingWriter{release: make(chan struct{})}
	defer close(bw.release)
	w := NewWriter(bw, WriterOptions{MaxBytes: 10, Patience: 50 * time.Millisecond})
	// The first frame is taken by the write loop (blocked), the second fills
	// the byte budget, the third cannot fit.
	var err error
	for i := 0; i < 4 && err == nil; i++ {
		err = w.Send([]byte("12345678"))
	}
	if !errors.Is(err, ErrSlowClient) {
		t.Fatalf("err = %v, want ErrSlowClient", err)
	}
}

func TestWriterWritesInOrder(t *testing.T) {
	var sb strings.Builder
	w := NewWriter(&sb, WriterOptions{})
	for _, s := range []string{"1", "2", "3"} {
		if err := w.Send([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if sb.String() != "1\n2\n3\n" {
		t.Fatalf("got %q", sb.String())
	}
}
