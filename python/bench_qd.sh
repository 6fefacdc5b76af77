#!/usr/bin/env bash
# The quality-diversity comparison with pyribs (python/bench_qd.py; figures in docs/results.md,
# "Against pyribs"). Sets itself up: .venv by python/setup.sh, then pyribs and its pinned
# dependencies (python/requirements-bench.txt). Arguments go to bench_qd.py, e.g.
#   bash python/bench_qd.sh configs/generate_hex_map.toml --evaluations 6000 --seeds 1 2 3
set -euo pipefail
cd "$(dirname "$0")/.."
bash python/setup.sh
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r python/requirements-bench.txt
exec .venv/bin/python python/bench_qd.py "$@"
