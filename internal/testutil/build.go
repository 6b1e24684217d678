package testutil

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// BuildSCV builds the scv command into dir/scv and returns its path. It
// works from any directory inside the module, so TestMain functions can
// call it before any test runs.
func BuildSCV(dir string) (string, error) {
	bin := filepath.Join(dir, "scv")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/scv-agent/scv/cmd/scv").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build github.com/scv-agent/scv/cmd/scv: %v\n%s", err, out)
	}
	return bin, nil
}
