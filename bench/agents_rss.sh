#!/usr/bin/env bash
# Wall time and peak RSS of a delegated agent_codex run on a fake codex that
# prints a 2 MB event stream, against cat of the same stream, and of the
# parser alone; each benchmark in its own process, peak RSS measured from
# outside with GNU time (it includes the test binary itself, and for the
# whole-call benchmark the short-lived bash/cat children are not counted).
# Usage: bench/agents_rss.sh [benchtime] (default 20x). Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-20x}
bin=$(mktemp -d)/agents.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./internal/tools/agents
cd internal/tools/agents
for b in BenchmarkCat2MB BenchmarkAgentCodex2MB BenchmarkParseCodex2MB; do
	out=$( { /usr/bin/time -v "$bin" -test.run='^$' -test.bench="^$b\$" -test.benchtime="$benchtime" >/dev/stderr; } 2>&1 )
	line=$(grep -E "^$b" <<<"$out")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' <<<"$out")
	echo "$line	external-peak-RSS-KB=$rss"
done
