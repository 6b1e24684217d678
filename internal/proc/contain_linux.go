package proc

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// leafPrefix starts the name of every cgroup SCV makes:
// scv-<instance>-<owner pid>-<owner start time>-<sequence>, so that the
// leaves of an owner that died can be recognised and stopped by the next
// SCV process of the same instance (and only by one of it).
const leafPrefix = "scv-"

// containPlatform is the cgroup v2 directory leaves are made in.
type containPlatform struct {
	dir     string // absolute path of the parent cgroup
	rel     string // the same, as /proc/<pid>/cgroup names it
	inst    string // leafPrefix + "<instance>-"
	prefix  string // inst + "<pid>-<start>-"
	hasKill bool   // the kernel has cgroup.kill (5.14)
	pool    *leafPool
}

// newCgroupPlatform finds where this process may make cgroup v2 leaves:
// dir if given, else its own cgroup, and checks by making (and removing)
// one. It fails with the reason when it cannot.
func newCgroupPlatform(dir, instance string) (containPlatform, string, error) {
	p := containPlatform{inst: leafPrefix + instanceID(instance) + "-", pool: &leafPool{}}
	if dir == "" {
		d, rel, err := ownCgroup()
		if err != nil {
			return p, "", err
		}
		p.dir, p.rel = d, rel
	} else {
		p.dir = filepath.Clean(dir)
		rel, err := cgroupRel(p.dir)
		if err != nil {
			return p, "", err
		}
		p.rel = rel
	}
	start, err := StartTime(os.Getpid())
	if err != nil {
		return p, "", err
	}
	p.prefix = fmt.Sprintf("%s%d-%d-", p.inst, os.Getpid(), start)
	probe := filepath.Join(p.dir, p.prefix+"probe")
	if err := os.Mkdir(probe, 0o755); err != nil {
		return p, "", fmt.Errorf("cannot make a cgroup under %s (%w)", p.dir, unwrapPath(err))
	}
	_, kerr := os.Stat(filepath.Join(probe, "cgroup.kill"))
	p.hasKill = kerr == nil
	if err := os.Remove(probe); err != nil {
		return p, "", fmt.Errorf("cannot remove the test cgroup %s: %w", probe, err)
	}
	detail := "a cgroup v2 leaf per child under " + p.dir
	if !p.hasKill {
		detail += "; no cgroup.kill before Linux 5.14: each process is signalled"
	}
	return p, detail, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ownCgroup is this process's cgroup v2 directory and its path inside the
// hierarchy.
func ownCgroup() (dir, rel string, err error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			rel = r
		}
	}
	if rel == "" {
		return "", "", errNoCgroup
	}
	mnt, root, err := cgroup2Mount()
	if err != nil {
		return "", "", err
	}
	sub, ok := strings.CutPrefix(rel, root)
	if !ok {
		return "", "", fmt.Errorf("this process's cgroup %s is outside the cgroup2 mount's root %s", rel, root)
	}
	return filepath.Join(mnt, sub), rel, nil
}

// cgroupRel is dir's path inside the cgroup v2 hierarchy.
func cgroupRel(dir string) (string, error) {
	mnt, root, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	sub, ok := strings.CutPrefix(dir, mnt)
	if !ok || (sub != "" && sub[0] != '/') {
		return "", fmt.Errorf("%s is not under the cgroup2 mount %s", dir, mnt)
	}
	return filepath.Join(root, sub), nil
}

// cgroup2Mount finds the cgroup2 file system in /proc/self/mountinfo: its
// mount point and the hierarchy path it shows.
func cgroup2Mount() (mnt, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional…] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		f := strings.Fields(pre)
		if len(f) < 5 {
			continue
		}
		return unescapeMount(f[4]), unescapeMount(f[3]), nil
	}
	return "", "", errNoCgroup
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// leaf is the cgroup of one child.
type leaf struct {
	dir, rel string
	fd       int
	hasKill  bool
	// empty says stop saw the leaf empty: no process can enter it any
	// more (none is left in it to fork), so only its rmdir remains.
	empty bool
}

func (p containPlatform) newLeaf(seq uint64) (*leaf, error) {
	name := p.prefix + strconv.FormatUint(seq, 10)
	l := &leaf{dir: filepath.Join(p.dir, name), rel: p.rel + "/" + name, hasKill: p.hasKill}
	if p.rel == "/" {
		l.rel = "/" + name
	}
	if err := os.Mkdir(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the child's cgroup: %w", err)
	}
	fd, err := unix.Open(l.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(l.dir)
		return nil, fmt.Errorf("open the child's cgroup: %w", err)
	}
	l.fd = fd
	return l, nil
}

// prepare has the child born in the leaf (clone3 with CLONE_INTO_CGROUP),
// so not even its first fork happens outside.
func (l *leaf) prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = l.fd
}

// cloneUnsupported says a start failed because the kernel cannot start a
// process in a cgroup (before 5.7).
func (l *leaf) cloneUnsupported(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.E2BIG) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)
}

// outsideCmd is a fresh Cmd doing what cmd was to do, started outside
// any cgroup.
func (l *leaf) outsideCmd(cmd *exec.Cmd) *exec.Cmd {
	attr := *cmd.SysProcAttr
	attr.UseCgroupFD, attr.CgroupFD = false, 0
	return &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Stdin: cmd.Stdin,
		Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles, SysProcAttr: &attr}
}

// adopt moves pid into the leaf.
func (l *leaf) adopt(pid int) {
	_ = os.WriteFile(filepath.Join(l.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// populated says a live process is in the leaf or below it. Zombies are
// not counted by the kernel.
func (l *leaf) populated() bool {
	var buf [256]byte
	b, err := readInto(buf[:0], l.dir+"/cgroup.events")
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// procs lists the processes of the leaf and of every cgroup below it.
func (l *leaf) procs() []int {
	var out []int
	_ = filepath.WalkDir(l.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out
}

// signal sends sig to every process of the leaf, each only while it is
// verifiably still in it (through a pidfd, so a PID reused meanwhile is
// never signalled).
func (l *leaf) signal(sig syscall.Signal) {
	for _, pid := range l.procs() {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			if errors.Is(err, unix.ENOSYS) && l.holds(pid) {
				_ = unix.Kill(pid, sig)
			}
			continue
		}
		if l.holds(pid) {
			_ = unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		unix.Close(fd)
	}
}

// holds says pid is in the leaf or below it.
func (l *leaf) holds(pid int) bool {
	var buf [512]byte
	b, err := readInto(buf[:0], "/proc/"+strconv.Itoa(pid)+"/cgroup")
	if err != nil {
		return false
	}
	for line := range bytes.Lines(b) {
		if rel, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("0::")); ok {
			r := string(rel)
			return r == l.rel || strings.HasPrefix(r, l.rel+"/")
		}
	}
	return false
}

// stop ends every process of the leaf: TERM and CONT, up to grace for them
// to go, then KILL, and a bounded wait for the kernel to finish them.
func (l *leaf) stop(grace time.Duration) {
	if !l.populated() {
		l.empty = true
		return
	}
	l.signal(syscall.SIGTERM)
	l.signal(syscall.SIGCONT)
	if l.waitEmpty(grace) {
		l.empty = true
		return
	}
	l.kill()
	l.empty = l.waitEmpty(2 * time.Second)
}

// kill KILLs every process of the leaf at once: cgroup.kill where the
// kernel has it (which also catches processes forking meanwhile), else
// each process, in rounds.
func (l *leaf) kill() {
	if l.hasKill {
		if err := os.WriteFile(l.dir+"/cgroup.kill", []byte("1"), 0); err == nil {
			return
		}
	}
	for range 10 {
		if !l.populated() {
			return
		}
		l.signal(syscall.SIGKILL)
		time.Sleep(time.Millisecond)
	}
}

func (l *leaf) waitEmpty(d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for l.populated() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(step, left))
		step = min(step*2, 25*time.Millisecond)
	}
	return true
}

// remove kills whatever is still in the leaf and removes it with every
// cgroup below it (a nested SCV makes its own leaves inside).
func (l *leaf) remove() error {
	l.closeFD()
	if l.populated() {
		l.kill()
		l.waitEmpty(2 * time.Second)
	}
	return removeCgroupTree(l.dir)
}

// removeCgroupTree removes dir and the cgroups below it, deepest first. A
// cgroup whose last process has just died may still be busy for a moment,
// so EBUSY is retried for a bounded time.
func removeCgroupTree(dir string) error {
	if err := unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
		return nil // the usual case: a leaf with no cgroup below it
	}
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	var last error
	for i := len(dirs) - 1; i >= 0; i-- {
		deadline := time.Now().Add(time.Second)
		for {
			err := unix.Rmdir(dirs[i])
			if err == nil || errors.Is(err, unix.ENOENT) {
				last = nil
				break
			}
			last = fmt.Errorf("remove %s: %w", dirs[i], err)
			if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return last
}

// reconcile stops and removes the leaves whose owning SCV process is gone
// (it died with children running) and returns how many it removed.
func (p containPlatform) reconcile() (int, error) {
	if p.dir == "" {
		return 0, nil
	}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, e := range ents {
		pid, start, ok := p.leafOwner(e.Name())
		if !ok || !e.IsDir() || Alive(pid, start) {
			continue
		}
		l := &leaf{dir: filepath.Join(p.dir, e.Name()), rel: strings.TrimSuffix(p.rel, "/") + "/" + e.Name(), hasKill: p.hasKill}
		l.stop(DefaultGrace)
		if err := l.remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// leafOwner reads <inst><pid>-<start>-<anything>: a leaf of this
// instance and its owner.
func (p containPlatform) leafOwner(name string) (pid int, start uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, p.inst)
	if !ok {
		return 0, 0, false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil && pid > 0
}

// instanceID is a short stable name of an instance (its home).
func instanceID(instance string) string {
	sum := sha256.Sum256([]byte(instance))
	return hex.EncodeToString(sum[:4])
}

// childrenOf lists the children of pid (zombies included) from
// /proc/<pid>/task/*/children, reading every /proc/*/stat only on kernels
// built without that file.
func childrenOf(pid int) ([]procFact, error) {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(base)
	if err != nil {
		return nil, err
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var out []procFact
	buf := make([]byte, 0, 512)
	for _, tid := range tids {
		buf, err = readInto(buf, base+"/"+tid+"/children")
		if errors.Is(err, os.ErrNotExist) && tid == strconv.Itoa(pid) {
			return childrenByScan(pid)
		}
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(buf) {
			out = appendChild(out, pid, string(f))
		}
	}
	return out, nil
}

// childrenByScan is childrenOf by reading every /proc/*/stat.
func childrenByScan(ppid int) ([]procFact, error) {
	names, err := readProcNames()
	if err != nil {
		return nil, err
	}
	var out []procFact
	for _, name := range names {
		out = appendChild(out, ppid, name)
	}
	return out, nil
}

// appendChild appends to out the process whose pid is the text name when
// it is a child of ppid.
func appendChild(out []procFact, ppid int, name string) []procFact {
	pid, err := strconv.Atoi(name)
	if err != nil {
		return out
	}
	if s, err := readStat(pid); err == nil && s.ppid == ppid {
		out = append(out, procFact{pid: pid, pgid: s.pgrp, start: s.start, zombie: s.dead()})
	}
	return out
}

// environOf is pid's environment.
func environOf(pid int) ([]string, error) {
	b, err := readInto(make([]byte, 0, 4096), "/proc/"+strconv.Itoa(pid)+"/environ")
	if err != nil {
		return nil, err
	}
	return envSplit(b), nil
}
