#!/usr/bin/env bash
# daemon_rss.sh — resident memory of a `scv run` daemon idle and with 100
# idle sessions open (VmRSS/VmHWM from /proc/<pid>/status), via the Go
# benchmark BenchmarkDaemonRSS of internal/e2e (a fresh daemon per run).
# Usage: bench/daemon_rss.sh [RUNS]   (default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
go test -run '^$' -bench 'BenchmarkDaemonRSS' -benchtime="${1:-5}x" ./internal/e2e
