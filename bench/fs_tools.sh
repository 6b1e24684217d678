#!/usr/bin/env bash
# Times `read` of a 256 KiB file and `write` of a 1 MiB file through
# `scv tools call` against `cat` / `cp` of the same file and prints the ratio.
#
# usage: bench/fs_tools.sh [PATH_TO_SCV]
#   With PATH_TO_SCV the real CLI is timed as
#     scv tools call $SCV_CALL_FLAGS read '{"path":"f256k.txt"}'     (argv)
#     scv tools call $SCV_CALL_FLAGS write - < write-args.json      (stdin)
#   run with the workspace as the current directory. A 1 MiB JSON argument
#   does not fit in one argv string on Linux (MAX_ARG_STRLEN = 128 KiB), so
#   the write arguments go through stdin ("-"). SCV_CALL_FLAGS defaults to
#   "--yes" (write has filesystem risk and needs approval). The real CLI
#   runs with a fresh SCV_HOME whose config.toml sets
#   tools.output_limit_bytes = $SCV_OUTPUT_LIMIT (default 1048576): with the
#   default 65536 a 256 KiB read returns only its first ~64 KiB (truncated),
#   which would not compare with cat. SCV_OUTPUT_LIMIT=default keeps the
#   default limit (the read is then cut to ~64 KiB and the check below skips
#   the whole-content test).
#   Without it, the minimal caller bench/fs_call.go (same tool code, one
#   process per call, same output object, none of the binary's start-up) is
#   built and timed instead.
# Uses hyperfine when installed (apt-get install -y hyperfine), else a bash
# loop of RUNS iterations (default 50).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
runs=${RUNS:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ws=$work/ws
mkdir -p "$ws"

if [[ $# -ge 1 ]]; then
  scv=$(realpath "$1")
  mkdir -p "$work/scvhome"
  limit=${SCV_OUTPUT_LIMIT:-1048576}
  if [[ $limit != default ]]; then
    printf '[tools]\noutput_limit_bytes = %d\n' "$limit" >"$work/scvhome/config.toml"
  fi
  call=("$scv" --scv-home "$work/scvhome" tools call ${SCV_CALL_FLAGS:---yes})
  label="scv tools call"
else
  (cd "$repo" && go build -o "$work/fs_call" bench/fs_call.go)
  call=("$work/fs_call")
  label="fs_call (minimal caller)"
fi

# Test data: 256 KiB and 1 MiB of ASCII text.
python3 - "$ws" <<'PY'
import sys
line = "a" * 78 + "\n"
for name, size in (("f256k.txt", 256 * 1024), ("f1m.txt", 1024 * 1024)):
    open(sys.argv[1] + "/" + name, "w").write((line * (size // len(line) + 1))[:size])
PY
cp "$ws/f1m.txt" "$ws/target.txt"
cp "$ws/f1m.txt" "$ws/cp-target.txt"
python3 - "$ws/f1m.txt" "$work/write-args.json" <<'PY'
import json, sys
content = open(sys.argv[1]).read()
json.dump({"path": "target.txt", "mode": "replace", "content": content}, open(sys.argv[2], "w"))
PY

q() { printf '%q ' "$@"; }
read_cmd="cd $(q "$ws") && $(q "${call[@]}") read '{\"path\":\"f256k.txt\"}' >/dev/null"
cat_cmd="cat $(q "$ws/f256k.txt") >/dev/null"
write_cmd="cd $(q "$ws") && $(q "${call[@]}") write - <$(q "$work/write-args.json") >/dev/null"
cp_cmd="cp $(q "$ws/f1m.txt") $(q "$ws/cp-target.txt")"
cpsync_cmd="cp $(q "$ws/f1m.txt") $(q "$ws/cp-target.txt") && sync $(q "$ws/cp-target.txt")"

# Sanity: both calls succeed; the read returns the whole file unless the
# default output limit was asked for.
bash -c "${read_cmd% >/dev/null}" >"$work/read-out.json"
python3 - "$work/read-out.json" "${SCV_OUTPUT_LIMIT:-}" <<'PY' || { echo "read call failed or was cut: $(head -c 300 "$work/read-out.json")" >&2; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["success"], d
if sys.argv[2] != "default":
    assert len(d["output"]["content"]) == 256 * 1024 and not d["truncated"], "cut"
PY
bash -c "${write_cmd% >/dev/null}" | grep -q '"success":true' || { echo "write call failed" >&2; exit 1; }
cmp -s "$ws/target.txt" "$ws/f1m.txt" || { echo "write produced different content" >&2; exit 1; }

mean_ms() { # command → mean wall time in ms
  if command -v hyperfine >/dev/null; then
    hyperfine --warmup 3 --runs "$runs" --export-json "$work/h.json" "$1" >/dev/null 2>&1
    python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["mean"]*1000))' "$work/h.json"
  else
    local start end
    start=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do bash -c "$1"; done
    end=$(date +%s%N)
    python3 -c "print('%.3f' % (($end - $start) / 1e6 / $runs))"
  fi
}

tool=$(command -v hyperfine >/dev/null && echo "hyperfine $(hyperfine --version | cut -d' ' -f2), $runs runs" || echo "bash loop, $runs runs")
echo "timer: $tool; caller: $label; machine: $(nproc) cores"
r=$(mean_ms "$read_cmd"); c=$(mean_ms "$cat_cmd")
echo "read 256 KiB:  $label ${r} ms, cat ${c} ms, ratio $(python3 -c "print('%.1f' % ($r / $c))")"
w=$(mean_ms "$write_cmd"); p=$(mean_ms "$cp_cmd"); s=$(mean_ms "$cpsync_cmd")
echo "write 1 MiB:   $label ${w} ms, cp ${p} ms (ratio $(python3 -c "print('%.1f' % ($w / $p))")), cp+sync ${s} ms (ratio $(python3 -c "print('%.1f' % ($w / $s))"))"
