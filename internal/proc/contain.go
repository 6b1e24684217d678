package proc

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// Mechanism is how a Containment finds every process a child started,
// including those that left its process group and scrubbed its environment.
type Mechanism string

const (
	// MechAuto (for ContainOptions.Want) picks the first that works of
	// MechCgroup, MechSubreaper and MechGroupTag.
	MechAuto Mechanism = "auto"
	// MechCgroup gives each child its own cgroup v2 leaf; at the child's
	// end the whole leaf is stopped and removed.
	MechCgroup Mechanism = "cgroup"
	// MechSubreaper makes this process a child subreaper; at a child's end
	// the orphans it adopted from that child are stopped, with everything
	// below them.
	MechSubreaper Mechanism = "subreaper"
	// MechGroupTag is the process group and the environment tag only:
	// a process that leaves the group and scrubs its environment escapes.
	MechGroupTag Mechanism = "group+tag"
)

// ParseMechanism reads a mechanism name; "" is MechAuto.
func ParseMechanism(s string) (Mechanism, error) {
	switch m := Mechanism(strings.TrimSpace(s)); m {
	case "":
		return MechAuto, nil
	case MechAuto, MechCgroup, MechSubreaper, MechGroupTag:
		return m, nil
	default:
		return "", fmt.Errorf("unknown process tracking %q: use auto, cgroup, subreaper or group+tag", s)
	}
}

// ContainOptions configure NewContainment.
type ContainOptions struct {
	// Want is the mechanism to use; MechAuto (or "") picks the best
	// available. Any other value is required: NewContainment fails when
	// it is not available here, saying why.
	Want Mechanism
	// CgroupDir, when set, is the cgroup v2 directory under which leaves
	// are made instead of this process's own cgroup.
	CgroupDir string
	// Instance names the SCV instance (its home) in the leaves' names:
	// Reconcile stops only the leaves of its own instance's dead
	// processes.
	Instance string
	// NoReaper leaves reaping to the caller when the subreaper mechanism
	// is chosen (the daemon runs its own Reaper); otherwise the
	// Containment reaps adopted children itself until Close.
	NoReaper bool
	Logger   *slog.Logger
}

// Containment gives every child started with it (Spec.Contain) a scope
// holding all of its descendants, whatever they do to their process group
// or environment, and stops the whole scope when the child ends. One
// Containment serves a whole SCV process; it is safe for concurrent use.
type Containment struct {
	mech   Mechanism
	detail string
	log    *slog.Logger

	plat containPlatform

	mu   sync.Mutex
	live map[string]int // tags of the scopes running now (subreaper attribution)

	stopReaper func()
}

// Mechanism is the mechanism in use.
func (c *Containment) Mechanism() Mechanism {
	if c == nil {
		return MechGroupTag
	}
	return c.mech
}

// Outlives says whether the scopes of this Containment survive the death
// of the process that made them and are found again by Reconcile in the
// next SCV process on the same instance: a cgroup leaf does (its name
// carries the instance and the maker's PID, and it holds every process of
// the child, whatever they did to their group or environment). A caller
// that keeps its own record of each running child, to stop it after a
// crash, needs none then.
func (c *Containment) Outlives() bool {
	return c.Mechanism() == MechCgroup
}

// Describe says in a line which mechanism is in use and why, for `scv
// status` and logs.
func (c *Containment) Describe() string {
	if c == nil {
		return string(MechGroupTag) + " (no containment configured)"
	}
	if c.detail == "" {
		return string(c.mech)
	}
	return string(c.mech) + " (" + c.detail + ")"
}

// Close stops the Containment's own reaper, if it runs one, waits for the
// cgroup leaves being made or removed in the background and removes those
// made in advance. Children still running keep their scopes until they
// end.
func (c *Containment) Close() {
	if c == nil {
		return
	}
	c.plat.close()
	if c.stopReaper != nil {
		c.stopReaper()
		c.stopReaper = nil
	}
}

func (c *Containment) claim(tag string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == nil {
		c.live = map[string]int{}
	}
	c.live[tag]++
}

func (c *Containment) release(tag string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live[tag]--; c.live[tag] <= 0 {
		delete(c.live, tag)
	}
}

// liveTags is a copy of the tags of the running scopes.
func (c *Containment) liveTags() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.live))
	for t := range c.live {
		out = append(out, t)
	}
	return out
}
