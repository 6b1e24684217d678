#!/usr/bin/env bash
# Runs each named benchmark of a package in its own process (the package's
# test binary, built once, run in the package's directory as go test does)
# and prints its result line with the process's peak RSS, measured from
# outside with GNU time: it includes the test binary itself.
# Usage: bench/peak_rss.sh PACKAGE BENCHTIME BENCHMARK... (PACKAGE as
# ./internal/tools/bash). Needs /usr/bin/time (Debian package `time`).
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=$1 benchtime=$2
shift 2
bin=$(mktemp -d)/pkg.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" "$pkg"
cd "$pkg"
for b in "$@"; do
	out=$( { /usr/bin/time -v "$bin" -test.run='^$' -test.bench="^$b\$" -test.benchtime="$benchtime" >/dev/stderr; } 2>&1 )
	line=$(grep -E "^$b" <<<"$out")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' <<<"$out")
	echo "$line	external-peak-RSS-KB=$rss"
done
