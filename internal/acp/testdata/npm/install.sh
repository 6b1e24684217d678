#!/usr/bin/env bash
# Installs the official ACP client SDK the internal/acp tests drive scv acp with (package.json + package-lock.json
# beside this script) into <repo>/.cache/acp-npm with `npm ci`. The tests
# find them there; a stamp holding the lock file's hash tells them the
# install is current. Run by .ci/run; run it by hand after changing the lock.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
dest="$root/.cache/acp-npm"
if ! command -v npm >/dev/null; then
  echo "acp test client: npm is not installed; the tests that need Node.js will be skipped" >&2
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
echo "acp test client installed in $dest"
