#!/usr/bin/env bash
# Installs OpenSpiel (pinned) into benches/openspiel/.venv for the speed table's side-by-side
# Connect Four row (`cargo bench --bench speed`). Needs python3 with venv and the PyPI registry.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet "open_spiel==2.0.2"
.venv/bin/python -c "import pyspiel; print('OpenSpiel ready:', pyspiel.__file__)"
