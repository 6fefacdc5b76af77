"""Shared helpers of the Python tests: the repository root, the outputs of a run folder (what
must be byte-identical between two runs), and a `playforge` command run in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Files that say how a run ran, not what it computed (wall clock, executor, bookkeeping).
BOOKKEEPING = {"timing.csv", "executor.txt", "checkpoint.json", ".lock", ".playforge"}


def outputs(folder: Path) -> Dict[str, bytes]:
    """Every output file under ``folder`` (relative path → bytes), bookkeeping left out."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name not in BOOKKEEPING and ".tmp" not in p.name:
            out[str(p.relative_to(folder))] = p.read_bytes()
    return out


def playforge(args: List[str], **kw) -> subprocess.CompletedProcess:
    """``python -m playforge ARGS`` in the repository root, checked."""
    return subprocess.run([sys.executable, "-m", "playforge", *args], cwd=ROOT, check=True, capture_output=True, text=True, **kw)


def ray_or_skip():
    """Ray, or a skip — a failure when the test command asked for Ray (PLAYFORGE_REQUIRE_RAY=1)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("PLAYFORGE_REQUIRE_RAY") == "1":
            pytest.fail("Ray is not installed, but PLAYFORGE_REQUIRE_RAY=1 (bash python/setup.sh installs it)")
        pytest.skip("Ray is not installed (pip install 'playforge[ray]')")
