"""PettingZoo's door: any WGDL game, and any GDL description that grounds, as a PettingZoo
environment (``pip install 'playforge[pettingzoo]'``)::

    from playforge import pettingzoo as pz
    env = pz.env("games/connect_four.wgdl")                 # AEC: one agent acts at a time
    par = pz.parallel_env("tests/data/gdl/matching_pennies.kif")   # all agents act at once

Agents are named after the game's players (``red_0``, ``yellow_1``); an observation is a dict
of ``observation`` (the flat tensor of docs/doors.md, float32) and ``action_mask`` (int8, one
per distinct action: the agent's legal actions now). ``render()`` returns the state's text
(``render_mode="ansi"``) or prints it (``"human"``). ``reset(seed=…)`` seeds a game's own dice
(the k-th reset after a seed starts its stream at ``derive(seed, 0, 0, k)``).

In the AEC environment a simultaneous node is played as PettingZoo's own simultaneous games
are: each agent in turn picks its action, the joint move is played when the last one has
chosen. Rewards are the game's (docs/doors.md): the returns when the game ends, or a
one-player game's ``reward`` value's change after every move. A game stopped by a turn or step
limit is *truncated*, otherwise *terminated*. An illegal action ends the game with
``illegal_reward`` for the agent who played it (PettingZoo's ``TerminateIllegalWrapper``).
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers

from . import _core
from ._doors import open_game, render_text

__all__ = ["env", "raw_env", "parallel_env"]

_LOW = float(np.finfo(np.float32).min)
_HIGH = float(np.finfo(np.float32).max)


def _agent_names(players: List[str]) -> List[str]:
    """``<name>_<number>`` as PettingZoo recommends, the name in lower-case letters."""
    return [f"{re.sub('[^a-z]', '', p.lower()) or 'player'}_{i}" for i, p in enumerate(players)]


def _spaces(game: "_core.DoorGame"):
    n, a = game.observation_len, game.num_distinct_actions
    obs = spaces.Dict(
        {
            "observation": spaces.Box(low=_LOW, high=_HIGH, shape=(n,), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(a,), dtype=np.int8),
        }
    )
    return obs, spaces.Discrete(a)


class _Seeds:
    """The chance seed of each new game: ``derive(seed, 0, 0, k)`` for the k-th reset."""

    def __init__(self):
        self.seed, self.k = 0, 0

    def next(self, seed: Optional[int]) -> int:
        if seed is not None:
            self.seed, self.k = int(seed), 0
        s = _core.derive(self.seed, 0, 0, self.k)
        self.k += 1
        return s


class raw_env(AECEnv):
    """The AEC environment without PettingZoo's wrappers (``env`` adds them)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "playforge_v0", "is_parallelizable": True}

    def __init__(
        self,
        path: str,
        render_mode: Optional[str] = None,
        params: Optional[Mapping[str, float]] = None,
        objects: int = 64,
        reward: Optional[str] = None,
        turn_order: Optional[str] = None,
        overlays: Iterable[str] = (),
        simultaneous: Optional[bool] = None,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r}; expected one of {self.metadata['render_modes']}")
        self.game = open_game(path, params, objects, reward, turn_order, overlays, simultaneous)
        self.render_mode = render_mode
        self.possible_agents = _agent_names(self.game.players)
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space, act_space = _spaces(self.game)
        # One space per agent, the same object each time (PettingZoo's seeding relies on it).
        self.observation_spaces = {a: obs_space if i == 0 else _spaces(self.game)[0] for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: act_space if i == 0 else _spaces(self.game)[1] for i, a in enumerate(self.possible_agents)}
        self._seeds = _Seeds()
        self.state = None
        self._pending: Dict[int, int] = {}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _mask(self, player: int) -> np.ndarray:
        mask = np.zeros(self.game.num_distinct_actions, np.int8)
        if self.state.is_simultaneous_node():
            legal = [] if player in self._pending else self.state.role_legal_actions(player)
        else:
            legal = self.state.legal_actions(player)
        mask[legal] = 1
        return mask

    def observe(self, agent):
        p = self._index[agent]
        obs = np.asarray(self.state.observation_tensor(p), dtype=np.float32)
        return {"observation": obs, "action_mask": self._mask(p)}

    def _select(self) -> None:
        """The agent to act: the player to move, or at a simultaneous node the first agent
        still to choose."""
        p = self.state.current_player()
        if p >= 0:
            self.agent_selection = self.possible_agents[p]
        elif self.state.is_simultaneous_node():
            waiting = [i for i in range(len(self.possible_agents)) if i not in self._pending]
            self.agent_selection = self.possible_agents[waiting[0]]

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        self.state = self.game.new_initial_state(self._seeds.next(seed))
        # No chance nodes here: chance's moves (`byChance`) come from the game's own stream.
        self.state.resolve_chance()
        self._pending = {}
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._select()

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        p = self._index[agent]
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.state.is_simultaneous_node():
            self._pending[p] = int(action)
            if len(self._pending) < len(self.possible_agents):
                self._select()
                return
            joint = [self._pending[i] for i in range(len(self.possible_agents))]
            self._pending = {}
            self.state.apply_actions(joint)
        else:
            self.state.apply_action(int(action))
        self.state.resolve_chance()
        rewards = self.state.rewards()
        self.rewards = {a: float(rewards[self._index[a]]) for a in self.agents}
        if self.state.is_terminal():
            truncated = self.state.truncated()
            self.terminations = dict.fromkeys(self.agents, not truncated)
            self.truncations = dict.fromkeys(self.agents, truncated)
            for a in self.agents:
                self.infos[a] = {"status": self.state.status()}
            # The dead agents leave in order, starting after the one that moved last.
            n = len(self.possible_agents)
            self.agent_selection = self.possible_agents[(p + 1) % n]
        else:
            self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> Optional[str]:
        return render_text(self.render_mode, self.state)

    def close(self) -> None:
        pass


def env(path: str, illegal_reward: float = -1.0, **kwargs: Any) -> AECEnv:
    """The AEC environment with PettingZoo's usual wrappers (an illegal action ends the game
    with ``illegal_reward`` for its agent; actions outside the space raise; order enforced).
    Keyword arguments: ``render_mode``, ``params`` (WGDL parameters by name), ``objects``,
    ``reward``, ``turn_order``, ``overlays``, ``simultaneous`` (docs/doors.md)."""
    e: AECEnv = raw_env(path, **kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=illegal_reward)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class parallel_env(ParallelEnv):
    """Every agent acts at every step: for simultaneous GDL games (a role with one legal
    action plays it whatever it sends; a WGDL game is refused: its players move in turn)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "playforge_v0"}

    def __init__(
        self,
        path: str,
        render_mode: Optional[str] = None,
        params: Optional[Mapping[str, float]] = None,
        objects: int = 64,
        turn_order: Optional[str] = None,
        overlays: Iterable[str] = (),
        simultaneous: Optional[bool] = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r}; expected one of {self.metadata['render_modes']}")
        self.game = open_game(path, params, objects, None, turn_order, overlays, simultaneous)
        if self.game.language != "gdl":
            raise ValueError(f"{path}: a WGDL game's players move in turn; expected a GDL game here (use env() for this one)")
        self.render_mode = render_mode
        self.possible_agents = _agent_names(self.game.players)
        self.agents: List[str] = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces = {a: _spaces(self.game)[0] for a in self.possible_agents}
        self.action_spaces = {a: _spaces(self.game)[1] for a in self.possible_agents}
        self._seeds = _Seeds()
        self.state = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _observations(self) -> Dict[str, Any]:
        obs = np.asarray(self.state.observation_tensor(), dtype=np.float32)
        out = {}
        for a in self.agents:
            mask = np.zeros(self.game.num_distinct_actions, np.int8)
            mask[self.state.role_legal_actions(self._index[a])] = 1
            out[a] = {"observation": obs.copy(), "action_mask": mask}
        return out

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        self.state = self.game.new_initial_state(self._seeds.next(seed))
        # No chance nodes here: chance's moves (`byChance`) come from the game's own stream.
        self.state.resolve_chance()
        self.agents = self.possible_agents[:]
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: Mapping[str, Any]):
        joint = [int(actions[a]) if a in actions else -1 for a in self.possible_agents]
        self.state.apply_actions(joint)
        self.state.resolve_chance()
        rewards = self.state.rewards()
        agents = self.agents
        rew = {a: float(rewards[self._index[a]]) for a in agents}
        done = self.state.is_terminal()
        truncated = done and self.state.truncated()
        terms = dict.fromkeys(agents, done and not truncated)
        truncs = dict.fromkeys(agents, truncated)
        infos = {a: ({"status": self.state.status()} if done else {}) for a in agents}
        obs = self._observations()
        if self.render_mode == "human":
            self.render()
        if done:
            self.agents = []
        return obs, rew, terms, truncs, infos

    def render(self) -> Optional[str]:
        return render_text(self.render_mode, self.state)

    def close(self) -> None:
        pass
