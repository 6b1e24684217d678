package testutil

import "flag"

// update is the one flag every golden test reads: `go test ./... -update`
// (or -args -update) rewrites the golden files of testdata/ with what the
// code produces now, to be reviewed with git diff.
var update = flag.Bool("update", false, "rewrite the golden files in testdata with what the code produces now")

// Update says the tests run with -update.
func Update() bool { return *update }
