#!/usr/bin/env bash
# bash_steps.sh — the daemon's own CPU per `bash` step, with 0 and 1,000
# idle processes on the machine (started and killed by the driver), for
# the default process tracking and each mechanism SCV_PROCESS_TRACKING
# can force. Each line comes from bench/bash_steps (see its doc comment).
#
# Usage: bench/bash_steps.sh [TURNS] [BASELINE_SCV]
#   TURNS          measured 5-step turns per case (default 30)
#   BASELINE_SCV   another scv binary measured the same way first (e.g. one
#                  built from an older commit, for before/after figures)
set -euo pipefail
turns=${1:-30}
baseline=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/scv" ./cmd/scv && go build -o "$work/bash_steps" ./bench/bash_steps)
if [ -n "$baseline" ]; then
	for idle in 0 1000; do
		echo -n "baseline: "
		"$work/bash_steps" -scv "$baseline" -idle "$idle" -turns "$turns"
	done
fi
for tracking in "" cgroup subreaper group+tag; do
	for idle in 0 1000; do
		"$work/bash_steps" -scv "$work/scv" -idle "$idle" -turns "$turns" ${tracking:+-tracking "$tracking"} || true
	done
done
