package mcp

import (
	"strconv"
	"sync"
	"time"
)

// Manager owns the running MCP servers of one SCV process.
type Manager struct {
	opts  Options
	mu    sync.Mutex
	insts map[string]*instance
	seq   int
	// closed is set by Close; no server starts afterwards.
	closed bool
	// idle counts idle stops in progress, which Close waits for.
	idle sync.WaitGroup
}

// NewManager returns a Manager with no server running.
func NewManager(opts Options) *Manager {
	return &Manager{opts: opts.withDefaults(), insts: map[string]*instance{}}
}

// Acquire leases the servers a session of workspace uses. Nothing starts
// yet: a server starts when the lease first asks for tools.
func (m *Manager) Acquire(workspace string, servers []Server) *Lease {
	l := &Lease{m: m}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range servers {
		if m.closed && s.Problem == "" {
			s.Problem = "MCP servers are no longer started: SCV is shutting down"
		}
		e := &entry{srv: s}
		if s.Problem == "" {
			k := s.launchKey(workspace)
			in := m.insts[k]
			if in == nil {
				m.seq++
				in = newInstance(m, k, workspace, s, m.opts.InstanceID+"/"+s.Name+"/"+strconv.Itoa(m.seq))
				m.insts[k] = in
			}
			in.mu.Lock()
			in.leases++
			if in.idleTimer != nil {
				in.idleTimer.Stop()
				in.idleTimer = nil
			}
			in.mu.Unlock()
			e.inst = in
		}
		l.entries = append(l.entries, e)
	}
	return l
}

// release drops one lease of in; the last one arms the idle stop.
func (m *Manager) release(in *instance) {
	m.mu.Lock()
	defer m.mu.Unlock()
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.leases--; in.leases > 0 || in.retired || m.closed {
		return
	}
	in.idleTimer = time.AfterFunc(m.opts.IdleTimeout, func() { m.stopIdle(in) })
}

// stopIdle stops in if it still has no lease.
func (m *Manager) stopIdle(in *instance) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	in.mu.Lock()
	if in.leases > 0 || in.retired {
		in.mu.Unlock()
		m.mu.Unlock()
		return
	}
	in.idleTimer = nil
	delete(m.insts, in.key)
	m.idle.Add(1)
	in.mu.Unlock()
	m.mu.Unlock()
	defer m.idle.Done()
	m.opts.Logger.Info("mcp server idle, stopping", "server", in.srv.Name, "workspace", in.workspace)
	in.shutdown()
}

// Running is the number of servers with a live connection.
func (m *Manager) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, in := range m.insts {
		in.mu.Lock()
		if in.cur != nil {
			n++
		}
		in.mu.Unlock()
	}
	return n
}

// Close stops every server, in parallel, and returns when they are gone.
// Leases still held fail their calls afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	insts := make([]*instance, 0, len(m.insts))
	for _, in := range m.insts {
		in.mu.Lock()
		if in.idleTimer != nil {
			in.idleTimer.Stop()
			in.idleTimer = nil
		}
		in.mu.Unlock()
		insts = append(insts, in)
	}
	m.insts = map[string]*instance{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.shutdown()
		}()
	}
	wg.Wait()
	m.idle.Wait()
}
