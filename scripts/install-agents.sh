#!/usr/bin/env bash
# Installs the real coding agents that test/plugins/acp/real-agents/ drives, at the versions
# test/support/real-agents.json pins, beside a Node 24 binary (the npm `node` package: Claude
# Code's ACP adapter needs Node >= 22; the system's Node is untouched), from the npm registry into
# $SVC_AGENT_CACHE (default ~/.cache/svc-agents)/agents-<hash of the pins>. Prints that folder.
#   scripts/install-agents.sh            # the test set-up runs this; safe to run by hand
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t pins < <(node -e '
  const pins = require("./test/support/real-agents.json");
  for (const [name, version] of Object.entries(pins)) console.log(`${name}@${version}`);')
key="$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)"
dir="${SVC_AGENT_CACHE:-$HOME/.cache/svc-agents}/agents-$key"
ready() {
  local pin name
  [ -x "$dir/node_modules/.bin/node" ] || return 1
  for pin in "${pins[@]}"; do
    name="${pin%@*}"
    [ -f "$dir/node_modules/$name/package.json" ] || return 1
  done
}
# shellcheck source=lib/cached-install.sh
. scripts/lib/cached-install.sh
cached_install "$dir" ready "${pins[@]}"
echo "$dir"
