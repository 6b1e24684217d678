package proc

import (
	"bytes"
	"strconv"
	"strings"
)

// parsePSEnv reads the output of `ps <env flag> -ww -axo pid=,pgid=,command=`
// (the command line followed or preceded by the environment, words
// separated by spaces) and returns the PIDs, other than self and init, with
// a word key=value where match(value). A command argument that happens to
// spell the same word matches too; callers verify identities before they
// signal anything. Its callers are the BSD tag scans (tag_bsd.go), which
// a Linux build does not compile; this file has no build constraint so
// the parser's tests run everywhere.
func parsePSEnv(out []byte, key string, match func(string) bool, self int) []int {
	prefix := key + "="
	var pids []int
	for line := range bytes.Lines(out) {
		f := strings.Fields(string(line))
		if len(f) < 3 {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		for _, w := range f[2:] {
			if v, ok := strings.CutPrefix(w, prefix); ok && match(v) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
