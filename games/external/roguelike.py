#!/usr/bin/env python3
"""A roguelike floor, a game of its own in plain Python that playforge plays over the bridge
(docs/bridge.md). Its WGDL twin is games/external/roguelike.wgdl: the same rules, the same
options in the same order, so that the prefix-tree search finds the same best scores on both.

The hero crosses a floor of ``rooms`` rooms in a row. Each room holds a monster of power
``p = danger + (s + 3·i) mod 4 + 1`` guarding ``p + (s + i) mod 3`` gold, where ``i`` is the
room (from 0) and ``s`` the episode's seed modulo 1000 (the floor's layout). In each room the
hero chooses, among the options it has, in this order:

- **fight**: lose ``p`` hit points; if still standing, take the gold and go on to the next room;
- **sneak** (while sneaks are left): go on to the next room, leaving the gold;
- **drink** (while potions are left): gain 4 hit points and stay.

The floor ends when the hero leaves the last room (score ``2·gold + hp``) or falls (score
``gold``). Measures: ``turns`` (decisions), ``gold``, ``hp`` (left), ``escaped`` (1 or 0),
``fights`` (won).

Play styles restrict the options: ``brave`` never sneaks, ``hoarder`` never drinks.
Design variants: ``regular`` (5 rooms, danger 0, 2 potions, 1 sneak, 12 hp), ``deep`` (8 rooms,
danger 1, 3 potions, 2 sneaks, 14 hp). Declared parameters override a variant's values.

Run by playforge (``command = ["python3", "roguelike.py"]`` in a config beside the game), or
by hand with ``--seed N`` to play it at the terminal.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "playforge"))
import bridge  # noqa: E402  (python/playforge/bridge.py: standard library only)

PARAMS = [
    {"name": "rooms", "min": 2, "max": 8, "integer": True},
    {"name": "danger", "min": 0, "max": 4, "integer": True},
    {"name": "potions", "min": 0, "max": 4, "integer": True},
    {"name": "sneaks", "min": 0, "max": 3, "integer": True},
    {"name": "hp", "min": 3, "max": 20, "integer": True},
]
VARIANTS = {
    "regular": {"rooms": 5, "danger": 0, "potions": 2, "sneaks": 1, "hp": 12},
    "deep": {"rooms": 8, "danger": 1, "potions": 3, "sneaks": 2, "hp": 14},
}
STYLES = ["unrestricted", "brave", "hoarder"]
MEASURES = ["turns", "gold", "hp", "escaped", "fights"]


def play(seed, settings, select):
    """One floor; ``select(n, labels)`` makes each decision. Returns (score, measures)."""
    values = dict(VARIANTS[settings.get("variant") or "regular"])
    for name, v in (settings.get("params") or {}).items():
        values[name] = int(v)
    style = settings.get("style") or "unrestricted"
    s = seed % 1000
    room, hp, gold, potions, sneaks = 0, values["hp"], 0, values["potions"], values["sneaks"]
    turns = fights = 0
    while room < values["rooms"] and hp > 0:
        power = values["danger"] + (s + 3 * room) % 4 + 1
        loot = power + (s + room) % 3
        options = ["fight"]
        if sneaks > 0 and style != "brave":
            options.append("sneak")
        if potions > 0 and style != "hoarder":
            options.append("drink")
        move = options[select(len(options), options)]
        turns += 1
        if move == "fight":
            hp -= power
            if hp > 0:
                gold += loot
                fights += 1
                room += 1
        elif move == "sneak":
            sneaks -= 1
            room += 1
        else:
            potions -= 1
            hp += 4
    escaped = hp > 0
    score = 2 * gold + hp if escaped else gold
    return score, {"turns": turns, "gold": gold, "hp": max(hp, 0), "escaped": int(escaped), "fights": fights}


def main():
    try:
        game = bridge.connect("roguelike", params=PARAMS, measures=MEASURES, styles=STYLES, variants=list(VARIANTS))
    except bridge.NoDriver:
        seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1

        def ask(n, labels):
            while True:
                answer = input(f"{' / '.join(f'{k}: {l}' for k, l in enumerate(labels))}? ")
                if answer.isdigit() and int(answer) < n:
                    return int(answer)

        score, measures = play(seed, {}, ask)
        print(f"score {score}: {measures}")
        return
    try:
        for episode in game.episodes():
            score, measures = play(episode.seed, episode.settings, lambda n, labels: episode.select(n, labels=labels))
            episode.outcome(score, **measures)
    except bridge.ExperimentFinished:
        pass


if __name__ == "__main__":
    main()
