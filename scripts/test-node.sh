#!/usr/bin/env bash
# Runs tests under another Node major without touching the system's Node: the npm `node` package
# provides the binary (cached under $SVC_NODE_CACHE, default ~/.cache/svc-node). The tree must be
# built already (npm test builds it); the built JavaScript is the same for every Node version.
#   scripts/test-node.sh 24                 # the end-to-end tests under Node 24
#   scripts/test-node.sh 22 test/core/cli   # any vitest filter
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:?usage: scripts/test-node.sh <node major> [vitest filters...]}"
shift
[ "$#" -gt 0 ] || set -- test/e2e
case "$major" in *[!0-9]*) echo "test-node: the Node major must be a number, got '$major'" >&2; exit 2 ;; esac
dir="${SVC_NODE_CACHE:-$HOME/.cache/svc-node}/node-$major"
bin="$dir/node_modules/.bin/node"
# Beside the binary, the packages a test imports only where they run: @ai-sdk/mcp 2 declares
# Node >= 22 (engine-strict refuses it as a dev dependency on 20); test/e2e/mcp-events-ai-sdk.test.ts
# finds it through SVC_TEST_AI_SDK_MCP.
extras=()
[ "$major" -ge 22 ] && extras=("@ai-sdk/mcp@2" "zod@4")
ready() {
  [ -x "$bin" ] && "$bin" --version | grep -q "^v$major\." &&
    { [ "${#extras[@]}" -eq 0 ] || [ -d "$dir/node_modules/@ai-sdk/mcp" ]; }
}
# shellcheck source=lib/cached-install.sh
. scripts/lib/cached-install.sh
cached_install "$dir" ready "node@$major" "${extras[@]}"
[ "${#extras[@]}" -gt 0 ] && export SVC_TEST_AI_SDK_MCP="$dir"
echo "test-node: $("$bin" --version) runs: vitest run $*" >&2
PATH="$dir/node_modules/.bin:$PATH" exec "$bin" node_modules/vitest/vitest.mjs run "$@"
