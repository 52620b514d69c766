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
if ! ready; then
  # Several runs on one machine share the cache: one installs while the others wait on its lock,
  # and the install goes to a staging folder renamed into place, so that no run ever sees (or
  # leaves, under kill -9) a half-installed tree.
  cache="$(dirname "$dir")"
  mkdir -p "$cache"
  exec 9>"$dir.lock"
  flock 9
  if ! ready; then
    echo "test-node: fetching Node $major (the npm \`node\` package) ${extras[*]} into $dir" >&2
    rm -rf "$dir".staging.* # what an install killed midway left; only the lock holder installs
    stage="$(mktemp -d "$dir.staging.XXXXXX")"
    echo '{"private": true}' > "$stage/package.json"
    npm install --prefix "$stage" --no-audit --no-fund "node@$major" "${extras[@]}" >&2
    # A stale tree (another major's binary, or no extras) was installed here by this script.
    [ -e "$dir" ] && mv "$dir" "$stage.old"
    mv "$stage" "$dir"
    rm -rf "$stage.old"
    ready || { echo "test-node: Node $major did not install into $dir" >&2; exit 1; }
  fi
  exec 9>&-
fi
[ "${#extras[@]}" -gt 0 ] && export SVC_TEST_AI_SDK_MCP="$dir"
echo "test-node: $("$bin" --version) runs: vitest run $*" >&2
PATH="$dir/node_modules/.bin:$PATH" exec "$bin" node_modules/vitest/vitest.mjs run "$@"
