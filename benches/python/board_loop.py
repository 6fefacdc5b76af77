"""Random games of a board game in a Python loop, for the `board` section of the speed table
(`cargo bench --bench speed -- board`).

    python benches/python/board_loop.py playforge GAME.wgdl [NAME=VALUE ...] --seconds S
        The game through playforge's OpenSpiel door (playforge.openspiel.load_game, declared
        parameters set by NAME=VALUE, e.g. rules.size=5).
    python benches/python/board_loop.py pyspiel GAME --seconds S
        pyspiel's own game (pyspiel.load_game(GAME), e.g. `hex(board_size=5)`).

The same loop on both: from the initial state, at a chance node an outcome drawn by its
probability from `chance_outcomes()`, else a uniform `random.choice(legal_actions())`, then
`apply_action`, until `is_terminal()`. Prints {"games_per_s", "moves_per_s", "mean_moves"} as
JSON (a chance outcome counts as a move, as in OpenSpiel's history).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load(which: str, game: str, params: list[str]):
    if which == "playforge":
        import playforge.openspiel

        values = {}
        for p in params:
            name, _, value = p.partition("=")
            values[name] = float(value)
        return playforge.openspiel.load_game(str(ROOT / game), values)
    import pyspiel

    return pyspiel.load_game(game)


def loop(game, seconds: float) -> dict:
    rng = random.Random(1)
    games = moves = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    actions, probs = zip(*s.chance_outcomes())
                    a = rng.choices(actions, probs)[0]
                else:
                    a = rng.choice(s.legal_actions())
                s.apply_action(a)
                moves += 1
            games += 1
    dt = time.perf_counter() - t0
    return {"games_per_s": games / dt, "moves_per_s": moves / dt, "mean_moves": moves / games}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", choices=["playforge", "pyspiel"])
    ap.add_argument("game")
    ap.add_argument("params", nargs="*", help="NAME=VALUE declared parameters (playforge only)")
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    print(json.dumps(loop(load(args.which, args.game, args.params), args.seconds)))


if __name__ == "__main__":
    main()
