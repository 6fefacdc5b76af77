"""The doors' speed bench (docs/doors.md, "Speed"): uniformly random games played by a Python
loop — ``legal_actions``, a random choice, ``apply_action``, ``is_terminal`` — through
``playforge.openspiel`` and through pyspiel's own C++ games, in one run, alternating rounds so
that both see the same machine. Prints games/s, moves/s and the ratio; not a test.

    .venv/bin/python python/bench_doors.py [--seconds 3] [--rounds 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import pyspiel

import playforge.openspiel as pos

ROOT = Path(__file__).resolve().parents[1]

# (label, playforge game file, pyspiel's game of the same rules)
PAIRS = [
    ("connect four (WGDL)", ROOT / "games" / "connect_four.wgdl", "connect_four"),
    ("tic-tac-toe (WGDL)", ROOT / "games" / "tictactoe.wgdl", "tic_tac_toe"),
    ("tic-tac-toe (GDL)", ROOT / "games" / "gdl" / "tictactoe.kif", "tic_tac_toe"),
    ("connect four (GDL)", ROOT / "games" / "gdl" / "connect_four.kif", "connect_four"),
]


def loop(game, seconds: float, seed: int):
    """Random games for about `seconds`: (games, moves, elapsed)."""
    rng = random.Random(seed)
    choice = rng.choice
    games = moves = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
            moves += 1
        games += 1
        if games % 64 == 0 and time.perf_counter() > deadline:
            break
    return games, moves, time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="time per round and side (default 2)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds per pair; the median is reported (default 5)")
    ap.add_argument("--only", default="", help="run only the pairs whose label contains this text")
    args = ap.parse_args(argv)
    print(f"{'game':<22} {'playforge games/s':>18} {'pyspiel games/s':>16} {'moves/s (pf)':>13} {'ratio':>6}")
    for label, path, name in PAIRS:
        if args.only and args.only not in label:
            continue
        ours, theirs = pos.load_game(str(path)), pyspiel.load_game(name)
        rates_ours, rates_theirs, mps = [], [], []
        for r in range(args.rounds):
            g, m, t = loop(ours, args.seconds, r)
            rates_ours.append(g / t)
            mps.append(m / t)
            g, _, t = loop(theirs, args.seconds, r)
            rates_theirs.append(g / t)
        a, b = statistics.median(rates_ours), statistics.median(rates_theirs)
        print(f"{label:<22} {a:>18,.0f} {b:>16,.0f} {statistics.median(mps):>13,.0f} {a / b:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
