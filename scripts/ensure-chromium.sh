#!/usr/bin/env bash
# The web viewer's browser tests drive Debian's Chromium (never a downloaded browser). Install
# it when it is missing and we may (root, or password-less sudo); otherwise say how.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    echo "/usr/bin/chromium is missing: the web viewer's browser tests will fail." \
        "Install it with: sudo apt-get install chromium" >&2
    exit 0
fi
echo "installing Debian's chromium for the browser tests..." >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
