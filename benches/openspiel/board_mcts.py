"""OpenSpiel's C++ MCTSBot on one of its board games, for playforge's speed table (the `board`
section of benches/speed.rs).

    python board_mcts.py GAME --simulations N [--seconds S]
        Searches of N simulations from the initial state of pyspiel.load_game(GAME) (`othello`,
        `hex(board_size=5)`, ...) with one random rollout per leaf (RandomRolloutEvaluator(1)),
        UCT c = 2 on rewards in [-1, 1], no solver -- the settings of connect_four_mcts.py;
        repeated with fresh seeds until S seconds have passed (at least one search). Only
        `bot.step(state)` is timed. Prints `sims_per_sec <x>`. Everything runs in C++.
    python board_mcts.py GAME --random-games [--seconds S]
        Uniformly random games from the initial state, played in C++ by
        pyspiel.evaluate_bots with two uniform random bots (chance outcomes sampled by their
        probabilities); only the evaluate_bots calls are timed. Prints `games_per_sec <x>`.
"""
import argparse
import time

import pyspiel


def mcts(game, simulations: int, seconds: float) -> float:
    sims = 0
    seed = 0
    spent = 0.0
    while True:
        seed += 1
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        bot = pyspiel.MCTSBot(game, evaluator, 2.0, simulations, 4000, False, seed, False)
        state = game.new_initial_state()
        t0 = time.perf_counter()
        bot.step(state)
        spent += time.perf_counter() - t0
        sims += simulations
        if spent >= seconds:
            return sims / spent


def random_games(game, seconds: float) -> float:
    bots = [pyspiel.make_uniform_random_bot(p, 1 + p) for p in range(game.num_players())]
    games = 0
    spent = 0.0
    while True:
        state = game.new_initial_state()
        t0 = time.perf_counter()
        pyspiel.evaluate_bots(state, bots, games + 1)
        spent += time.perf_counter() - t0
        games += 1
        if spent >= seconds:
            return games / spent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("game", help="a pyspiel game string, e.g. breakthrough or hex(board_size=5)")
    ap.add_argument("--simulations", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--random-games", action="store_true", help="time random games instead of MCTS")
    args = ap.parse_args()
    game = pyspiel.load_game(args.game)
    print(f"open_spiel {pyspiel.__file__}")
    if args.random_games:
        print(f"games_per_sec {random_games(game, args.seconds):.1f}")
    else:
        print(f"sims_per_sec {mcts(game, args.simulations, args.seconds):.1f}")


if __name__ == "__main__":
    main()
