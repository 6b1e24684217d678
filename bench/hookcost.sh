#!/bin/bash
# Paired run of BenchmarkTurnNoHooks (internal/agent/bench_turn_test.go):
# a 10-call turn in a session without hooks, on a tree before hooks
# (BASE, default the commit before the hooks) and on this tree,
# alternately, so machine load affects both alike.
#
#   bench/hookcost.sh [BASE] [ROUNDS]
set -euo pipefail
base=${1:-4ecdd36}
rounds=${2:-6}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive "$base" | tar -x -C "$tmp"
cp "$root/internal/agent/bench_turn_test.go" "$tmp/internal/agent/"
(cd "$tmp" && go test -c -o "$tmp/old.test" ./internal/agent)
(cd "$root" && go test -c -o "$tmp/new.test" ./internal/agent)
for i in $(seq "$rounds"); do
	for t in old new; do
		(cd "$root/internal/agent" && "$tmp/$t.test" -test.run '^$' -test.bench TurnNoHooks -test.benchtime 2000x) |
			awk -v t="$t" '/^BenchmarkTurnNoHooks/ {print t, $3, $4}'
	done
done
