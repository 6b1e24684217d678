package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A confined command gets two Landlock layers, and the kernel allows an
// access only when both do:
//
//   - the read layer, kept across commands by ruleCache: every rule of the
//     policy (the walk around the hidden paths, the writable roots, the
//     devices, TCP and the IPC scopes), with the directory the commands'
//     temp dirs are made in standing for the command's own temp dir;
//   - the write layer, built per command: it handles only the writing
//     rights and grants them on the workspace, the writable roots, this
//     command's temp dir and the devices, nothing else.
//
// So reads are exactly the policy's (the temp dirs' directory is readable
// anyway by the walk), and writes are those both layers allow: the writable
// places but their hidden paths (the read layer splits around them), plus
// this command's temp dir, and not the other commands' temp dirs beside it.
// The read layer is what costs (one rule, open and stat per entry of every
// directory holding a hidden path); the write layer is a few rules.

// cacheSize bounds the read layers kept (one per policy, workspace and
// temp dir's directory).
const cacheSize = 8

// racyWindow: a directory's timestamps come from a clock that may lag the
// one time.Now reads by a tick, and two changes within a tick can leave
// them equal. Rules derived from a listing of a directory changed this
// close to (or after) the start of the walk are therefore used for one
// command and not kept, so a change made right after the listing is never
// missed; they are kept once the directories have been quiet that long.
var racyWindow = 100 * time.Millisecond

// stamp is what stat said of a path the rules depend on.
type stamp struct {
	path         string
	follow       bool // stat (devices), not lstat
	exists       bool
	dev, ino     uint64
	mode         uint32
	mtime, ctime int64
}

func stampOf(path string, fi os.FileInfo, err error) stamp {
	s := stamp{path: path}
	if err != nil || fi == nil {
		return s
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.exists = true
		s.dev, s.ino, s.mode = st.Dev, st.Ino, st.Mode&syscall.S_IFMT
		s.mtime, s.ctime = st.Mtim.Nano(), st.Ctim.Nano()
	}
	return s
}

// still says s describes its path now: the same file (device, inode,
// type) and, for a listed directory, the same modification and change
// times, which every entry created, removed or renamed in it moves.
func (s stamp) still(listed bool) bool {
	stat := os.Lstat
	if s.follow {
		stat = os.Stat
	}
	fi, err := stat(s.path)
	now := stampOf(s.path, fi, err)
	if now.exists != s.exists || now.dev != s.dev || now.ino != s.ino || now.mode != s.mode {
		return false
	}
	return !listed || (now.mtime == s.mtime && now.ctime == s.ctime)
}

// readLayer is a built read layer: a Landlock ruleset descriptor, which
// any number of threads may restrict themselves with, and what it was
// derived from.
type readLayer struct {
	fd            int // -1 once closed
	listed, roots []stamp
	used          uint64
}

// valid says the filesystem still is what the layer was derived from:
// every listed directory unchanged, every path a walk started from the
// same file (or still absent).
func (l *readLayer) valid() bool {
	for _, s := range l.listed {
		if !s.still(true) {
			return false
		}
	}
	for _, s := range l.roots {
		if !s.still(false) {
			return false
		}
	}
	return true
}

// ruleCache keeps read layers by policy. A layer's descriptor is only used
// (restrictSelf) and closed under mu, so a descriptor is never closed, or
// its number reused, while a thread restricts itself with it.
type ruleCache struct {
	mu     sync.Mutex
	layers map[string]*readLayer
	tick   uint64
	builds int // read layers derived (kept or not), for tests
}

var rules ruleCache

// readKey identifies a read layer: the policy (with the temp dir's
// directory for the temp dir), the resolved hidden and writable paths, and
// what the kernel handles.
type readKey struct {
	Policy   Policy
	Deny     []string
	Writable []string
	ABI      int
	Signals  bool
}

func (k readKey) String() string {
	b, _ := json.Marshal(k)
	return string(b)
}

// get returns the valid read layer of k, building it when there is none;
// or, when the directories it lists changed just now (racyWindow), nil and
// the grants to build a layer from for one command.
func (c *ruleCache) get(k readKey, rep Report) (*readLayer, []grant, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(k, rep)
}

func (c *ruleCache) getLocked(k readKey, rep Report) (*readLayer, []grant, error) {
	key := k.String()
	if l := c.layers[key]; l != nil {
		if l.valid() {
			c.tick++
			l.used = c.tick
			return l, nil, nil
		}
		c.dropLocked(key)
	}
	start := time.Now().UnixNano() - racyWindow.Nanoseconds()
	w := walker{deny: k.Deny}
	if err := w.policy(k.Policy, k.Writable); err != nil {
		return nil, nil, err
	}
	c.builds++
	for _, s := range w.listed {
		if max(s.mtime, s.ctime) >= start {
			return nil, w.out, nil
		}
	}
	fd, err := buildRuleset(rulesetAttr(k.Policy, rep), rep.ABI, w.out)
	if err != nil {
		return nil, nil, err
	}
	if c.layers == nil {
		c.layers = map[string]*readLayer{}
	}
	if len(c.layers) >= cacheSize {
		oldest := ""
		for key, l := range c.layers {
			if oldest == "" || l.used < c.layers[oldest].used {
				oldest = key
			}
		}
		c.dropLocked(oldest)
	}
	c.tick++
	l := &readLayer{fd: fd, listed: w.listed, roots: w.roots, used: c.tick}
	c.layers[key] = l
	return l, nil, nil
}

func (c *ruleCache) dropLocked(key string) {
	if l := c.layers[key]; l != nil {
		unix.Close(l.fd)
		l.fd = -1
		delete(c.layers, key)
	}
}

// restrict restricts the calling thread with the read layer l (from get
// for k), or, when get gave grants gs instead, with a layer built from
// them now; a layer dropped since get (changed or evicted) is got again.
func (c *ruleCache) restrict(l *readLayer, gs []grant, k readKey, rep Report) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l != nil && l.fd < 0 {
		var err error
		if l, gs, err = c.getLocked(k, rep); err != nil {
			return err
		}
	}
	if l == nil {
		return landlockRestrict(rulesetAttr(k.Policy, rep), rep.ABI, gs)
	}
	return restrictSelf(l.fd)
}

// cachedLandlock prepares p's Landlock layers for the kernel rep: the
// read layer from the cache, the write layer's grants; ok is false when
// p's temp dir lies in a hidden path (its directory would then be granted
// beside it), for which the caller builds one layer per command instead.
func cachedLandlock(p Policy, rep Report) (restrict func() error, ok bool, err error) {
	deny := resolveAll(cleanAbs(p.DenyRead))
	shared := p
	if p.TempDir != "" {
		shared.TempDir = filepath.Dir(p.TempDir)
	}
	k := readKey{Policy: shared, Deny: deny, Writable: resolveAll(cleanAbs(writableOf(shared))),
		ABI: rep.ABI, Signals: rep.signalScope()}
	w := walker{deny: deny}
	if p.TempDir != "" {
		for _, d := range resolveAll([]string{shared.TempDir}) {
			if w.hidden(d) {
				return nil, false, nil
			}
		}
	}
	l, gs, err := rules.get(k, rep)
	if err != nil {
		return nil, true, err
	}
	write := writeGrants(&w, resolveAll(cleanAbs(writableOf(p))))
	writeAttr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(rep.ABI) & writeRights}
	return func() error {
		if err := rules.restrict(l, gs, k, rep); err != nil {
			return err
		}
		return landlockRestrict(writeAttr, rep.ABI, write)
	}, true, nil
}

// writeGrants are the write layer's grants: the writing rights on each
// writable place that is not hidden (whole: the read layer splits them
// around their hidden paths), and on the devices.
func writeGrants(w *walker, writable []string) []grant {
	var out []grant
	for _, d := range writable {
		fi, err := os.Lstat(d)
		if err != nil || w.hidden(d) || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		r := uint64(writeRights)
		if !fi.IsDir() {
			r &= fileRights
		}
		out = append(out, grant{path: d, rights: r})
	}
	for _, d := range devices {
		out = append(out, grant{path: d, rights: fsWriteFile | fsTruncate})
	}
	return out
}
