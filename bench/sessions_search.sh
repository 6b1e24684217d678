#!/usr/bin/env bash
# sessions_search.sh — wall time, CPU and peak RSS of the whole
# `scv sessions search WORD` process over a database of 10,000 sessions
# (30,000 generated turns, as internal/store's BenchmarkSearch), for words
# of several frequencies.
#
# Usage: bench/sessions_search.sh [RUNS]   (default 10)
# Needs GNU time at /usr/bin/time. Building the database takes about a
# minute (internal/store's TestWriteBenchDB).
set -euo pipefail
runs=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/scv" ./cmd/scv &&
	go test ./internal/store -count=1 -run '^TestWriteBenchDB$' -args -bench-db="$work/home" -bench-db-kind=search10000 >/dev/null)
ls -l "$work/home/state/scv.db"
# Words by rank in the generated prose: 0 "the" (in every turn), 50
# "please", 1000 "rotelli"; then two words, and one that is nowhere.
for q in the please rotelli "please rotelli" zyzzyva; do
	for r in $(seq "$runs"); do
		/usr/bin/time -f "%e %U %S %M" -o "$work/t.$r" "$work/scv" --scv-home "$work/home" sessions search $q >/dev/null || true
	done
	wall=$(cat "$work"/t.* | awk '{ print $1 }' | sort -n | awk '{ v[NR] = $1 } END { printf "median %.3f s (min %.3f, max %.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }')
	cpu=$(cat "$work"/t.* | awk '{ print $2 + $3 }' | sort -n | awk '{ v[NR] = $1 } END { printf "median %.3f s", v[int((NR + 1) / 2)] }')
	peak=$(cat "$work"/t.* | awk '$4 > m { m = $4 } END { printf "%.1f MiB", m / 1024 }')
	printf '%-16s wall %s, cpu %s, peak RSS %s\n' "$q" "$wall" "$cpu" "$peak"
	rm -f "$work"/t.*
done
