# Sourced by the test scripts: `cached_install <dir> <ready-function> <npm packages...>` installs the
# packages from the npm registry into <dir> unless <ready-function> says the tree there is whole.
# Several runs on one machine share the cache: one installs while the others wait on its lock,
# and the install goes to a staging folder renamed into place, so that no run ever sees (or
# leaves, under kill -9) a half-installed tree.
cached_install() {
  local dir="$1" ready="$2"
  shift 2
  "$ready" && return 0
  mkdir -p "$(dirname "$dir")"
  exec 9>"$dir.lock"
  flock 9
  if ! "$ready"; then
    echo "cached-install: fetching $* into $dir" >&2
    rm -rf "$dir".staging.* # what an install killed midway left; only the lock holder installs
    local stage
    stage="$(mktemp -d "$dir.staging.XXXXXX")"
    echo '{"private": true}' > "$stage/package.json"
    npm install --prefix "$stage" --no-audit --no-fund --engine-strict=false "$@" >&2
    # A stale tree (other versions) was installed here by this script.
    [ -e "$dir" ] && mv "$dir" "$stage.old"
    mv "$stage" "$dir"
    rm -rf "$stage.old"
    "$ready" || { echo "cached-install: $* did not install into $dir" >&2; exit 1; }
  fi
  exec 9>&-
}
