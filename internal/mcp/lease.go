package mcp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scv-agent/scv/internal/tool"
)

// Lease is one session's use of its servers. Its methods are safe for
// concurrent use.
type Lease struct {
	m       *Manager
	entries []*entry

	mu       sync.Mutex
	sig      string
	tools    []tool.Tool
	released bool
}

// entry is one server of a lease and what the lease last saw of it.
type entry struct {
	srv  Server
	inst *instance // nil when srv.Problem is set

	err     error
	offered []ToolInfo
	skipped []string
	warned  map[string]bool
}

// ToolInfo describes one tool a server offers.
type ToolInfo struct {
	Name        string // the name SCV offers it under
	Original    string // the server's own name
	Risk        tool.Risk
	Description string
	Hints       string
}

// Tools returns the MCP tools the session offers now, starting servers that
// are not running yet (in parallel, each within its startup timeout) and
// listing again the tools of servers that announced a change. changed says
// the list differs from the previous call's. A server that cannot be used
// is logged and left out; its tools come back when it does.
func (l *Lease) Tools(ctx context.Context) (tools []tool.Tool, changed bool) {
	type seen struct {
		tools []*sdk.Tool
		gen   uint64
		err   error
	}
	got := make([]seen, len(l.entries))
	var wg sync.WaitGroup
	for i, e := range l.entries {
		if e.inst == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, gen, err := e.inst.current(ctx)
			got[i] = seen{t, gen, err}
		}()
	}
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	var sig strings.Builder
	for i, e := range l.entries {
		fmt.Fprintf(&sig, "%s:%d;", e.srv.Name, got[i].gen)
		if e.inst == nil {
			e.err = fmt.Errorf("%s", e.srv.Problem)
		} else {
			e.err = got[i].err
		}
	}
	if l.tools != nil && sig.String() == l.sig {
		return l.tools, false
	}
	l.sig = sig.String()
	l.tools = []tool.Tool{}
	names := map[string]string{}
	for i, e := range l.entries {
		if e.inst == nil {
			l.warn(e, "unusable", "mcp server not used", "err", e.srv.Problem)
			continue
		}
		e.offered, e.skipped = nil, nil
		list := slices.Clone(got[i].tools)
		slices.SortStableFunc(list, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
		for _, t := range list {
			if !wanted(e.srv, t.Name) {
				continue
			}
			name := ToolName(e.srv.Name, t.Name)
			if other, dup := names[name]; dup {
				l.skip(e, t.Name, fmt.Sprintf("its name becomes %s, like that of %s", name, other))
				continue
			}
			tl, err := newTool(e.inst, e.srv, t)
			if err != nil {
				l.skip(e, t.Name, err.Error())
				continue
			}
			names[name] = fmt.Sprintf("tool %q of server %s", t.Name, e.srv.Name)
			l.tools = append(l.tools, tl)
			e.offered = append(e.offered, ToolInfo{Name: name, Original: t.Name, Risk: tool.Risk(tool.RiskClassOf(tl)),
				Description: firstLine(tl.Description()), Hints: hints(t.Annotations)})
		}
	}
	return l.tools, true
}

func wanted(s Server, name string) bool {
	if len(s.Tools) > 0 && !slices.Contains(s.Tools, name) {
		return false
	}
	return !slices.Contains(s.DisabledTools, name)
}

func (l *Lease) skip(e *entry, tool, why string) {
	msg := fmt.Sprintf("tool %q is not offered: %s", tool, why)
	e.skipped = append(e.skipped, msg)
	l.warn(e, msg, "mcp tool not offered", "server", e.srv.Name, "tool", tool, "reason", why)
}

// warn logs once per lease and message.
func (l *Lease) warn(e *entry, key, msg string, attrs ...any) {
	if e.warned == nil {
		e.warned = map[string]bool{}
	}
	if e.warned[key] {
		return
	}
	e.warned[key] = true
	l.m.opts.Logger.Warn(msg, attrs...)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// Release ends the lease; a server whose last lease ends stops after the
// idle timeout. Releasing twice does nothing.
func (l *Lease) Release() {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return
	}
	l.released = true
	l.mu.Unlock()
	for _, e := range l.entries {
		if e.inst != nil {
			l.m.release(e.inst)
		}
	}
}

// ServerState is what a lease knows about one of its servers after Tools.
type ServerState struct {
	Name      string
	Transport string
	// Running says a connection is live.
	Running bool
	// Err is why the server cannot be used now (nil when it can).
	Err error
	// Stderr is the end of the stderr of the server's last process when it
	// failed.
	Stderr string
	// Info is the server's own name and version.
	Info string
	// StartTime is how long the last start took, through the tool list.
	StartTime time.Duration
	Tools     []ToolInfo
	// Skipped lists the tools not offered, and why.
	Skipped []string
}

// States reports on every server of the lease, in configuration order.
func (l *Lease) States() []ServerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ServerState, 0, len(l.entries))
	for _, e := range l.entries {
		st := ServerState{Name: e.srv.Name, Transport: e.srv.Transport(), Err: e.err, Tools: e.offered, Skipped: e.skipped}
		if e.inst != nil {
			e.inst.mu.Lock()
			st.Running = e.inst.cur != nil
			st.Info, st.StartTime, st.Stderr = e.inst.info, e.inst.startTime, e.inst.lastTail
			e.inst.mu.Unlock()
		}
		out = append(out, st)
	}
	return out
}

// String is a short description for logs.
func (s ServerState) String() string {
	if s.Err != nil {
		return s.Name + ": " + s.Err.Error()
	}
	return s.Name + ": " + strconv.Itoa(len(s.Tools)) + " tools"
}
