package model

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSSEReader(t *testing.T) {
	in := ": comment\r\n\r\nevent: a\r\ndata: one\r\ndata:two\r\nid: 7\r\n\r\n" +
		"data: {\"x\":1}\n\n\n\nevent: b\ndata\n\nevent: dropped\ndata: no blank line"
	r := newSSEReader(strings.NewReader(in))
	type ev struct{ Name, Data string }
	var got []ev
	for {
		name, data, err := r.next(1 << 10)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev{name, string(data)})
	}
	want := []ev{{"a", "one\ntwo"}, {"", `{"x":1}`}, {"b", ""}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestSSEReaderEventLimit(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"one long line", "data: " + strings.Repeat("x", 200) + "\n\n", errEventTooLarge},
		{"many lines", strings.Repeat("data: "+strings.Repeat("x", 30)+"\n", 5) + "\n", errEventTooLarge},
		{"long line beyond bufio buffer", "data: " + strings.Repeat("x", 100<<10) + "\n\n", errEventTooLarge},
		{"fits", "data: " + strings.Repeat("x", 80) + "\n\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tc.in))
			_, _, err := r.next(100)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestLimitReader(t *testing.T) {
	lr := &limitReader{r: strings.NewReader(strings.Repeat("a", 100)), limit: 99}
	b, err := io.ReadAll(lr)
	if !errors.Is(err, errResponseTooLarge) || len(b) > 99 {
		t.Errorf("read %d bytes, err %v; want ≤ 99 and errResponseTooLarge", len(b), err)
	}
	lr = &limitReader{r: strings.NewReader(strings.Repeat("a", 100)), limit: 100}
	if b, err := io.ReadAll(lr); err != nil || len(b) != 100 {
		t.Errorf("read %d bytes, err %v; want 100, nil", len(b), err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"1.5":                           1500 * time.Millisecond,
		"0":                             0,
		"-1":                            0,
		"NaN":                           0,
		"61":                            time.Minute,
		"99999999999999999999":          time.Minute,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:04:15 GMT": 10 * time.Second,
		"Fri, 02 Jan 2026 04:00:00 GMT": time.Minute,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
	}
	for in, want := range cases {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for attempt, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute} {
		for range 20 {
			if d := backoff(attempt); d < base*8/10 || d > base*12/10 {
				t.Fatalf("backoff(%d) = %v, want %v ±20%%", attempt, d, base)
			}
		}
	}
}

func TestCleanMessage(t *testing.T) {
	secrets := []string{"sk-abcdef", "hdr-secret"}
	cases := []struct{ in, want string }{
		{"", "model request failed with no message from the provider"},
		{"  \n\t ", "model request failed with no message from the provider"},
		{"bad sk-abcdef\nand\r\nhdr-secret\tend", "bad [redacted] and [redacted] end"},
		{"bad \xff utf8", "bad ? utf8"},
		{strings.Repeat("é", 200), strings.Repeat("é", 148) + "…"},
	}
	for _, tc := range cases {
		got := cleanMessage(tc.in, secrets)
		if got != tc.want || len(got) > maxMessage {
			t.Errorf("cleanMessage(%q) = %q (%d bytes), want %q", tc.in, got, len(got), tc.want)
		}
	}
}

func TestSecretsOf(t *testing.T) {
	got := secretsOf(Options{APIKey: "sk-key", Headers: map[string]string{"Authorization": "Bearer tok-123", "X": "ab"}})
	want := []string{"sk-key", "Bearer tok-123", "tok-123"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("secrets (-want +got):\n%s", d)
	}
}
