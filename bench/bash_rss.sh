#!/usr/bin/env bash
# Peak RSS and wall time of the bash tool benchmarks, each in its own process,
# measured from outside with GNU time (bench/peak_rss.sh). Usage:
# bench/bash_rss.sh [benchtime] (default 20x). Needs /usr/bin/time (Debian
# package `time`).
set -euo pipefail
exec "$(dirname "$0")/peak_rss.sh" ./internal/tools/bash "${1:-20x}" BenchmarkBashTrue BenchmarkBash100MB
