package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scv-agent/scv/internal/mcp/mcptest"
	"github.com/scv-agent/scv/internal/tool"
)

// everything is server-everything over stdio.
func everything(t *testing.T, n mcptest.NPM) Server {
	dir := t.TempDir()
	return Server{Name: "everything", Command: n.Node, Args: []string{n.Everything, "stdio"},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, Dir: dir,
		StartupTimeout: 30 * time.Second, ToolTimeout: 30 * time.Second, Risk: tool.Process}
}

// TestEverything runs the reference server's tools through SCV: listing,
// text, structured and image results, validation against its schemas
// (draft-07) before any call, a long-running call cancelled, and the
// list_changed it announces after the handshake, over stdio and over
// streamable HTTP.
func TestEverything(t *testing.T) {
	n := mcptest.RequireNPM(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			m, logs := newManager(t, nil)
			srv := everything(t, n)
			if transport == "http" {
				srv = Server{Name: "everything", URL: n.StartEverythingHTTP(t), StartupTimeout: 30 * time.Second, ToolTimeout: 30 * time.Second, Risk: tool.Process}
			}
			l := lease(t, m, srv)
			r := registry(t, l)
			for _, name := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-structured-content",
				"mcp__everything__get-tiny-image", "mcp__everything__trigger-long-running-operation"} {
				if _, ok := r.Get(name); !ok {
					t.Fatalf("%s missing from %v; skipped %v; logs:\n%s", name, r.Names(), l.States()[0].Skipped, logs)
				}
			}
			checks := []struct {
				name, args string
				ok         bool
				json       bool
				has        string
			}{
				{"mcp__everything__echo", `{"message":"hi there"}`, true, false, "Echo: hi there"},
				{"mcp__everything__get-sum", `{"a":2,"b":40}`, true, false, "42"},
				{"mcp__everything__get-structured-content", `{"location":"Chicago"}`, true, true, `"temperature":`},
				{"mcp__everything__get-tiny-image", `{}`, true, false, "[image: image/png, "},
				{"mcp__everything__echo", `{}`, false, false, "missing required field `message`"},
				{"mcp__everything__get-structured-content", `{"location":"Paris"}`, false, false, "which is not one of: \"New York\", Chicago, \"Los Angeles\""},
			}
			for _, c := range checks {
				_, res := call(t, r, c.name, c.args)
				if res.Success != c.ok || res.JSON != c.json || !strings.Contains(res.Output, c.has) {
					t.Errorf("%s %s = %+v, want success %v, json %v, containing %q", c.name, c.args, res, c.ok, c.json, c.has)
				}
			}
			p, res, ok := r.Prepare(tool.Env{}, "mcp__everything__trigger-long-running-operation", []byte(`{"duration":60,"steps":60}`))
			if !ok {
				t.Fatal(res)
			}
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(500*time.Millisecond, cancel)
			began := time.Now()
			if res := p.Run(ctx); res.Error != tool.Cancelled {
				t.Errorf("cancelled long call = %+v", res)
			}
			if took := time.Since(began); took > 2500*time.Millisecond {
				t.Errorf("the cancelled call returned after %v", took)
			}
			// The server stays usable after the cancellation.
			if _, res := call(t, r, "mcp__everything__echo", `{"message":"still here"}`); !res.Success {
				t.Errorf("echo after the cancellation = %+v", res)
			}
		})
	}
}

// TestEverythingListChanged: server-everything registers more tools once
// the handshake is done and announces it; the next Tools call lists again.
func TestEverythingListChanged(t *testing.T) {
	n := mcptest.RequireNPM(t)
	m, _ := newManager(t, nil)
	l := m.Acquire(t.TempDir(), []Server{everything(t, n)})
	defer l.Release()
	l.Tools(t.Context())
	in := l.entries[0].inst
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		in.mu.Lock()
		changes := in.changes
		in.mu.Unlock()
		if changes > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything announced no tool list change")
		}
	}
	l.Tools(t.Context())
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.listedAt != in.changes || in.gen < 2 {
		t.Errorf("after list_changed: listed at change %d of %d, %d lists; want the tools listed again", in.listedAt, in.changes, in.gen)
	}
}

// TestFilesystem runs server-filesystem on a temporary directory: listing
// and reading work, and reading outside it is the server's error, seen by
// the model as a failed result.
func TestFilesystem(t *testing.T) {
	n := mcptest.RequireNPM(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("remember the milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, nil)
	srv := Server{Name: "files", Command: n.Node, Args: []string{n.Filesystem, root},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}, Dir: root, StartupTimeout: 30 * time.Second, ToolTimeout: 30 * time.Second,
		Risk: tool.Filesystem, ReadOnlyTools: []string{"read_text_file", "list_directory"}}
	l := lease(t, m, srv)
	r := registry(t, l)
	checks := []struct {
		name, args string
		risk       tool.Risk
		ok         bool
		has        string
	}{
		{"mcp__files__list_directory", `{"path":"` + root + `"}`, tool.ReadOnly, true, "[FILE] notes.txt"},
		{"mcp__files__read_text_file", `{"path":"` + filepath.Join(root, "notes.txt") + `"}`, tool.ReadOnly, true, "remember the milk"},
		{"mcp__files__read_text_file", `{"path":"/etc/hostname"}`, tool.ReadOnly, false, "Access denied"},
		{"mcp__files__write_file", `{"path":"` + filepath.Join(root, "new.txt") + `","content":"x"}`, tool.Filesystem, true, "Successfully wrote"},
	}
	for _, c := range checks {
		p, res := call(t, r, c.name, c.args)
		if p.Risk != c.risk || res.Success != c.ok || !strings.Contains(res.Output, c.has) {
			t.Errorf("%s %s: risk %q, %+v; want risk %q, success %v, containing %q", c.name, c.args, p.Risk, res, c.risk, c.ok, c.has)
		}
	}
}
