"""The doors (docs/doors.md): playforge games through OpenSpiel's, PettingZoo's and Gymnasium's
own checks, unmodified — OpenSpiel's Python MCTSBot and evaluate_bots, PettingZoo's api_test
and parallel_api_test, Gymnasium's check_env — and Connect Four move for move against
pyspiel's own connect_four."""

from __future__ import annotations

import os
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

# The test command installs the three (python/requirements.txt) and sets
# PLAYFORGE_REQUIRE_DOORS=1: a missing one fails the run there instead of skipping.
if os.environ.get("PLAYFORGE_REQUIRE_DOORS") == "1":
    import gymnasium  # noqa: F401
    import pettingzoo  # noqa: F401
    import pyspiel
else:
    pyspiel = pytest.importorskip("pyspiel", reason="pip install 'playforge[openspiel]'")
    pytest.importorskip("pettingzoo", reason="pip install 'playforge[pettingzoo]'")
    pytest.importorskip("gymnasium", reason="pip install 'playforge[gymnasium]'")

import playforge.gymnasium as pg  # noqa: E402
import playforge.openspiel as pos  # noqa: E402
import playforge.pettingzoo as pz  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from open_spiel.python.algorithms import evaluate_bots, mcts  # noqa: E402
from pettingzoo.test import api_test, parallel_api_test  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
C4 = str(ROOT / "games" / "connect_four.wgdl")
ARENA = str(ROOT / "games" / "hex_arena.wgdl")
TTT_GDL = str(ROOT / "games" / "gdl" / "tictactoe.kif")
PENNIES = str(ROOT / "tests" / "data" / "gdl" / "matching_pennies.kif")
MATCH3 = str(ROOT / "games" / "match3.wgdl")
MAGIC = str(ROOT / "games" / "magic_land.wgdl")


def test_load_game_by_name_is_a_real_pyspiel_game():
    game = pyspiel.load_game("playforge", {"path": C4})
    assert isinstance(game, pyspiel.Game)
    t = game.get_type()
    assert t.short_name == "playforge"
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert t.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert (game.num_players(), game.num_distinct_actions()) == (2, 14)
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    state = game.new_initial_state()
    assert isinstance(state, pyspiel.State)
    assert state.legal_actions() == list(range(7))
    assert state.action_to_string(3) == "drop(red, 3)"
    assert state.action_to_string(1, 10) == "drop(yellow, 3)"
    state.apply_action(3)
    assert state.legal_actions() == list(range(7, 14)) and state.current_player() == 1
    assert state.history() == [3]
    assert len(state.observation_tensor()) == game.observation_tensor_shape()[0]
    assert "board[0] = 0 0 0 1 0 0 0" in str(state)
    assert state.observation_string(0) == str(state) == state.information_state_string(1)
    with pytest.raises(ValueError, match="not legal"):
        state.apply_action(3)
    with pytest.raises(ValueError, match="path"):
        pyspiel.load_game("playforge", {})


def test_stochastic_and_reward_games_declare_it():
    game = pos.load_game(MATCH3, reward="game.score", params={"me.maxMoves": 5})
    t = game.get_type()
    assert t.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert t.reward_model == pyspiel.GameType.RewardModel.REWARDS
    state = game.new_initial_state()
    total = 0.0
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
        total += state.rewards()[0]
        assert state.returns()[0] == pytest.approx(total)
    assert total > 0
    # Two start states of a game that draws differ; the same seed gives the same one.
    a, b = game.new_initial_state(), game.new_initial_state()
    assert str(a) != str(b)
    assert str(game.new_initial_state(seed=7)) == str(game.new_initial_state(seed=7))


def _mcts_bot(game, sims, seed):
    rng = np.random.RandomState(seed)
    return mcts.MCTSBot(game, 2.0, sims, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)


@pytest.mark.parametrize(
    "path,sims",
    [(C4, 40), (ARENA, 6), (TTT_GDL, 40)],
    ids=["connect_four", "hex_arena", "gdl_tictactoe"],
)
def test_openspiel_mcts_bot_plays_full_games_through_evaluate_bots(path, sims):
    game = pos.load_game(path)
    bots = [_mcts_bot(game, sims, 1), _mcts_bot(game, sims, 2)]
    state = game.new_initial_state()
    returns = evaluate_bots.evaluate_bots(state, bots, np.random.RandomState(3))
    assert state.is_terminal() and len(returns) == 2
    assert returns == state.returns()
    assert state.move_number() > 4


def test_mcts_beats_random_on_connect_four():
    game = pos.load_game(C4)
    wins = 0
    for k in range(4):
        rng = np.random.RandomState(k)
        bots = [_mcts_bot(game, 200, k), _RandomBot(rng)]
        state = game.new_initial_state()
        wins += evaluate_bots.evaluate_bots(state, bots, rng)[0] > 0
    assert wins >= 3


class _RandomBot(pyspiel.Bot):
    def __init__(self, rng):
        pyspiel.Bot.__init__(self)
        self._rng = rng

    def restart_at(self, state):
        pass

    def inform_action(self, state, player, action):
        pass

    def step(self, state):
        return int(self._rng.choice(state.legal_actions()))


def test_connect_four_agrees_with_pyspiel_move_for_move():
    """1 000 random games: at every position the legal actions (index mod 7 = pyspiel's
    column) and at the end the returns are pyspiel's."""
    ours_game, theirs_game = pos.load_game(C4), pyspiel.load_game("connect_four")
    rng = random.Random(2026)
    moves = 0
    for _ in range(1000):
        ours, theirs = ours_game.new_initial_state(), theirs_game.new_initial_state()
        while not theirs.is_terminal():
            assert not ours.is_terminal()
            p = theirs.current_player()
            assert ours.current_player() == p
            assert [a - 7 * p for a in ours.legal_actions()] == theirs.legal_actions()
            column = rng.choice(theirs.legal_actions())
            theirs.apply_action(column)
            ours.apply_action(7 * p + column)
            moves += 1
        assert ours.is_terminal()
        assert ours.returns() == theirs.returns()
    assert moves > 10_000


def test_cpp_side_reaches_the_rust_state():
    """pyspiel's C++ State methods, which call back into the Python state, see the moves; its
    C++ Clone copies the Rust state; OpenSpiel's own C++ random_sim_test passes on a
    sequential, a simultaneous and a stochastic reward game; states pickle."""
    import pickle

    game = pos.load_game(C4)
    state = game.new_initial_state()
    pyspiel.State.apply_action(state, 3)  # the C++ ApplyAction → _apply_action
    assert state.history() == [3] and pyspiel.State.history(state) == [3]
    assert pyspiel.State.legal_actions(state) == list(range(7, 14))
    assert pyspiel.State.current_player(state) == 1
    assert not pyspiel.State.is_terminal(state)
    copy = pyspiel.State.clone(state)  # C++ Clone: deep-copies the Python attributes
    copy.apply_action(10)
    assert (state.history(), copy.history()) == ([3], [3, 10])
    assert (state.legal_actions()[0], copy.legal_actions()[0]) == (7, 0)
    back = pickle.loads(pickle.dumps(copy))
    assert back.history() == [3, 10] and str(back) == str(copy)
    for g in (pos.load_game(ARENA), pos.load_game(PENNIES), pos.load_game(MATCH3, reward="game.score")):
        pyspiel.random_sim_test(g, num_sims=3, serialize=False, verbose=False)
    assert pyspiel.load_game(str(pos.load_game(ARENA, params={"red1.maxHp": 40}))).num_distinct_actions() == 448


def test_pettingzoo_api_test_connect_four_and_arena():
    for path in (C4, ARENA):
        env = pz.env(path, render_mode="ansi")
        api_test(env, num_cycles=300)
        env.reset(seed=1)
        assert "game.time" in env.render()


SHIPPED = sorted((ROOT / "games").glob("*.wgdl")) + sorted((ROOT / "games" / "gdl").glob("*.kif"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_pettingzoo_api_test_every_shipped_game(path):
    api_test(pz.env(str(path)), num_cycles=200)


def test_pettingzoo_reset_seed_repeats_a_game_that_draws():
    env = pz.env(MATCH3)
    firsts = []
    for _ in range(2):
        env.reset(seed=3)
        firsts.append(env.last()[0]["observation"].copy())
    env.reset(seed=4)
    assert np.array_equal(firsts[0], firsts[1])
    assert not np.array_equal(firsts[0], env.last()[0]["observation"])


def test_pettingzoo_aec_plays_a_game_to_its_returns():
    env = pz.env(C4)
    env.reset(seed=0)
    assert env.possible_agents == ["red_0", "yellow_1"]
    totals = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])


def test_pettingzoo_simultaneous_gdl_game():
    par = pz.parallel_env(PENNIES, render_mode="ansi")
    parallel_api_test(par, num_cycles=200)
    api_test(pz.env(PENNIES), num_cycles=200)
    obs, _ = par.reset(seed=0)
    assert set(obs) == set(par.possible_agents)
    with pytest.raises(ValueError, match="in turn"):
        pz.parallel_env(C4)


def test_gymnasium_check_env_match3_and_magic_land():
    for path, reward in ((MATCH3, "game.score"), (MAGIC, "global.coins")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # check_env's warnings are failures here
            check_env(pg.make(path, reward=reward).unwrapped)
        # Built directly it has no registry spec (check_env says so); the checks pass.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", message=".*spec.*")
            check_env(pg.PlayforgeEnv(path))


ONE_PLAYER = [ROOT / "games" / n for n in ("simple_coins.wgdl", "stacker.wgdl", "gdl/lightsout.kif")]


@pytest.mark.parametrize("path", ONE_PLAYER, ids=[p.name for p in ONE_PLAYER])
def test_gymnasium_check_env_other_one_player_games(path, capsys):
    check_env(pg.make(str(path)).unwrapped)


def test_gymnasium_episode_rewards_sum_to_the_value():
    env = pg.PlayforgeEnv(MATCH3, reward="game.score")
    obs, info = env.reset(seed=5)
    total, done = 0.0, False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, r, term, trunc, info = env.step(action)
        total += r
        done = term or trunc
    assert total == float(env.state.returns()[0]) > 0
    with pytest.raises(ValueError, match="one-player"):
        pg.PlayforgeEnv(C4)
    strict = pg.PlayforgeEnv(MATCH3, illegal="raise")
    _, info = strict.reset(seed=1)
    with pytest.raises(ValueError, match="not legal"):
        strict.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
