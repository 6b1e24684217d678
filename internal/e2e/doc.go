// Package e2e holds black-box tests of the scv binary: TestMain builds
// ./cmd/scv once, and every test drives the real executable (scv exec, scv
// server --stdio, scv run/start/stop/status) against the scripted fake model
// of internal/model/modeltest on 127.0.0.1, with its own SCV home and
// workspace and an explicit environment. The package also holds the runtime
// benchmarks recorded in docs/benchmarks/runtime.md.
package e2e
