#!/usr/bin/env bash
# Installs what the browser test (python/tests/test_browser.py) needs and is not in .venv:
# Debian's Chromium and ChromeDriver, from the package registry, when they are missing. Run by
# tests/run; where they cannot be installed it says so and the browser test skips.
exec bash "$(dirname "$0")/apt-setup.sh" "browser test" "chromium chromedriver" chromium chromium-driver
