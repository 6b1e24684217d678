package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights (include/uapi/linux/landlock.h).
const (
	fsExecute     = unix.LANDLOCK_ACCESS_FS_EXECUTE
	fsWriteFile   = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	fsReadFile    = unix.LANDLOCK_ACCESS_FS_READ_FILE
	fsReadDir     = unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsRemoveDir   = unix.LANDLOCK_ACCESS_FS_REMOVE_DIR
	fsRemoveFile  = unix.LANDLOCK_ACCESS_FS_REMOVE_FILE
	fsMakeChar    = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR
	fsMakeDir     = unix.LANDLOCK_ACCESS_FS_MAKE_DIR
	fsMakeReg     = unix.LANDLOCK_ACCESS_FS_MAKE_REG
	fsMakeSock    = unix.LANDLOCK_ACCESS_FS_MAKE_SOCK
	fsMakeFifo    = unix.LANDLOCK_ACCESS_FS_MAKE_FIFO
	fsMakeBlock   = unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
	fsMakeSym     = unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsRefer       = unix.LANDLOCK_ACCESS_FS_REFER
	fsTruncate    = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsResolveUnix = unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX

	// fileRights are the rights that apply to a file (not a directory).
	fileRights  = fsExecute | fsWriteFile | fsReadFile | fsTruncate
	readRights  = fsExecute | fsReadFile | fsReadDir
	writeRights = fsWriteFile | fsRemoveDir | fsRemoveFile | fsMakeChar | fsMakeDir | fsMakeReg |
		fsMakeSock | fsMakeFifo | fsMakeBlock | fsMakeSym | fsRefer | fsTruncate
)

// handledFS are the filesystem rights the ruleset restricts on ABI abi.
// IOCTL on devices (ABI 5) is left alone: reading devices is allowed anyway
// and terminal programs need their ioctls.
func handledFS(abi int) uint64 {
	h := uint64(readRights | writeRights)
	if abi < minABIRefer {
		h &^= fsRefer
	}
	if abi < minABITruncate {
		h &^= fsTruncate
	}
	if abi >= minABIUnix {
		h |= fsResolveUnix
	}
	return h
}

// grant is one path-beneath rule.
type grant struct {
	path   string
	rights uint64
}

// grants computes the rules of p: read and execute on the whole tree but
// the hidden paths, every right on the writable roots (again but the
// hidden paths below them), write on the devices. Landlock only adds
// rights along a path, so hiding a path means granting its siblings one by
// one, down from the root: the directories above a hidden path are not
// listable themselves.
func grants(p Policy) ([]grant, error) {
	w := walker{deny: resolveAll(cleanAbs(p.DenyRead))}
	if err := w.policy(p, resolveAll(cleanAbs(writableOf(p)))); err != nil {
		return nil, err
	}
	return w.out, nil
}

// writableOf lists the places p lets write (before symbolic links are
// resolved): the workspace and writable roots in workspace-write, and the
// temp dir.
func writableOf(p Policy) []string {
	var writable []string
	if p.Mode == ModeWorkspaceWrite {
		writable = append(writable, p.Workspace)
		writable = append(writable, p.WritableRoots...)
	}
	if p.TempDir != "" {
		writable = append(writable, p.TempDir)
	}
	return writable
}

// walker derives grants around the hidden paths deny (already resolved)
// and, for the cache, notes what the result depends on: the directories
// it listed and the paths it started from (see ruleCache).
type walker struct {
	deny []string
	out  []grant
	// listed are the directories whose entries were granted one by one,
	// each as stat saw it right before the listing; roots are the paths
	// the walks started from (and the devices), as stat saw them.
	listed, roots []stamp
}

// policy adds the grants of p, with writable the resolved places it
// lets write.
func (w *walker) policy(p Policy, writable []string) error {
	if err := w.walkRoot("/", readRights); err != nil {
		return err
	}
	if p.Mode != ModeWorkspaceWrite && p.Workspace != "" {
		if err := w.walkRoot(p.Workspace, readRights); err != nil {
			return err
		}
	}
	for _, d := range writable {
		if err := w.walkRoot(d, readRights|writeRights); err != nil {
			return err
		}
	}
	for _, d := range devices {
		fi, err := os.Stat(d)
		s := stampOf(d, fi, err)
		s.follow = true
		w.roots = append(w.roots, s)
		if err == nil {
			w.out = append(w.out, grant{path: d, rights: fsReadFile | fsWriteFile | fsTruncate})
		}
	}
	return nil
}

// hidden says p is a hidden path or lies below one.
func (w *walker) hidden(p string) bool {
	for _, d := range w.deny {
		if under(p, d) {
			return true
		}
	}
	return false
}

// walkRoot is walk from a path named by the policy, which is noted.
func (w *walker) walkRoot(root string, rights uint64) error {
	fi, err := os.Lstat(root)
	w.roots = append(w.roots, stampOf(root, fi, err))
	return w.walk(root, rights)
}

// resolveAll adds the real path of each path that is a symbolic link (or
// lies below one), so both spellings count.
func resolveAll(paths []string) []string {
	out := append([]string(nil), paths...)
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	return out
}

// walk grants rights on root, or, when hidden paths lie at or below it,
// on each of its entries that is neither hidden nor a symbolic link (a
// link's target is judged where it lies), recursively.
func (w *walker) walk(root string, rights uint64) error {
	if w.hidden(root) {
		return nil
	}
	inside := false
	for _, d := range w.deny {
		if under(d, root) {
			inside = true
		}
	}
	fi, err := os.Lstat(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("sandbox rule for %s: %w", root, err)
	}
	if !inside || !fi.IsDir() {
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		r := rights
		if !fi.IsDir() {
			r &= fileRights
		}
		w.out = append(w.out, grant{path: root, rights: r})
		return nil
	}
	w.listed = append(w.listed, stampOf(root, fi, nil))
	ents, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("sandbox rules below %s: %w", root, err)
	}
	for _, e := range ents {
		if err := w.walk(filepath.Join(root, e.Name()), rights); err != nil {
			return err
		}
	}
	return nil
}

// rulesetAttrSize is the size of the ruleset attribute the kernel of ABI
// abi knows: handled_access_fs, then _net (ABI 4), then scoped (ABI 6).
func rulesetAttrSize(abi int) uintptr {
	switch {
	case abi >= minABIScope:
		return 24
	case abi >= minABINet:
		return 16
	}
	return 8
}

// rulesetAttr is the ruleset attribute of p on the kernel rep describes:
// every filesystem right it knows (but device ioctls), TCP without
// network, and the IPC scopes.
func rulesetAttr(p Policy, rep Report) unix.LandlockRulesetAttr {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(rep.ABI)}
	if !p.Network && rep.ABI >= minABINet {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if rep.ABI >= minABIScope {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		if rep.signalScope() {
			attr.Scoped |= unix.LANDLOCK_SCOPE_SIGNAL
		}
	}
	return attr
}

// buildRuleset creates a ruleset handling what attr says, with the grants
// gs; the caller closes the returned descriptor (close-on-exec).
func buildRuleset(attr unix.LandlockRulesetAttr, abi int, gs []grant) (int, error) {
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), rulesetAttrSize(abi), 0)
	if e != 0 {
		return -1, fmt.Errorf("create Landlock ruleset: %w", e)
	}
	for _, g := range gs {
		if err := addRule(int(fd), g, attr.Handled_access_fs); err != nil {
			unix.Close(int(fd))
			return -1, err
		}
	}
	return int(fd), nil
}

// restrictSelf adds the ruleset fd as a layer of the calling thread's
// Landlock domain; no_new_privs must already be set.
func restrictSelf(fd int) error {
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("enforce Landlock ruleset: %w", e)
	}
	return nil
}

// landlockRestrict builds a ruleset handling what attr says with the
// grants gs and restricts the calling thread with it.
func landlockRestrict(attr unix.LandlockRulesetAttr, abi int, gs []grant) error {
	fd, err := buildRuleset(attr, abi, gs)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return restrictSelf(fd)
}

func addRule(rulesetFD int, g grant, handled uint64) error {
	f, err := unix.Open(g.path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // gone since it was listed
		}
		return fmt.Errorf("sandbox rule for %s: %w", g.path, err)
	}
	defer unix.Close(f)
	rule := unix.LandlockPathBeneathAttr{Allowed_access: g.rights & handled, Parent_fd: int32(f)}
	if rule.Allowed_access == 0 {
		return nil
	}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("sandbox rule for %s: %w", g.path, e)
	}
	return nil
}
