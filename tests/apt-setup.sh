#!/usr/bin/env bash
# Installs Debian packages a test needs and .venv does not hold, from the package registry, when
# the commands they provide are missing: `apt-setup.sh WHAT "CMD…" PACKAGE…` (WHAT names the
# tests in its messages). Where they cannot be installed (no apt-get, no root or sudo, no
# registry), it says so in one line and leaves those tests to skip; it never fails the test
# command by itself. tests/browser-setup.sh and tests/csharp-setup.sh call it.
set -uo pipefail
what="$1" commands="$2"
shift 2
missing=0
for c in $commands; do
    command -v "$c" >/dev/null 2>&1 || missing=1
done
[ "$missing" -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "$what: no apt-get here to install $*; its tests will be skipped"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "$what: not root and no password-less sudo to install $*; its tests will be skipped"
        exit 0
    fi
fi
log="$(mktemp)"
if ! { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "$@" >"$log" 2>&1 \
       || { $SUDO apt-get update -q >>"$log" 2>&1 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "$@" >>"$log" 2>&1; }; }; then
    echo "$what: installing Debian's $* failed (last lines below); its tests will be skipped"
    tail -5 "$log"
fi
rm -f "$log"
exit 0
