"""playforge: machine playtesting and balancing of games written in WGDL.

The game API follows pyspiel's::

    import playforge
    game = playforge.load_game("games/connect_four.wgdl")
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    print(state.returns())

The same games as OpenSpiel games, PettingZoo and Gymnasium environments (docs/doors.md):
``playforge.openspiel``, ``playforge.pettingzoo``, ``playforge.gymnasium`` (imported on their
own; each needs its framework: ``pip install 'playforge[openspiel]'`` …).

Every command of the command line runs as ``python -m playforge …`` (or the ``playforge``
script this package installs); ``--ray ADDRESS`` runs a command's games on a Ray cluster
(``pip install 'playforge[ray]'``). Errors raise ``ValueError`` (bad input, with the
``file:line:column`` of the command line's messages) or ``RuntimeError`` (a game's runtime error).
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import numpy as np

from . import _core
from ._core import Rng, State, __version__, derive, job_kinds, run_batch

__all__ = ["Game", "State", "Parameters", "Bot", "Balance", "Generate", "Personas", "Rng", "derive", "load_game", "main", "run_batch", "job_kinds", "__version__"]


class Parameters(NamedTuple):
    """A game's declared parameters, in declaration order."""

    names: List[str]
    low: np.ndarray
    high: np.ndarray
    integer: np.ndarray
    values: np.ndarray


class Game:
    """A compiled WGDL game (``load_game``)."""

    def __init__(self, core: "_core.Game"):
        self._core = core

    @property
    def path(self) -> str:
        return self._core.path

    @property
    def players(self) -> List[str]:
        return self._core.players

    def num_players(self) -> int:
        return self._core.num_players()

    @property
    def parameters(self) -> Parameters:
        """Names, ranges and current values of the declared ``parameter`` lines."""
        table = self._core.parameter_table()
        return Parameters(
            names=[t[0] for t in table],
            low=np.array([t[1] for t in table], dtype=float),
            high=np.array([t[2] for t in table], dtype=float),
            integer=np.array([t[3] for t in table], dtype=bool),
            values=np.array([t[4] for t in table], dtype=float),
        )

    def with_parameters(self, values: Sequence[float]) -> "Game":
        """The same game with every declared parameter set (an array in declaration order);
        a value outside its declared range raises ``ValueError``."""
        return Game(self._core.with_parameter_values([float(v) for v in np.asarray(values, dtype=float).ravel()]))

    def new_initial_state(self, seed: int = 0) -> State:
        """The start state; ``seed`` starts the game's own chance stream."""
        return self._core.new_initial_state(seed)

    def random_playout(self, seed: int, chance_seed: int = 0, max_moves: int = 1_000_000) -> List[str]:
        """One uniformly random game as ``playforge run GAME --random MAX --seed SEED`` plays it:
        the names of its moves."""
        return self._core.random_playout(seed, chance_seed, max_moves)

    def random_playouts(self, n: int, seed: int) -> int:
        """``n`` uniformly random games played in Rust; returns the moves played."""
        return self._core.random_playouts(n, seed)

    def __repr__(self) -> str:
        return f"<playforge.Game {self.path}>"


class Bot:
    """An AI player, configured with the keys of the command line's ``[[ai]]`` tables::

        mcts = playforge.Bot(game, "MCTS", kind="mcts", iterations=100, playout="greedy",
                             fallback="rule", fallback_below=0.2)
        rule = playforge.Bot(game, "Rule", kind="policy", policy="rule")
        rng = playforge.Rng(seed, 1)          # the stream a tournament game draws from
        action = mcts.step(state, rng)

    ``kind`` is ``mcts``, ``policy`` (``policy``: a WGDL policy's name) or ``random``. MCTS keys:
    ``iterations``, ``formula`` (``ucb1`` (default), ``ucb_tuned1``, ``ucb_tuned2``, ``sp_mcts``,
    ``ucb_for_sp``, or a formula's text such as an evolved persona's best_formula.txt line),
    ``c``, ``d``, ``w`` (the named formulas' constants), ``final_choice`` (``best_mean``,
    ``most_visited``, ``formula``), the enhancements ``full_expansion``, ``widening``,
    ``duplicate_detection`` and ``cut_off``, ``playout`` (a policy for playouts), ``fallback``
    and ``fallback_below``, and ``max_playout_moves``::

        persona = playforge.Bot(game, "MaxS", kind="mcts", iterations=250, full_expansion=True,
                                formula=open("best_formula.txt").readline().strip(),
                                final_choice="formula")"""

    def __init__(self, game: Game, name: str, **config):
        import json

        self._core = _core.Bot(game._core, json.dumps({"name": name, **config}))

    @property
    def name(self) -> str:
        return self._core.name

    def step(self, state: State, rng: Rng) -> int:
        """The bot's move in ``state`` (an action of ``state.legal_actions()``)."""
        return self._core.step(state, rng)


class _AskTell:
    """What every ask/tell run shares: ``load`` resumes, ``ask`` asks, ``evaluate`` is the
    built-in evaluation, ``result`` and ``save`` read the run's outcome and checkpoint."""

    _core: object
    _request: Optional[Any] = None

    @classmethod
    def load(cls, config: str, **kw):
        """Resumes the run of ``config`` from the checkpoint in its folder."""
        return cls(config, resume=True, **kw)

    def ask(self) -> Optional[Any]:
        """The next request (a dict; Personas: a list of games), or ``None`` once the run is over."""
        import json

        text = self._core.ask()
        self._request = None if text is None else json.loads(text)
        return self._request

    def evaluate(self, request: Optional[Any] = None) -> List[dict]:
        """The built-in evaluation of ``request`` (default: the last one asked)."""
        import json

        req = self._request if request is None else request
        if req is None:
            raise ValueError("nothing to evaluate; expected ask() first")
        return json.loads(self._core.evaluate(json.dumps(req)))

    def result(self) -> Optional[Any]:
        """The run's outcome once ``ask()`` returned ``None``, else ``None``."""
        import json

        text = self._core.result()
        return None if text is None else json.loads(text)

    def save(self) -> str:
        """The checkpoint the run writes after every iteration (``load`` resumes from it)."""
        import os

        return os.path.join(self._core.dir(), "checkpoint.json")


class Balance(_AskTell):
    """A balance run (``playforge balance CONFIG``) driven by ask and tell::

        run = playforge.Balance("configs/hexmage_balance.toml", seed=1)
        while (request := run.ask()) is not None:
            # request["candidates"]: each with "dna" (the full DNA in [0, 1]), "values"
            # ({parameter: value}) and "who" (the stream tag of its games);
            # request["confirm"]: whether it is the re-evaluation of an iteration's best.
            run.tell([my_fitness(c["values"]) for c in request["candidates"]])
        print(run.result()["best"])

    ``tell`` takes a fitness F per candidate (a float) or an evaluation (a dict with ``f`` and
    optionally the terms ``balance``, ``length``, ``difference``, ``wins_term``, ``mean_turns``,
    ``all_played``, ``wins``, ``draws``, ``games``). ``evaluate(request)`` is the built-in
    evaluation (the games the command line plays): telling it back gives the command line's run,
    file for file. The run writes its folder as the command does; its checkpoint is saved after
    every iteration (``save()`` names it) and ``Balance.load(config)`` resumes from it.
    Under ``[evaluation] confirm = "sequential"`` the confirmations are never asked: they pool
    their games, so the run plays them itself with the built-in evaluation (its checkpoint's
    ``games_played`` counts them)."""

    def __init__(self, config: str, seed: Optional[int] = None, optimizer: Optional[str] = None, out: Optional[str] = None, resume: bool = False):
        self._core = _core.Run.balance(str(config), seed, optimizer, None if out is None else str(out), resume)
        self._request: Optional[dict] = None

    def tell(self, evaluations: Sequence) -> None:
        import json

        evals = []
        for e in evaluations:
            if isinstance(e, dict):
                full = {"f": 0.0, "balance": 0.0, "length": 0.0, "difference": 0.0, "wins_term": 0.0, "mean_turns": 0.0, "all_played": True, "wins": [0, 0], "draws": 0, "games": 0}
                full.update(e)
                evals.append(full)
            else:
                evals.append({"f": float(e), "balance": 0.0, "length": 0.0, "difference": 0.0, "wins_term": 0.0, "mean_turns": 0.0, "all_played": True, "wins": [0, 0], "draws": 0, "games": 0})
        self._core.tell(json.dumps(evals))


class Generate(_AskTell):
    """A generate run (``playforge generate CONFIG``) driven by ask and tell::

        run = playforge.Generate("configs/generate_hex_map.toml", evaluations=400)
        while (request := run.ask()) is not None:
            # request["candidates"]: each with "genes" (in [0, 1], in the order of
            # run.gene_names()), "values" ([parameter, value] pairs) and "who" (its games' stream
            # tag); request["confirm"]: whether it is a confirmation on fresh seeds.
            run.tell(run.evaluate())            # or evaluations of your own
        print(run.result()["qd_score"])

    ``tell`` takes per candidate a quality (a float: feasible, no descriptors) or a dict with
    ``quality`` (or ``f``), ``feasible`` (default True), ``descriptors`` (a list of floats, one
    per ``[[descriptor]]``) and optionally ``measures`` (``[mean, se]`` per ``[[measure]]``) and
    ``violation`` (how far an infeasible candidate is from feasible, ≥ 0; a search on estimates
    ranks infeasible candidates by it).
    ``evaluate(request)`` is the built-in evaluation, the games the command line plays: telling
    it back gives the command line's run, file for file; each evaluation is a dict with ``f``
    (the quality), ``feasible``, ``why``, ``measures``, ``targets`` and ``descriptors`` (each
    ``{"mean", "se"}``), ``games`` and ``violation``. ``evaluate_genes(genes)`` evaluates
    genes of your own — how another optimizer (pyribs's schedulers, say) drives playforge's
    evaluation."""

    def __init__(self, config: str, seed: Optional[int] = None, algorithm: Optional[str] = None, evaluations: Optional[int] = None, out: Optional[str] = None, resume: bool = False):
        self._core = _core.Run.generate(str(config), seed, algorithm, evaluations, None if out is None else str(out), resume)
        self._request: Optional[dict] = None

    def gene_names(self) -> List[str]:
        return list(self._core.gene_names())

    def tell(self, evaluations: Sequence) -> None:
        import json

        evals = []
        for e in evaluations:
            if not isinstance(e, dict):
                e = {"quality": float(e)}
            if "measures" in e and e["measures"] and isinstance(e["measures"][0], dict):
                measures = e["measures"]
            else:
                measures = [{"mean": float(m[0]), "se": float(m[1])} for m in e.get("measures", [])]
            descriptors = [d if isinstance(d, dict) else {"mean": float(d), "se": 0.0} for d in e.get("descriptors", [])]
            evals.append({
                "f": float(e.get("quality", e.get("f", 0.0))),
                "feasible": bool(e.get("feasible", True)),
                "why": str(e.get("why", "")),
                "measures": measures,
                "targets": e.get("targets", []),
                "descriptors": descriptors,
                "games": int(e.get("games", 0)),
                "violation": float(e.get("violation", 0.0)),
            })
        self._core.tell(json.dumps(evals))

    def evaluate_genes(self, genes: Sequence[Sequence[float]], iteration: int = 0, games: Optional[int] = None, who: Optional[Sequence[int]] = None, confirm: bool = False) -> List[dict]:
        """The built-in evaluation of genes of your own (each a list in [0, 1], in the order of
        ``gene_names()``): ``games`` per table (default: the config's ``games``, or
        ``confirm_games`` with ``confirm``), on the streams (seed, ``iteration``, ``who[k]``,
        game) — the same ``who`` for every candidate (the default, 0) gives them common random
        numbers. ``confirm`` judges as a confirmation does (``certain`` requirements by their
        whole interval). Genes that break a constraint come back infeasible with no games
        (``why`` says so): other optimizers cannot know the constraints."""
        import json

        n = len(genes)
        width = len(self.gene_names())
        for x in genes:
            if len(x) != width or any(not (0.0 <= float(g) <= 1.0) for g in x):
                raise ValueError(f"genes of length {len(x)}; expected {width} genes, each in [0, 1] (gene_names())")
        tags = [0] * n if who is None else [int(w) for w in who]
        cands = [{"genes": [float(g) for g in x], "who": tags[k]} for k, x in enumerate(genes)]
        req = {"iteration": int(iteration), "confirm": bool(confirm), "games": int(games) if games is not None else 0, "candidates": cands}
        return json.loads(self._core.evaluate(json.dumps(req)))


class Personas(_AskTell):
    """A persona run (``playforge personas CONFIG``) driven by ask and tell::

        run = playforge.Personas("configs/personas_quick.toml", generations=2, only=["MaxS"])
        while (games := run.ask()) is not None:
            # each game: "persona" (its index), "agent" ("Random" or {"Mcts": {"formula": …,
            # "reward": …}}), "seed" (the chance seed), "stream" (the agent's stream)
            run.tell(run.evaluate())      # or results of your own: dicts of measure, score,
                                          # legal_moves, moves
        print(run.result())

    ``evaluate(games)`` is the built-in play; telling it back gives the command line's run, file
    for file. Checkpoints are written after every generation (``save()`` names the folder) and
    ``Personas.load(config)`` resumes."""

    def __init__(self, config: str, seed: Optional[int] = None, generations: Optional[int] = None, only: Optional[Sequence[str]] = None, out: Optional[str] = None, resume: bool = False):
        self._core = _core.Run.personas(str(config), seed, generations, None if only is None else list(only), None if out is None else str(out), resume)
        self._request: Optional[list] = None

    def tell(self, results: Sequence[dict]) -> None:
        import json

        self._core.tell(json.dumps([{"measure": float(r["measure"]), "score": float(r.get("score", 0.0)), "legal_moves": float(r.get("legal_moves", 0.0)), "moves": int(r.get("moves", 0))} for r in results]))

    def save(self) -> str:
        """The run's folder; each persona's checkpoint.json is written after every generation."""
        return self._core.dir()


def load_game(path: str, params: Optional[Dict[str, float]] = None, turn_order: Optional[str] = None) -> Game:
    """Loads a WGDL game. ``params`` sets declared parameters by name
    (``{"red1.maxHp": 40}``); ``turn_order`` is ``"grouped"`` or ``"alternating"``."""
    items = None if params is None else [(str(k), float(v)) for k, v in params.items()]
    return Game(_core.load_game(str(path), items, turn_order))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line (``argv`` without the program name; default ``sys.argv[1:]``) and
    returns its exit status. ``--ray ADDRESS`` works here."""
    from .__main__ import main as _main

    return _main(argv)
