#!/usr/bin/env bash
# Installs what the browser test (python/tests/test_browser.py) needs and is not in .venv:
# Debian's Chromium and ChromeDriver, from the package registry, when they are missing. Run by
# tests/run. Where they cannot be installed (no apt-get, no root or sudo, no registry), it says
# so in one line and leaves the test to skip; it never fails the test command by itself.
set -uo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "browser test: no apt-get here to install Chromium; the browser test will be skipped"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "browser test: not root and no password-less sudo to install Chromium; the browser test will be skipped"
        exit 0
    fi
fi
log="$(mktemp)"
if ! { $SUDO apt-get install -y -q chromium chromium-driver >"$log" 2>&1 \
       || { $SUDO apt-get update -q >>"$log" 2>&1 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium chromium-driver >>"$log" 2>&1; }; }; then
    echo "browser test: installing Debian's chromium and chromium-driver failed (last lines below); the browser test will be skipped"
    tail -5 "$log"
fi
rm -f "$log"
exit 0
