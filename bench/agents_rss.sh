#!/usr/bin/env bash
# Wall time and peak RSS of a delegated agent_codex run on a fake codex that
# prints a 2 MB event stream, against cat of the same stream, and of the
# parser alone; each benchmark in its own process, peak RSS measured from
# outside with GNU time (bench/peak_rss.sh: it includes the test binary
# itself, and for the whole-call benchmark the short-lived bash/cat
# children are not counted).
# Usage: bench/agents_rss.sh [benchtime] (default 20x). Needs /usr/bin/time.
set -euo pipefail
exec "$(dirname "$0")/peak_rss.sh" ./internal/tools/agents "${1:-20x}" BenchmarkCat2MB BenchmarkAgentCodex2MB BenchmarkParseCodex2MB
