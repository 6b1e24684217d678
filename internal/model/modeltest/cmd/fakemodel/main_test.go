package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeScriptAndRecord(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	record := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(script, []byte(`[[{"text":["Hi"]}]]`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-record", record}, script, pw); pw.Close() }()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(strings.TrimSpace(url)+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"content":"Hi"`) || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Errorf("stream = %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec, _ := os.ReadFile(record)
	if want := `{"body":{"model":"m"},"method":"POST","path":"/v1/chat/completions","unscripted":false}` + "\n"; string(rec) != want {
		t.Errorf("record = %q, want %q", rec, want)
	}
}

func TestNoScript(t *testing.T) {
	if err := run(t.Context(), nil, "", io.Discard); err == nil || !strings.Contains(err.Error(), "SCV_FAKE_SCRIPT") {
		t.Errorf("run without script = %v", err)
	}
}
