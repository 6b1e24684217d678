#!/usr/bin/env bash
# mcp.sh — the MCP client's figures (docs/benchmarks/mcp.md):
#   1. a trivial MCP tool call through SCV's loop vs the same call made
#      directly with the SDK client (fake Go server over stdio);
#   2. start-up of a stdio server as SCV sees it (spawn → handshake → tools),
#      for the fake Go server and for server-everything on Node;
#   3. daemon RSS after one turn with 0, 1 and 5 idle stdio servers.
# The npm servers must be installed (.ci/npm-install internal/mcp/testdata/npm).
# Usage: bench/mcp.sh [ROUNDS]   (default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds="${1:-5}"
# Loop and direct alternate, round by round, so drift hits both.
for i in $(seq "$rounds"); do
  go test -run '^$' -bench 'BenchmarkMCPCall(Loop|Direct)$' -benchtime=2000x -benchmem ./internal/app | grep '^Benchmark'
done
go test -run '^$' -bench 'BenchmarkStart' -benchtime=10x -count "$rounds" ./internal/mcp | grep '^Benchmark'
go test -run '^$' -bench 'BenchmarkDaemonMCPRSS' -benchtime="$rounds"x ./internal/e2e | grep '^Benchmark'
