#!/usr/bin/env bash
# Installs what the C# client's tests (python/tests/test_bridge.py, games/external/Bridge.cs)
# need and is not in .venv: Mono's C# compiler and runtime (Debian's mono-mcs, mono-runtime),
# from the package registry, when they are missing. Run by tests/run. Where they cannot be
# installed (no apt-get, no root or sudo, no registry), it says so in one line and leaves those
# tests to skip; it never fails the test command by itself.
set -uo pipefail
if command -v mcs >/dev/null 2>&1 && command -v mono >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "C# client: no apt-get here to install Mono; its tests will be skipped"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "C# client: not root and no password-less sudo to install Mono; its tests will be skipped"
        exit 0
    fi
fi
packages="mono-mcs mono-runtime"
log="$(mktemp)"
if ! { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $packages >"$log" 2>&1 \
       || { $SUDO apt-get update -q >>"$log" 2>&1 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $packages >>"$log" 2>&1; }; }; then
    echo "C# client: installing Debian's mono-mcs and mono-runtime failed (last lines below); its tests will be skipped"
    tail -5 "$log"
fi
rm -f "$log"
exit 0
