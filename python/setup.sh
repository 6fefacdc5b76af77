#!/usr/bin/env bash
# Sets up .venv at the repository root: the pinned tools of python/requirements.txt and the
# playforge package built from this checkout (the Rust extension with cargo feature `python`,
# by maturin, editable: python/playforge/ is used in place). Idempotent and quick when nothing
# changed; the README's test command runs it. Then: `.venv/bin/playforge …`,
# `.venv/bin/python -m playforge …`, or `cargo run --release -- … --ray local` (which hands the
# command to .venv's Python).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r python/requirements.txt
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin develop --release --quiet
.venv/bin/python -c "import playforge, ray, pettingzoo, gymnasium, pyspiel; print(f'playforge {playforge.__version__} with Ray {ray.__version__}, OpenSpiel, PettingZoo {pettingzoo.__version__}, Gymnasium {gymnasium.__version__} in .venv')"
