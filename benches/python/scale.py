"""Figures of the Python layer for the speed table (`cargo bench --bench speed -- python ray`).

    python benches/python/scale.py loop playforge|pyspiel [SECONDS]
        Connect Four random games in a Python loop (legal actions, a uniform choice by Python's
        `random`, apply, until terminal): prints {"games_per_s", "moves_per_s"} as JSON.
    python benches/python/scale.py ray [CPUS]
        The shipped balance config and a short persona run (three generations of MaxS), each run
        here and with `--ray local:CPUS`, three times each, alternating; prints the median run
        times the runs record themselves (their timing.csv: the cluster's start-up, which `--ray`
        pays before the run, is left out).
    python benches/python/scale.py overhead
        Ray's fixed costs on a private local instance: {"task_s"} the extra time of one more task
        in a batch, {"batch_s"} the time of a batch of one trivial task (submit, schedule, get).
"""

from __future__ import annotations

import csv
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Runs of each kind in `ray`, whose medians are compared.
REPEATS = 3


def loop(which: str, seconds: float) -> dict:
    if which == "playforge":
        import playforge

        game = playforge.load_game(str(ROOT / "games/connect_four.wgdl"))
    else:
        import pyspiel

        game = pyspiel.load_game("connect_four")
    rng = random.Random(1)
    games = moves = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(100):
            s = game.new_initial_state()
            while not s.is_terminal():
                s.apply_action(rng.choice(s.legal_actions()))
                moves += 1
            games += 1
    dt = time.perf_counter() - t0
    return {"games_per_s": games / dt, "moves_per_s": moves / dt}


def last_elapsed(timing: Path) -> float:
    rows = list(csv.reader(timing.open()))
    return float(rows[-1][-1])


def run(args, out: Path, timing: str) -> float:
    subprocess.run([sys.executable, "-m", "playforge", *args, "--quiet", "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    return last_elapsed(out / timing)


def ray(cpus: int) -> dict:
    out = {}
    jobs = {
        "balance": (["balance", "configs/hexmage_balance.toml"], "hexmage_balance/cma-seed-1/timing.csv"),
        "personas": (["personas", "configs/personas_quick.toml", "--generations", "3", "--only", "MaxS"], "personas_quick/seed-1/MaxS/timing.csv"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, (args, timing) in jobs.items():
            # Local and Ray runs alternate, REPEATS of each; the medians are compared (one run
            # of each on this machine varies by ±5 %).
            local, remote = [], []
            for k in range(REPEATS):
                local.append(run(args, Path(tmp) / f"{name}-local-{k}", timing))
                remote.append(run([*args, "--ray", f"local:{cpus}"], Path(tmp) / f"{name}-ray-{k}", timing))
            lm, rm = statistics.median(local), statistics.median(remote)
            out[name] = {"local_s": lm, "ray_s": rm, "ratio": rm / lm, "local_runs": local, "ray_runs": remote}
    return out


def _nothing(x):
    return x


def overhead() -> dict:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    task = ray.remote(num_cpus=1)(_nothing)
    ray.get([task.remote(i) for i in range(20)])  # workers started
    reps = 200

    def batch(n: int) -> float:
        t = time.perf_counter()
        for _ in range(reps):
            ray.get([task.remote(i) for i in range(n)])
        return (time.perf_counter() - t) / reps

    one, eight = batch(1), batch(8)
    ray.shutdown()
    return {"batch_s": one, "task_s": (eight - one) / 7}


if __name__ == "__main__":
    if sys.argv[1] == "loop":
        print(json.dumps(loop(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 3.0)))
    elif sys.argv[1] == "overhead":
        print(json.dumps(overhead()))
    elif sys.argv[1] == "ray":
        print(json.dumps(ray(int(sys.argv[2]) if len(sys.argv) > 2 else 2)))
    else:
        sys.exit(__doc__)
