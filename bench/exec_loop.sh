#!/usr/bin/env bash
# exec_loop.sh — wall time and peak RSS of `scv exec --yes` over a 20-step
# scripted tool loop (one `read` of a small file per step, then a final
# answer: 21 model requests) against the standalone fake model server
# (internal/model/modeltest/cmd/fakemodel) on 127.0.0.1.
#
# Usage: bench/exec_loop.sh [RUNS] [STEPS]   (defaults 10 and 20)
# Needs GNU time at /usr/bin/time (apt-get install -y time).
# Peak RSS is what GNU time reports for scv exec (wait4's ru_maxrss); its
# server runs inside the exec process.
# The in-process Go benchmark (go test -bench Exec ./internal/e2e) also
# separates the fake server's own time; see docs/benchmarks/runtime.md.
set -euo pipefail
runs=${1:-10}
steps=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
fake_pid=""
cleanup() {
	if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/scv" ./cmd/scv && go build -o "$work/fakemodel" ./internal/model/modeltest/cmd/fakemodel)

# One script entry per model request, repeated for every run.
{
	printf '['
	sep=""
	for _ in $(seq "$runs"); do
		for i in $(seq "$steps"); do
			printf '%s[{"tool_call":{"id":"r%d","name":"read","arguments":["{\\"path\\":\\"a.txt\\"}"]}}]' "$sep" "$i"
			sep=","
		done
		printf '%s[{"text":["All ","done."]}]' "$sep"
		sep=","
	done
	printf ']\n'
} >"$work/script.json"

"$work/fakemodel" -script "$work/script.json" >"$work/fake.out" 2>"$work/fake.err" &
fake_pid=$!
for _ in $(seq 100); do
	[ -s "$work/fake.out" ] && break
	sleep 0.05
done
url=$(head -1 "$work/fake.out")

mkdir -p "$work/home" "$work/ws" "$work/user"
printf '[providers.openai]\nbase_url = "%s"\nmax_retries = 0\n' "$url" >"$work/home/config.toml"
chmod 600 "$work/home/config.toml"
echo "hello from a.txt" >"$work/ws/a.txt"

echo "scv exec, $steps read steps + final answer, $runs runs, fake model at $url"
for r in $(seq "$runs"); do
	(cd "$work/ws" && env -i PATH="$PATH" HOME="$work/user" OPENAI_API_KEY=sk-test \
		/usr/bin/time -v "$work/scv" --scv-home "$work/home" exec --yes "read a.txt" >"$work/out" 2>"$work/time.$r")
	grep -qx "All done." "$work/out" || { echo "run $r: unexpected output"; cat "$work/out" "$work/time.$r"; exit 1; }
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.$r")
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.$r")
	echo "run $r: wall $wall  peak RSS ${rss} KiB"
	echo "$wall $rss" >>"$work/results"
done
awk '{ split($1, t, ":"); s = t[1] * 60 + t[2]; print s, $2 }' "$work/results" | sort -n |
	awk '{ w[NR] = $1; if ($2 > m) m = $2 } END { printf "median wall %.3f s, max peak RSS %d KiB (%.1f MiB)\n", w[int((NR + 1) / 2)], m, m / 1024 }'
