#!/usr/bin/env bash
# Converts the 2 MiB benchmark page with w3m and lynx, for comparison with
# BenchmarkHTMLToText. Run from the repository root; needs w3m and lynx
# (apt-get install -y w3m lynx).
set -euo pipefail
page=$(mktemp --suffix=.html)
trap 'rm -f "$page"' EXIT
go run ./bench/web_fetch -write "$page"
ls -l "$page"
for tool in "w3m -dump -T text/html" "lynx -dump -force_html -nolist" "lynx -dump -force_html"; do
  best=""
  for i in 1 2 3 4 5; do
    s=$(date +%s%N)
    $tool "$page" > /dev/null
    e=$(( ($(date +%s%N) - s) / 1000000 ))
    if [[ -z $best || $e -lt $best ]]; then best=$e; fi
  done
  /usr/bin/time -f "%M KiB peak RSS" $tool "$page" 2>&1 >/dev/null | tail -1 | sed "s|^|$tool: best of 5 ${best} ms, |"
done
