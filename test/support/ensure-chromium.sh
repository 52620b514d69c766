#!/usr/bin/env bash
# Installs Debian's Chromium for the pair page's browser test when it is missing (CI runs as root
# on a fresh machine): npm test runs it first (pretest). The test never passes without a browser.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "ensure-chromium: /usr/bin/chromium is missing; install Debian's chromium package (apt-get install chromium)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
