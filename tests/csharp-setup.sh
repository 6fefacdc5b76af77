#!/usr/bin/env bash
# Installs what the C# client's tests (python/tests/test_bridge.py, games/external/Bridge.cs)
# need and is not in .venv: Mono's C# compiler and runtime (Debian's mono-mcs, mono-runtime),
# from the package registry, when they are missing. Run by tests/run; where they cannot be
# installed it says so and those tests skip.
exec bash "$(dirname "$0")/apt-setup.sh" "C# client" "mcs mono" mono-mcs mono-runtime
