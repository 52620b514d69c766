#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against
# a fresh svc daemon built from this checkout. Not part of `npm test`: it downloads the suite and a
# Node 22 (the npm `node@22` package; the suite needs Node 22) into a temporary prefix outside the
# repository, and touches neither package.json nor the system's Node.
#
#   npm run build && scripts/mcp-conformance.sh [--suite active|all] [other conformance options]
#
# CONFORMANCE_VERSION (default below) pins the suite; CONFORMANCE_PREFIX (default
# $TMPDIR/svc-mcp-conformance) is where it is installed and kept for the next run. The scenarios
# that do not apply to svc are listed in scripts/mcp-conformance-baseline.yml: the run exits 0 when
# every other scenario passes and each of those fails. Results: $CONFORMANCE_PREFIX/results.
set -euo pipefail

VERSION="${CONFORMANCE_VERSION:-0.1.16}"
PREFIX="${CONFORMANCE_PREFIX:-${TMPDIR:-/tmp}/svc-mcp-conformance}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="$REPO/dist/core/cli/svc.js"
BASELINE="$REPO/scripts/mcp-conformance-baseline.yml"
SUITE_JS="$PREFIX/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NODE22="$PREFIX/node_modules/node/bin/node"

if [ ! -f "$CLI" ]; then
  echo "mcp-conformance: $CLI is missing; run \`npm run build\` first" >&2
  exit 1
fi

installed="$(node -p "try { require('$PREFIX/node_modules/@modelcontextprotocol/conformance/package.json').version } catch { '' }")"
if [ "$installed" != "$VERSION" ] || [ ! -x "$NODE22" ]; then
  echo "mcp-conformance: installing @modelcontextprotocol/conformance@$VERSION and node@22 into $PREFIX" >&2
  mkdir -p "$PREFIX"
  (cd "$PREFIX" && npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$VERSION" "node@22" >&2)
fi
case "$("$NODE22" --version)" in
  v22.*) ;;
  *) echo "mcp-conformance: $NODE22 is not Node 22 ($("$NODE22" --version))" >&2; exit 1 ;;
esac

HOME_DIR="$(mktemp -d "${TMPDIR:-/tmp}/svc-conformance-home-XXXXXX")"
DAEMON_PID=""
cleanup() {
  if [ -n "$DAEMON_PID" ]; then kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null || true; fi
  rm -rf "$HOME_DIR"
}
trap cleanup EXIT

# A daemon of its own: a temporary SVC_HOME, any free port, loopback (the default bind).
SVC_HOME="$HOME_DIR" node "$CLI" serve --port 0 >"$HOME_DIR/daemon.log" 2>&1 &
DAEMON_PID=$!
PORT=""
for _ in $(seq 1 300); do
  PORT="$(node -p "try { const r = require('$HOME_DIR/runtime.json'); r.pid === $DAEMON_PID ? r.port : '' } catch { '' }")"
  [ -n "$PORT" ] && break
  if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
    echo "mcp-conformance: the daemon exited before listening:" >&2
    cat "$HOME_DIR/daemon.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$PORT" ]; then
  echo "mcp-conformance: the daemon did not write runtime.json within 30 s:" >&2
  cat "$HOME_DIR/daemon.log" >&2
  exit 1
fi

# A localhost URL: the dns-rebinding-protection scenario needs one.
URL="http://localhost:$PORT/mcp"
echo "mcp-conformance: suite $VERSION, $("$NODE22" --version), svc $(node -p "require('$REPO/package.json').version") at $URL" >&2
"$NODE22" "$SUITE_JS" server --url "$URL" --expected-failures "$BASELINE" -o "$PREFIX/results" "$@"
