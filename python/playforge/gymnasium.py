"""Gymnasium's door: a one-player WGDL game (match-3, Magic Land's economy …) as a Gymnasium
environment (``pip install 'playforge[gymnasium]'``)::

    import playforge.gymnasium as pg
    env = pg.make("games/match3.wgdl", reward="game.score")
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(info["action_mask"].argmax())

or ``gymnasium.make("playforge/Game-v0", path=…, reward=…)``. The observation is the flat
tensor of docs/doors.md (float32); actions are the stable action index (``Discrete``).
``info["action_mask"]`` (and ``env.action_masks()``, as maskable learners ask) marks the legal
ones. The reward after a move is the change of the chosen game value (``reward``: a WGDL value
such as ``game.score`` or ``global.coins``); without one, 1 when the game's last goal is
reached and 0 otherwise. A game stopped by a turn or step limit is *truncated*, one over by its
rules *terminated*. An illegal action ends the episode with ``illegal_reward`` (``illegal=
"terminate"``, the default, so that ``check_env``'s random actions are safe) or raises
``ValueError`` (``illegal="raise"``). ``reset(seed=…)`` seeds the game's own dice.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Optional

import gymnasium
import numpy as np
from gymnasium import spaces

from ._doors import open_game, render_text

__all__ = ["PlayforgeEnv", "make", "ENV_ID"]

ENV_ID = "playforge/Game-v0"


class PlayforgeEnv(gymnasium.Env):
    """A one-player playforge game as a Gymnasium environment."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        path: str,
        reward: Optional[str] = None,
        render_mode: Optional[str] = None,
        illegal: str = "terminate",
        illegal_reward: float = -1.0,
        params: Optional[Mapping[str, float]] = None,
        objects: int = 64,
        turn_order: Optional[str] = None,
        overlays: Iterable[str] = (),
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r}; expected one of {self.metadata['render_modes']}")
        if illegal not in ("terminate", "raise"):
            raise ValueError(f'illegal={illegal!r}; expected "terminate" or "raise"')
        self.game = open_game(path, params, objects, reward, turn_order, overlays)
        if len(self.game.players) != 1:
            raise ValueError(
                f"{path}: {len(self.game.players)} players ({', '.join(self.game.players)}); Gymnasium's door is for "
                "one-player games (use playforge.pettingzoo for this one)"
            )
        self.render_mode = render_mode
        self.illegal = illegal
        self.illegal_reward = float(illegal_reward)
        self.observation_space = spaces.Box(
            low=np.finfo(np.float32).min, high=np.finfo(np.float32).max, shape=(self.game.observation_len,), dtype=np.float32
        )
        self.action_space = spaces.Discrete(self.game.num_distinct_actions)
        self.state = None
        self._ended = False

    def _obs(self) -> np.ndarray:
        return np.asarray(self.state.observation_tensor(), dtype=np.float32)

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as booleans over the action space."""
        mask = np.zeros(self.game.num_distinct_actions, bool)
        mask[self.state.legal_actions()] = True
        return mask

    def _info(self, **extra: Any) -> Dict[str, Any]:
        return {"action_mask": self.action_masks().astype(np.int8), "status": self.state.status(), **extra}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        chance = int(self.np_random.integers(0, 2**63 - 1))
        self.state = self.game.new_initial_state(chance)
        # No chance nodes here: chance's moves (`byChance`) come from the game's own stream.
        self.state.resolve_chance()
        self._ended = False
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        if self.state is None:
            raise RuntimeError("step() before reset(); expected reset() first")
        a = int(action)
        if self._ended or self.state.is_terminal():
            raise RuntimeError("step() after the episode ended; expected reset() first")
        if a not in self.state.legal_actions():
            if self.illegal == "raise":
                raise ValueError(f"action {a} is not legal here; the legal ones: {self.state.legal_actions()}")
            self._ended = True
            return self._obs(), self.illegal_reward, True, False, self._info(illegal_action=a)
        self.state.apply_action(a)
        self.state.resolve_chance()
        reward = float(self.state.rewards()[0])
        truncated = self.state.truncated()
        terminated = self.state.is_terminal() and not truncated
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, truncated, self._info()

    def render(self) -> Optional[str]:
        return render_text(self.render_mode, self.state)

    def close(self) -> None:
        pass


def make(path: str, **kwargs: Any) -> gymnasium.Env:
    """``gymnasium.make`` of a playforge game: ``make("games/match3.wgdl", reward="game.score")``."""
    return gymnasium.make(ENV_ID, path=str(path), **kwargs)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="playforge.gymnasium:PlayforgeEnv")
