package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// parseHelperArgs reads `--policy=JSON -- PATH ARGS...`.
func parseHelperArgs(args []string) (Policy, []string, error) {
	var p Policy
	if len(args) < 3 || !strings.HasPrefix(args[0], "--policy=") || args[1] != "--" {
		return p, nil, fmt.Errorf("usage: scv %s --policy=JSON -- PATH [ARG...] (started by SCV itself, not by hand)", HelperCommand)
	}
	dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(args[0], "--policy=")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, nil, fmt.Errorf("bad sandbox policy: %w", err)
	}
	if Rank(p.Mode) < 1 {
		return p, nil, fmt.Errorf("bad sandbox policy: mode %q", p.Mode)
	}
	return p, args[2:], nil
}

// Main is `scv sandbox-exec`: it confines its own process as the policy
// says, then execs the command in place (same PID, group, environment). It
// returns only on failure, with exit status 126 after a message on stderr
// naming what failed.
func Main(args []string, stderr io.Writer) int {
	p, argv, err := parseHelperArgs(args)
	if err == nil {
		err = confineAndExec(p, argv)
	}
	fmt.Fprintf(stderr, "scv sandbox: %v\n", err)
	return 126
}
