"""The Python API against the command line: the same random games for the same seed,
parameters that round-trip, errors raised with the command line's positions, and the pyspiel
state protocol (legal moves, apply, clone, returns, the terminal player)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

import playforge
from conftest import ROOT, playforge as cli


@pytest.mark.parametrize("game,seed", [("connect_four.wgdl", 7), ("hex_arena.wgdl", 3), ("simple_coins.wgdl", 11)])
def test_random_playout_is_the_cli_run(tmp_path, game, seed):
    record = tmp_path / "game.json"
    cli(["run", f"games/{game}", "--random", "300", "--seed", str(seed), "--record", str(record), "--quiet"])
    moves = json.loads(record.read_text())["moves"]
    assert len(moves) > 5
    g = playforge.load_game(str(ROOT / "games" / game))
    assert g.random_playout(seed, max_moves=300) == moves


def test_a_python_loop_plays_legal_games_to_their_end():
    g = playforge.load_game(str(ROOT / "games/connect_four.wgdl"))
    rng = np.random.default_rng(1)
    for _ in range(50):
        s = g.new_initial_state()
        while not s.is_terminal():
            assert s.current_player() in (0, 1)
            s.apply_action(int(rng.choice(s.legal_actions())))
        assert s.current_player() == -4
        assert 7 <= s.move_number() <= 42
        assert sum(s.returns()) == 0 and set(s.returns()) <= {-1.0, 0.0, 1.0}
        assert s.status() in ("won:red", "won:yellow", "draw")


def test_states_clone_and_refuse_illegal_moves():
    g = playforge.load_game(str(ROOT / "games/connect_four.wgdl"))
    s = g.new_initial_state()
    a = s.legal_actions()[3]
    assert s.action_to_string(a) == "drop(red, 3)"
    t = s.clone()
    t.apply_action(a)
    assert s.move_number() == 0 and t.move_number() == 1
    assert "red.row = 0" in str(s)
    assert t.current_player() == 1
    with pytest.raises(ValueError, match="not legal here"):
        s.apply_action(123456789)


def test_parameters_round_trip_and_are_checked():
    g = playforge.load_game(str(ROOT / "games/hex_arena.wgdl"))
    p = g.parameters
    assert p.names[0] == "red1.maxHp" and len(p.names) == len(p.low) == len(p.high) == len(p.values)
    assert np.all(p.low <= p.values) and np.all(p.values <= p.high)
    same = g.with_parameters(p.values)
    assert np.array_equal(same.parameters.values, p.values)
    v = p.values.copy()
    v[0] = p.low[0]
    assert g.with_parameters(v).parameters.values[0] == p.low[0]
    v[0] = p.high[0] + 1
    with pytest.raises(ValueError, match="red1.maxHp"):
        g.with_parameters(v)
    by_name = playforge.load_game(str(ROOT / "games/hex_arena.wgdl"), params={"red1.maxHp": 40})
    assert by_name.parameters.values[0] == 40


def test_bad_input_raises_with_its_position(tmp_path):
    bad = tmp_path / "bad.wgdl"
    bad.write_text("class coin\nattribute coin value long zz\n")
    with pytest.raises(ValueError) as e:
        playforge.load_game(str(bad))
    assert re.search(r"bad\.wgdl:2:\d+", str(e.value)), str(e.value)
    with pytest.raises(ValueError, match="cannot read"):
        playforge.load_game(str(tmp_path / "missing.wgdl"))


def test_python_m_playforge_lists_the_commands_of_the_binary():
    out = subprocess.run([sys.executable, "-m", "playforge", "--help"], capture_output=True, text=True, check=True).stdout
    for command in ["balance", "verify", "landscape", "personas", "persona-play", "playtest", "tournament", "experiment", "play", "run", "check", "bench", "replay", "gdl-match", "ggp"]:
        assert re.search(rf"^\s+{re.escape(command)}\s", out, re.M), f"{command} missing from:\n{out}"
    binary = ROOT / "target/release/playforge"
    if binary.exists():
        assert subprocess.run([str(binary), "--help"], capture_output=True, text=True).stdout == out
    # Errors and their exit status are the binary's too.
    bad = subprocess.run([sys.executable, "-m", "playforge", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unrecognized subcommand" in bad.stderr


def test_run_batch_builds_the_game_once_and_reports_bad_jobs():
    assert "balance.game" in playforge.job_kinds()
    with pytest.raises(RuntimeError, match="unknown job kind"):
        playforge.run_batch("nope", "{}", [])


def test_bots_replay_a_tournament_game_of_the_cli(tmp_path):
    """Every move of a CLI tournament game (MCTS with its greedy playouts and fallback against
    the rule policy) comes back from Python bots given the same encounter and stream."""
    cli(["tournament", "configs/hex_tournament.toml", "--encounters", "1", "--quiet", "--out", str(tmp_path)])
    replay = json.loads((tmp_path / "hex_tournament/seed-1/replays/encounter0-MCTS-vs-Rule.json").read_text())
    game = playforge.load_game(str(ROOT / "games/hex_arena.wgdl"), params=dict(replay["params"]), turn_order="grouped")
    mcts = playforge.Bot(game, "MCTS", kind="mcts", iterations=100, playout="greedy", fallback="rule", fallback_below=0.2)
    rule = playforge.Bot(game, "Rule", kind="policy", policy="rule")
    # Encounter 0, AI pair 0 (MCTS, Rule), side 0: the tournament's seed, then its game stream.
    rng = playforge.Rng(playforge.derive(1, 0, 0, 0), 1, 0, 0)
    state, moves = game.new_initial_state(), []
    while not state.is_terminal():
        bot = (mcts, rule)[state.current_player()]
        a = bot.step(state, rng)
        moves.append(state.action_to_string(a))
        state.apply_action(a)
    assert len(moves) > 10
    assert moves == replay["moves"]
    with pytest.raises(ValueError, match="policy"):
        playforge.Bot(game, "x", kind="policy", policy="nope")


def test_mcts_bots_with_formulas_and_enhancements_replay_the_cli(tmp_path):
    """The MCTS settings of the command line (a formula's text such as an evolved persona's, a
    named formula with its constants, full expansion, progressive widening, the final choice)
    reach Python bots unchanged: they replay a CLI tournament game move for move."""
    evolved = dict(kind="mcts", iterations=60, formula="wins / visits + sqrt(ln(parent) / visits) / 2",
                   full_expansion=True, final_choice="most_visited")
    tuned = dict(kind="mcts", iterations=60, formula="ucb_tuned1", c=1.1, d=0.01, widening=3)
    config = tmp_path / "t.toml"
    config.write_text(
        f'[tournament]\nname = "t"\ngame = "{ROOT / "games/connect_four.wgdl"}"\nencounters = 1\n'
        + "".join(f"\n[[ai]]\nname = \"{n}\"\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in ai.items())
                  for n, ai in (("Evolved", evolved), ("Tuned", tuned)))
    )
    cli(["tournament", str(config), "--quiet", "--out", str(tmp_path)])
    replay = json.loads((tmp_path / "t/seed-1/replays/encounter0-Evolved-vs-Tuned.json").read_text())
    game = playforge.load_game(str(ROOT / "games/connect_four.wgdl"))

    def play(evolved_bot, tuned_bot):
        rng = playforge.Rng(playforge.derive(1, 0, 0, 0), 1, 0, 0)
        state, moves = game.new_initial_state(), []
        while not state.is_terminal():
            a = (evolved_bot, tuned_bot)[state.current_player()].step(state, rng)
            moves.append(state.action_to_string(a))
            state.apply_action(a)
        return moves

    moves = play(playforge.Bot(game, "Evolved", **evolved), playforge.Bot(game, "Tuned", **tuned))
    assert len(moves) >= 7
    assert moves == replay["moves"]
    # The settings act: plain UCB1 bots with the same budget play another game.
    plain = dict(kind="mcts", iterations=60)
    assert play(playforge.Bot(game, "a", **plain), playforge.Bot(game, "b", **plain)) != replay["moves"]
    with pytest.raises(ValueError, match="column"):
        playforge.Bot(game, "x", kind="mcts", formula="wins / (visits")


def test_ask_tell_with_the_built_in_evaluation_is_the_cli_run(tmp_path, monkeypatch):
    """Balance driven from Python, the built-in evaluation told back, writes the folder the
    command line writes for the same seed; a fitness of the user's drives the same loop."""
    from conftest import outputs
    import shutil

    out = tmp_path / "out"
    run_dir = out / "hexmage_balance/cma-seed-1"
    cli(["balance", "configs/hexmage_balance.toml", "--quiet", "--out", str(out)])
    shutil.move(str(run_dir), str(tmp_path / "cli"))
    # The config named as the command line named it (replays record the game's path so).
    monkeypatch.chdir(ROOT)
    run = playforge.Balance("configs/hexmage_balance.toml", out=str(out))
    asked = confirms = 0
    while (request := run.ask()) is not None:
        asked += 1
        confirms += request["confirm"]
        assert all(len(c["dna"]) == len(request["candidates"][0]["dna"]) for c in request["candidates"])
        run.tell(run.evaluate())
    result = run.result()
    assert asked > 10 and confirms > 0 and result["reached"]
    assert run.save().endswith("checkpoint.json")
    assert outputs(tmp_path / "cli") == outputs(run_dir)
    # A fitness of the user's: the loop runs on it (F = 1 − the first gene's DNA).
    mine = playforge.Balance(str(ROOT / "configs/hexmage_balance.toml"), out=str(tmp_path / "mine"), seed=2)
    told = 0
    while (request := mine.ask()) is not None and told < 40:
        mine.tell([1.0 - c["dna"][0] for c in request["candidates"]])
        told += 1
    with pytest.raises(ValueError, match="tell"):
        mine.tell([0.5])


def test_balance_ask_tell_confirms_sequentially_itself(tmp_path, monkeypatch):
    """Under [evaluation] confirm = "sequential" the confirmations are never asked (they pool
    games): the run plays them with the built-in evaluation, counts them, and the ask/tell run
    told the built-in evaluation is still the command line's."""
    from conftest import outputs
    import shutil

    config = tmp_path / "cfg" / "hexmage_balance.toml"
    config.parent.mkdir()
    text = (ROOT / "configs/hexmage_balance.toml").read_text()
    assert "[evaluation]\n" in text and "max_evaluations = 12000" in text
    text = text.replace("[evaluation]\n", '[evaluation]\nconfirm = "sequential"\n').replace("max_evaluations = 12000", "max_evaluations = 1500")
    config.write_text(text.replace('game = "../games/', f'game = "{ROOT}/games/'))
    out = tmp_path / "out"
    run_dir = out / "hexmage_balance/cma-seed-1"
    cli(["balance", str(config), "--quiet", "--out", str(out)])
    shutil.move(str(run_dir), str(tmp_path / "cli"))
    monkeypatch.chdir(ROOT)
    run = playforge.Balance(str(config), out=str(out))
    told = 0
    while (request := run.ask()) is not None:
        assert not request["confirm"]
        evals = run.evaluate()
        told += sum(e["games"] for e in evals)
        run.tell(evals)
    run.result()
    ck = json.loads((run_dir / "checkpoint.json").read_text())
    assert ck["games_played"] > told and ck["best"]["eval"]["f_se"] > 0
    assert outputs(tmp_path / "cli") == outputs(run_dir)


def test_persona_ask_tell_with_the_built_in_play_is_the_cli_run(tmp_path, monkeypatch):
    from conftest import outputs
    import shutil

    out = tmp_path / "out"
    folder = out / "personas_quick/seed-1"
    args = ["--generations", "2", "--only", "MaxS"]
    cli(["personas", "configs/personas_quick.toml", *args, "--quiet", "--out", str(out)])
    shutil.move(str(folder), str(tmp_path / "cli"))
    monkeypatch.chdir(ROOT)
    run = playforge.Personas("configs/personas_quick.toml", generations=2, only=["MaxS"], out=str(out))
    batches = 0
    while (games := run.ask()) is not None:
        batches += 1
        assert all(set(g) == {"persona", "agent", "seed", "stream"} for g in games)
        run.tell(run.evaluate())
    # Per generation the random player, then vanilla and the individuals; the held-out table:
    # the best, the random player and vanilla for MaxS, then the random row.
    assert batches == 2 * 2 + 3 + 1
    assert [p["name"] for p in run.result()] == ["MaxS"]
    assert outputs(tmp_path / "cli") == outputs(folder)
    with pytest.raises(ValueError, match="no persona"):
        playforge.Personas("configs/personas_quick.toml", only=["Nope"])


def test_generate_ask_tell_with_the_built_in_evaluation_is_the_cli_run(tmp_path, monkeypatch):
    """A generate map driven from Python, the built-in evaluation told back, writes the folder
    the command line writes; genes of one's own are evaluated as the loop evaluates them (how
    another optimizer, pyribs say, drives playforge); evaluations of one's own drive the loop."""
    from conftest import outputs
    import shutil

    out = tmp_path / "out"
    run_dir = out / "generate_hex_map/cma-me-seed-1"
    # The shipped map confirms sequentially: its runs play their own games, so ask/tell refuses
    # it with a clear error. Driven from outside, the map confirms as before issue 57.
    monkeypatch.chdir(ROOT)
    with pytest.raises(RuntimeError, match="sequential"):
        playforge.Generate("configs/generate_hex_map.toml", evaluations=60, out=str(tmp_path / "refused")).ask()
    config = tmp_path / "fixed" / "generate_hex_map.toml"
    config.parent.mkdir()
    text = (ROOT / "configs/generate_hex_map.toml").read_text()
    assert 'confirm = "sequential"' in text and 'game = "../games/' in text
    text = text.replace('confirm = "sequential"', 'confirm = "fixed"').replace('game = "../games/', f'game = "{ROOT}/games/')
    config.write_text(text)
    # 3 000 evaluations (48 000 games): the map's first sure even fights come at about 40 000
    # games (docs/generate.md), so the run ends with elites.
    cli(["generate", str(config), "--evaluations", "3000", "--quiet", "--out", str(out)])
    shutil.move(str(run_dir), str(tmp_path / "cli"))
    run = playforge.Generate(str(config), evaluations=3000, out=str(out))
    names = run.gene_names()
    assert len(names) == 96 and names[0].startswith("red")
    asked = confirms = 0
    while (request := run.ask()) is not None:
        asked += 1
        confirms += request["confirm"]
        assert all(len(c["genes"]) == 96 for c in request["candidates"])
        run.tell(run.evaluate())
    result = run.result()
    assert asked >= 2 and confirms > 0 and result["elites"] > 0 and result["qd_score"] > 0
    assert outputs(tmp_path / "cli") == outputs(run_dir)
    # Genes of one's own: the same genes and streams give the same numbers, one dict each.
    genes = [[0.5] * 96, [0.2] * 96]
    a = run.evaluate_genes(genes, iteration=3, games=4)
    b = run.evaluate_genes(genes, iteration=3, games=4)
    assert a == b and len(a) == 2
    assert all(len(e["descriptors"]) == 2 and len(e["measures"]) == 8 and e["games"] == 4 for e in a)
    with pytest.raises(ValueError, match="genes"):
        run.evaluate_genes([[0.5] * 3])
    # Evaluations of one's own drive the same loop: quality and descriptors told.
    mine = playforge.Generate(str(config), evaluations=60, out=str(tmp_path / "mine"))
    while (request := mine.ask()) is not None:
        mine.tell([{"quality": c["genes"][0], "descriptors": [10 + 30 * c["genes"][1], 0.5 * c["genes"][2]]} for c in request["candidates"]])
    assert mine.result()["elites"] > 0
    with pytest.raises(ValueError, match="algorithm"):
        playforge.Generate("configs/generate_hex_map.toml", algorithm="cma")
