//go:build darwin || freebsd

package proc

import (
	"context"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// These systems have no cgroups: the platform part of a Containment is
// empty and only the subreaper mechanism (FreeBSD) or the group and tag
// (macOS) remain.
type containPlatform struct{}

func newCgroupPlatform(string, string) (containPlatform, string, error) {
	return containPlatform{}, "", errNoCgroup
}

func (containPlatform) takeLeaf() (*leaf, bool, error) { return nil, false, errNoCgroup }
func (containPlatform) freshLeaf() (*leaf, error)      { return nil, errNoCgroup }
func (containPlatform) releaseLeaf(*leaf) error        { return nil }
func (containPlatform) close()                         {}
func (containPlatform) setLogger(*slog.Logger)         {}

func (containPlatform) reconcile() (int, error) { return 0, nil }

// leaf is never made on these systems.
type leaf struct {
	dir   string
	empty bool
}

func (*leaf) prepare(*exec.Cmd)                {}
func (*leaf) cloneUnsupported(error) bool      { return false }
func (*leaf) adopt(int)                        {}
func (*leaf) outsideCmd(c *exec.Cmd) *exec.Cmd { return c }
func (*leaf) stop(time.Duration)               {}
func (*leaf) kill()                            {}
func (*leaf) remove() error                    { return nil }
func (*leaf) stale() bool                      { return false }
func (*leaf) closeFD()                         {}

// childrenOf lists the children of pid (zombies included) from the
// kernel's process table.
func childrenOf(pid int) ([]procFact, error) {
	all, err := allInfo()
	if err != nil {
		return nil, err
	}
	var out []procFact
	for _, k := range all {
		if k.ppid == pid {
			out = append(out, procFact{pid: k.pid, pgid: k.pgid, start: k.start, zombie: k.zombie})
		}
	}
	return out, nil
}

// environOf is pid's command line and environment as ps(1) shows them,
// word by word (a word of the command line may look like an entry).
func environOf(pid int) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/ps", psEnvFlag, "-ww", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}
