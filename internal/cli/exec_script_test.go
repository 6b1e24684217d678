package cli

import (
	"net/http/httptest"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/scv-agent/scv/internal/model/modeltest"
)

// TestExecScripts runs the scripts of testdata/script/exec: the exit
// statuses of `scv exec` (answered, answered with denials, failed, usage)
// and its --json error events, start-up errors included (docs/runtime.md,
// section 9), against a scripted fake model on 127.0.0.1.
func TestExecScripts(t *testing.T) {
	runScripts(t, "exec", map[string]scriptCmd{"fakemodel": cmdFakeModel})
}

// cmdFakeModel implements `fakemodel SCRIPT`: serve the model script
// SCRIPT (modeltest.LoadScript's JSON: one list of steps per request) on
// 127.0.0.1 until the script ends, and set MODEL_URL to its base URL.
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakemodel SCRIPT")
	}
	steps, err := modeltest.LoadScript(ts.MkAbs(args[0]))
	ts.Check(err)
	h := modeltest.NewHandler()
	for _, s := range steps {
		h.Script(s...)
	}
	srv := httptest.NewServer(h)
	ts.Defer(srv.Close)
	ts.Setenv("MODEL_URL", srv.URL)
}
