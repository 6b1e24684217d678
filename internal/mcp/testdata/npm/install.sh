#!/usr/bin/env bash
# Installs the npm MCP servers the tests run (package.json + package-lock.json
# beside this script) into <repo>/.cache/mcp-npm with `npm ci`. The tests
# find them there; a stamp holding the lock file's hash tells them the
# install is current. Run by .ci/run; run it by hand after changing the lock.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
dest="$root/.cache/mcp-npm"
if ! command -v npm >/dev/null; then
  echo "mcp test servers: npm is not installed; the tests that need Node.js will be skipped" >&2
  exit 0
fi
stamp="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ -d "$dest/node_modules" ] && [ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
mkdir -p "$dest"
rm -f "$dest/.stamp"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
(cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
echo "$stamp" > "$dest/.stamp"
echo "mcp test servers installed in $dest"
