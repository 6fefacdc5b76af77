"""OpenSpiel's door: any WGDL game, and any GDL description that grounds, as a real
``pyspiel.Game`` (``pip install 'playforge[openspiel]'``)::

    import pyspiel
    import playforge.openspiel                       # registers the game "playforge"
    game = pyspiel.load_game("playforge", {"path": "games/connect_four.wgdl"})
    game = playforge.openspiel.load_game("games/hex_arena.wgdl", params={"red1.maxHp": 40})

Every move is played by playforge's interpreter (or GDL reasoner) in Rust; this module only
declares the game to OpenSpiel. The stable action index, the observation tensor and the
returns are documented in docs/doors.md.

**Speed.** A state's most-asked methods (``legal_actions``, ``apply_action``, ``is_terminal``,
``current_player``, ``returns``, ``is_chance_node``, ``is_simultaneous_node``) are the Rust
state's own, set on each Python state, so that a Python caller makes one call into Rust per
question. pyspiel's C++ side reaches the same
Rust state through the overridable methods (``_legal_actions``, ``_apply_action``, …).
pyspiel's C++ ``History()`` of a state only sees the moves applied through C++; ``history()``
from Python sees every move.

Game parameters (``pyspiel.load_game("playforge", {...})``): ``path`` (required), ``seed``
(the chance stream of the k-th new initial state is ``derive(seed, 0, 0, k)``; games that do
not draw ignore it), ``parameters`` (``"red1.maxHp:40;red1.maxAp:10"``), ``turn_order``,
``overlays`` (``"a;b"``), ``objects`` (room per created description, default 64), ``reward``
(a one-player WGDL game's value whose change is each move's reward: reward model ``REWARDS``),
``simultaneous`` (GDL: ``auto``, ``true`` or ``false``).
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Iterable, List, Mapping, Optional

import numpy as np
import pyspiel

from . import _core

__all__ = ["load_game", "PlayforgeGame", "PlayforgeState", "SHORT_NAME"]

SHORT_NAME = "playforge"

_DEFAULTS: Dict[str, Any] = {
    "path": "",
    "seed": 0,
    "parameters": "",
    "turn_order": "",
    "overlays": "",
    "objects": 64,
    "reward": "",
    "simultaneous": "auto",
}

_T = pyspiel.GameType


def _game_type(core: "_core.DoorGame") -> pyspiel.GameType:
    n = len(core.players)
    return pyspiel.GameType(
        short_name=SHORT_NAME,
        long_name=f"playforge {core.language.upper()} game {core.path}",
        dynamics=_T.Dynamics.SIMULTANEOUS if core.simultaneous else _T.Dynamics.SEQUENTIAL,
        # Chance nodes with their probabilities (WGDL `byChance`), else a game's own seeded draws.
        chance_mode=(
            _T.ChanceMode.EXPLICIT_STOCHASTIC
            if core.max_chance_outcomes
            else _T.ChanceMode.SAMPLED_STOCHASTIC
            if core.stochastic
            else _T.ChanceMode.DETERMINISTIC
        ),
        information=_T.Information.PERFECT_INFORMATION,
        utility=_T.Utility.ZERO_SUM if core.utility == "zero_sum" else _T.Utility.GENERAL_SUM,
        reward_model=_T.RewardModel.REWARDS if core.rewards else _T.RewardModel.TERMINAL,
        max_num_players=n,
        min_num_players=n,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_DEFAULTS,
    )


def _pairs(text: str) -> List[tuple]:
    """``"a.b:1;c.d:2.5"`` as [("a.b", 1.0), ("c.d", 2.5)] (not ``,`` nor ``=``: OpenSpiel's
    game strings, ``playforge(parameters=…,path=…)``, use those)."""
    out = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        name, colon, value = item.partition(":")
        if not colon:
            raise ValueError(f"parameters: {item!r}; expected name:value (e.g. red1.maxHp:40)")
        try:
            out.append((name.strip(), float(value)))
        except ValueError:
            raise ValueError(f"parameters: {item!r}; expected a number after ':'") from None
    return out


def _open(params: Mapping[str, Any]) -> "_core.DoorGame":
    unknown = sorted(set(params) - set(_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown game parameter(s) {unknown}; expected some of {sorted(_DEFAULTS)}")
    p = {**_DEFAULTS, **params}
    if not p["path"]:
        raise ValueError('the game parameter "path" is required: a .wgdl game or a .kif GDL description')
    sim = str(p["simultaneous"]).lower()
    if sim not in ("auto", "true", "false"):
        raise ValueError(f'simultaneous={p["simultaneous"]!r}; expected "auto", "true" or "false"')
    return _core.open_door(
        str(p["path"]),
        params=_pairs(str(p["parameters"])),
        turn_order=p["turn_order"] or None,
        overlays=[s.strip() for s in str(p["overlays"]).split(";") if s.strip()],
        objects=int(p["objects"]),
        reward=p["reward"] or None,
        simultaneous=None if sim == "auto" else sim == "true",
    )


class PlayforgeGame(pyspiel.Game):
    """A playforge game as OpenSpiel sees one (``pyspiel.load_game("playforge", {...})``)."""

    def __init__(self, params: Optional[Mapping[str, Any]] = None):
        params = dict(params or {})
        core = _open(params)
        full = {**_DEFAULTS, **params}
        n = len(core.players)
        info = pyspiel.GameInfo(
            num_distinct_actions=core.num_distinct_actions,
            # Chance's actions are numbers of the one action space.
            max_chance_outcomes=core.num_distinct_actions if core.max_chance_outcomes else 0,
            num_players=n,
            min_utility=core.min_utility,
            max_utility=core.max_utility,
            utility_sum=0.0 if core.utility == "zero_sum" else None,
            max_game_length=core.max_game_length,
        )
        super().__init__(_game_type(core), info, full)
        self.core = core
        self._params = full
        self._seed = int(full["seed"])
        self._made = 0

    def __reduce__(self):
        """Pickled as its game parameters."""
        return (PlayforgeGame, (self._params,))

    def __deepcopy__(self, memo: Any) -> "PlayforgeGame":
        """A game is immutable: a copy is the game itself (pyspiel's C++ Clone deep-copies a
        state's attributes, the game among them)."""
        return self

    def __copy__(self) -> "PlayforgeGame":
        return self

    def new_initial_state(self, seed: Optional[int] = None) -> "PlayforgeState":
        """A start state. A game that draws starts its k-th state's stream at
        ``derive(seed, 0, 0, k)``; ``seed`` given here starts this one's at ``seed``."""
        if seed is None:
            seed = _core.derive(self._seed, 0, 0, self._made) if self.core.stochastic else 0
            self._made += 1
        return PlayforgeState(self, self.core.new_initial_state(seed), seed)

    def observation_tensor_shape(self) -> List[int]:
        return [self.core.observation_len]

    def observation_tensor_size(self) -> int:
        return self.core.observation_len

    def make_py_observer(self, iig_obs_type=None, params=None) -> "_Observer":
        """An observer for ``open_spiel.python.observation.make_observation``."""
        return _Observer(self.core.observation_len)

    @property
    def player_names(self) -> List[str]:
        """The players' names in the game file (WGDL sides, GDL roles)."""
        return list(self.core.players)


#: What a state answers straight from Rust (module doc, "Speed").
_FAST = ("legal_actions", "apply_action", "is_chance_node", "is_simultaneous_node", "current_player", "is_terminal", "returns")


def _bind(d: Dict[str, Any], core: "_core.DoorState") -> None:
    """Sets a state's Rust state and its fast methods (one call into Rust per question). Names
    pybind11 also looks up on behalf of C++ callers (current_player, is_terminal, returns) are
    wrapped, so that it takes them for overrides rather than for its own built-in methods."""
    d["_s"] = core
    d["legal_actions"] = core.legal_actions
    d["apply_action"] = core.apply_action
    d["is_chance_node"] = core.is_chance_node
    d["is_simultaneous_node"] = core.is_simultaneous_node
    d["current_player"] = functools.partial(core.current_player)
    d["is_terminal"] = functools.partial(core.is_terminal)
    d["returns"] = functools.partial(core.returns)


class PlayforgeState(pyspiel.State):
    """A state; its hot methods are the Rust state's own (module doc, "Speed")."""

    def __init__(self, game: PlayforgeGame, core: "_core.DoorState", seed: int = 0):
        super().__init__(game)
        d = self.__dict__
        d["_game"] = game
        d["_seed"] = seed
        _bind(d, core)

    def __setattr__(self, name: str, value: Any) -> None:
        # pyspiel's C++ Clone sets every attribute of the original on a new state, deep-copied:
        # the Rust state is copied, and the fast methods are bound again to the copy (a
        # deep-copied built-in method would still be the original's).
        if name == "_s":
            _bind(self.__dict__, value)
        elif name not in _FAST:
            super().__setattr__(name, value)

    # What pyspiel's C++ side calls (and the defaults behind the fast attributes above).
    def current_player(self) -> int:  # type: ignore[override]
        return self._s.current_player()

    def is_terminal(self) -> bool:  # type: ignore[override]
        return self._s.is_terminal()

    def returns(self) -> List[float]:  # type: ignore[override]
        return self._s.returns()

    def rewards(self) -> List[float]:  # type: ignore[override]
        return self._s.rewards()

    def legal_actions_mask(self, player: Optional[int] = None) -> List[int]:  # type: ignore[override]
        return self._s.legal_actions_mask(player)

    def apply_actions(self, actions: List[int]) -> None:  # type: ignore[override]
        self._s.apply_actions(list(actions))

    def is_player_node(self) -> bool:  # type: ignore[override]
        return self._s.is_player_node()

    def action_to_string(self, a: int, b: Optional[int] = None) -> str:  # type: ignore[override]
        """``action_to_string(action)`` for the player to move, or ``(player, action)``."""
        return self._s.action_to_string(a, b)

    def history(self) -> List[int]:  # type: ignore[override]
        return self._s.history()

    def move_number(self) -> int:  # type: ignore[override]
        return self._s.move_number()

    def player_return(self, player: int) -> float:  # type: ignore[override]
        return self._s.player_return(player)

    def player_reward(self, player: int) -> float:  # type: ignore[override]
        return self._s.player_reward(player)

    def _legal_actions(self, player: int) -> List[int]:
        return self._s.legal_actions(player)

    def _apply_action(self, action: int) -> None:
        self._s.apply_action(action)

    def _apply_actions(self, actions: List[int]) -> None:
        self._s.apply_actions(list(actions))

    def _action_to_string(self, player: int, action: int) -> str:
        return self._s.action_to_string(player, action)

    def chance_outcomes(self) -> List[tuple]:
        return self._s.chance_outcomes()

    def history_str(self) -> str:
        return ", ".join(str(a) for a in self._s.history())

    def observation_tensor(self, player: Optional[int] = None) -> List[float]:  # type: ignore[override]
        return self._s.observation_tensor(player)

    def observation_string(self, player: Optional[int] = None) -> str:  # type: ignore[override]
        return self._s.observation_string(player)

    def information_state_string(self, player: Optional[int] = None) -> str:  # type: ignore[override]
        return self._s.information_state_string(player)

    def status(self) -> str:
        """Why the game is over or ``running`` (``won:<player>``, ``draw``, ``turn-limit`` …)."""
        return self._s.status()

    def truncated(self) -> bool:
        """The game stopped at a turn or step limit rather than by its rules."""
        return self._s.truncated()

    def clone(self) -> "PlayforgeState":  # type: ignore[override]
        return PlayforgeState(self._game, self._s.clone(), self._seed)

    def __deepcopy__(self, memo: Any) -> "PlayforgeState":
        return self.clone()

    def __copy__(self) -> "PlayforgeState":
        return self.clone()

    def __str__(self) -> str:
        return str(self._s)

    def __reduce__(self):
        """Pickled as its game, chance seed and moves; unpickled by playing them again."""
        return (_restore_state, (self._game, self._seed, self._s.history()))


def _restore_state(game: PlayforgeGame, seed: int, history: List[int]) -> PlayforgeState:
    state = game.new_initial_state(seed)
    at = 0
    while at < len(history):
        if state.is_simultaneous_node():
            n = game.num_players()
            state.apply_actions(history[at : at + n])
            at += n
        else:
            state.apply_action(history[at])
            at += 1
    return state


class _Observer:
    """The flat observation tensor (docs/doors.md) for OpenSpiel's observation API."""

    def __init__(self, size: int):
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: PlayforgeState, player: int) -> None:
        self.tensor[:] = state._s.observation_tensor(player)

    def string_from(self, state: PlayforgeState, player: int) -> str:
        return state._s.observation_string(player)


def load_game(
    path: str,
    params: Optional[Mapping[str, float]] = None,
    *,
    seed: int = 0,
    reward: Optional[str] = None,
    objects: int = 64,
    turn_order: Optional[str] = None,
    overlays: Iterable[str] = (),
    simultaneous: Optional[bool] = None,
) -> PlayforgeGame:
    """Opens a game as a ``pyspiel.Game``; ``params`` sets WGDL parameters by name
    (``{"red1.maxHp": 40}``). The other arguments are the game parameters of the module doc."""
    game_params: Dict[str, Any] = {
        "path": str(path),
        "seed": int(seed),
        "parameters": ";".join(f"{k}:{float(v)!r}" for k, v in (params or {}).items()),
        "turn_order": turn_order or "",
        "overlays": ";".join(overlays),
        "objects": int(objects),
        "reward": reward or "",
        "simultaneous": "auto" if simultaneous is None else str(bool(simultaneous)).lower(),
    }
    return PlayforgeGame(game_params)


def _register() -> None:
    game_type = pyspiel.GameType(
        short_name=SHORT_NAME,
        long_name="playforge: a WGDL or GDL game file (game parameter path)",
        dynamics=_T.Dynamics.SEQUENTIAL,
        chance_mode=_T.ChanceMode.SAMPLED_STOCHASTIC,
        information=_T.Information.PERFECT_INFORMATION,
        utility=_T.Utility.GENERAL_SUM,
        reward_model=_T.RewardModel.TERMINAL,
        max_num_players=16,
        min_num_players=1,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_DEFAULTS,
    )
    if SHORT_NAME not in pyspiel.registered_names():
        pyspiel.register_game(game_type, PlayforgeGame)


_register()
