#!/usr/bin/env bash
# Peak RSS and wall time of the bash tool benchmarks, each in its own process,
# measured from outside with GNU time. Usage: bench/bash_rss.sh [benchtime]
# (default 20x). Needs /usr/bin/time (Debian package `time`).
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-20x}
bin=$(mktemp -d)/bash.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./internal/tools/bash
for b in BenchmarkBashTrue BenchmarkBash100MB; do
	out=$( { /usr/bin/time -v "$bin" -test.run='^$' -test.bench="^$b\$" -test.benchtime="$benchtime" >/dev/stderr; } 2>&1 )
	line=$(grep -E "^$b" <<<"$out")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' <<<"$out")
	echo "$line	external-peak-RSS-KB=$rss"
done
