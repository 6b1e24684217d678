package cli

import (
	"fmt"
	"strings"

	"github.com/scv-agent/scv/internal/delegation"
)

// runOf resolves what `scv agents kill` was given: a run's handle as is,
// or a background job (job-<n>) to the handle of its run when exactly one
// running delegation is that job (job handles count per session).
func runOf(tr *delegation.Tracker, arg string) (string, error) {
	if !strings.HasPrefix(arg, "job-") {
		return arg, nil
	}
	list, err := tr.List(false)
	if err != nil {
		return "", err
	}
	var handles []string
	for _, e := range list {
		if e.Job == arg {
			handles = append(handles, e.Handle)
		}
	}
	switch len(handles) {
	case 0:
		return "", fmt.Errorf("no running background job %s (see `scv agents ps`)", arg)
	case 1:
		return handles[0], nil
	}
	return "", fmt.Errorf("%d sessions have a %s running (%s): give the handle of the one to stop", len(handles), arg, strings.Join(handles, ", "))
}
