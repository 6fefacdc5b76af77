"""OpenSpiel's C++ MCTSBot on Connect Four, for playforge's speed table (benches/speed.rs).

Searches of N simulations from the empty board with one random rollout per leaf
(RandomRolloutEvaluator(1)), UCT c = 2 on rewards in [-1, 1], no solver; repeated with fresh
seeds until the time is up. Prints `sims_per_sec <x>`. Everything runs in C++ (bot.step).
"""
import argparse
import time

import pyspiel


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--simulations", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    game = pyspiel.load_game("connect_four")
    sims = 0
    seed = 0
    t0 = time.perf_counter()
    while True:
        seed += 1
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        bot = pyspiel.MCTSBot(game, evaluator, 2.0, args.simulations, 4000, False, seed, False)
        bot.step(game.new_initial_state())
        sims += args.simulations
        elapsed = time.perf_counter() - t0
        if elapsed >= args.seconds:
            break
    print(f"open_spiel {pyspiel.__file__}")
    print(f"sims_per_sec {sims / elapsed:.1f}")


if __name__ == "__main__":
    main()
