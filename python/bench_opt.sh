#!/usr/bin/env bash
# The single-target comparison with nevergrad and pycma (python/bench_opt.py). Sets itself up:
# .venv by python/setup.sh, then nevergrad, pycma and their pinned dependencies
# (python/requirements-bench-opt.txt). Arguments go to bench_opt.py, e.g.
#   bash python/bench_opt.sh configs/hexmage_balance.toml --seeds 1 2 3 4 5 6 7 8 9 10
set -euo pipefail
cd "$(dirname "$0")/.."
bash python/setup.sh
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r python/requirements-bench-opt.txt
exec .venv/bin/python python/bench_opt.py "$@"
