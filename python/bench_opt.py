"""playforge's single-target search against the noisy optimizers a designer would pick instead,
side by side in one run, at the same game budget, judged on fresh games.

For a balance config (``configs/hexmage_balance.toml``: the main job) or a single-target generate
config (``configs/generate_match3.toml``) and each seed, every method gets the same budget of
games (the config's ``max_evaluations`` × the games of one evaluation, or ``--budget``) and
plays them through playforge's own evaluation (the Python ask/tell):

* ``playforge``: the command's own run (``playforge.Balance`` / ``playforge.Generate`` told its
  built-in evaluation: exactly the command line's run, confirmations counted in the budget);
* ``playforge-seq`` (balance only): the same with ``[evaluation] confirm = "sequential"`` (its
  confirmations play their own games, counted from the run's checkpoint);
* nevergrad 1.0.12: ``NGOpt`` (told that the function is noisy), ``TBPSA``,
  ``NoisyOnePlusOne`` and ``OptimisticNoisyOnePlusOne``, on an ``Array`` in [0, 1]^n;
* pycma 4.5: CMA-ES with ``cma.NoiseHandler`` (uncertainty handling, Hansen et al. 2009), its
  re-evaluations counted, recommending ``xfavorite`` as its docstring asks.

An external method evaluates one candidate at a time with the config's ``games`` per AI pair or
table, each evaluation on a stream of its own; a balance candidate's genes that the config
holds (a fixed team, ``[parameters]``) stay at their values. A generate candidate that breaks a
constraint costs no game and scores F − 2 (a balance encounter: −1), since the optimizers cannot
know the constraints; a method stops after 100 000 proposals. pycma evaluates a whole
population before the budget is checked, so it may overrun it by one batch (its games used are
reported).

**Judging**: at ``--judge-points`` moments spread over the budget, each method's current
recommendation (playforge: its confirmed best so far) is played on seeds no search used — the
config's confirmation games for balance, ``verify_games`` per table for generate — and its F
read from those games (not counted in the budget). *Games to reach* is the budget used at the
first moment whose judged F is at least the target (balance: the config's ``target``; generate:
``--target``, default 1.0: every target in its band); the *judged F at the budget* is the last
moment's. The table gives per method the median games to reach over seeds (and how many seeds
reached it) and the judged F at the budget, mean with a 95% t interval.

    bash python/bench_opt.sh configs/hexmage_balance.toml --seeds 1 2 3 4 5 6 7 8 9 10
"""

import argparse
import json
import os
import shutil
import statistics
import time
import tomllib

import numpy as np

import playforge
from bench_qd import JUDGE_ITERATION, mean_ci  # the judge's stream and the t interval, as bench_qd's
NEVERGRAD = ["NGOpt", "TBPSA", "NoisyOnePlusOne", "OptimisticNoisyOnePlusOne"]


class Balance:
    """A balance config as a noisy function of the evolving genes."""

    def __init__(self, config, cfg, seed, out):
        self.config, self.cfg, self.seed, self.out = config, cfg, seed, out
        probe = playforge.Balance(config, seed=seed, out=os.path.join(out, "probe"))
        first = probe.ask()["candidates"]
        dnas = np.array([c["dna"] for c in first])
        self.template = dnas[0].copy()
        # The genes the optimizers move: those the run's own random start varies.
        self.evolving = [k for k in range(dnas.shape[1])] if len(dnas) < 2 else [k for k in range(dnas.shape[1]) if np.ptp(dnas[:, k]) > 0]
        self.n = len(self.evolving)
        self.probe = probe
        self.target = float(cfg["balance"].get("target", 0.95))
        self.it = 0

    def full(self, x):
        dna = self.template.copy()
        dna[self.evolving] = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
        return [float(v) for v in dna]

    def play(self, x, iteration, who, confirm):
        """The evaluation of `x`, or None for an encounter that breaks a constraint."""
        req = {"iteration": iteration, "confirm": confirm, "candidates": [{"dna": self.full(x), "values": [], "who": who}]}
        try:
            return self.probe.evaluate(req)[0]
        except RuntimeError as err:
            if "breaks a constraint" not in str(err):
                raise
            return None

    def evaluate(self, x):
        """(F, games played) of one evaluation on a stream of its own. An encounter that breaks
        a constraint plays no game and scores −1, below any valid one (the optimizers cannot
        know the constraints; playforge's own search redraws such genes)."""
        e = self.play(x, self.it, 0, False)
        self.it += 1
        return (-1.0, 0) if e is None else (float(e["f"]), int(e["games"]))

    def judge(self, x, tag):
        e = self.play(x, JUDGE_ITERATION + tag, tag, True)
        return 0.0 if e is None else float(e["f"])

    def own_run(self, out, sequential=False):
        config = self.config
        if sequential:
            # The config with [evaluation] confirm = "sequential", its game named absolutely.
            with open(self.config) as f:
                text = f.read()
            game = os.path.abspath(os.path.join(os.path.dirname(self.config), self.cfg["balance"]["game"]))
            text = text.replace(f'game = "{self.cfg["balance"]["game"]}"', f'game = "{game}"', 1)
            text = text.replace("[evaluation]\n", '[evaluation]\nconfirm = "sequential"\n', 1)
            os.makedirs(out, exist_ok=True)
            config = os.path.join(out, os.path.basename(self.config))
            with open(config, "w") as f:
                f.write(text)
        return playforge.Balance(config, seed=self.seed, out=out)

    def own_best(self, ck):
        b = ck.get("best")
        return None if b is None else [b["dna"][k] for k in self.evolving]

    def budget(self):
        e = self.cfg.get("evaluation", {})
        return self.cfg["balance"].get("max_evaluations", 12000) * e.get("games", 1) * len(e.get("pairs", [[0, 0]]))


class Generate:
    """A single-target generate config as a noisy function of its genes."""

    def __init__(self, config, cfg, seed, out, target):
        self.config, self.cfg, self.seed, self.out = config, cfg, seed, out
        self.probe = playforge.Generate(config, seed=seed, out=os.path.join(out, "probe"))
        self.n = len(self.probe.gene_names())
        self.tables = len({tuple(m["players"]) for m in cfg.get("measure", [])}) or 1
        self.target = target
        self.it = 0

    def evaluate(self, x):
        e = self.probe.evaluate_genes([[float(v) for v in np.clip(x, 0.0, 1.0)]], iteration=self.it)[0]
        self.it += 1
        return (float(e["f"]) if e["feasible"] else float(e["f"]) - 2.0), int(e["games"]) * self.tables

    def judge(self, x, tag):
        g = self.cfg["generate"]
        games = g.get("verify_games", g.get("confirm_games", 40))
        e = self.probe.evaluate_genes([[float(v) for v in np.clip(x, 0.0, 1.0)]], iteration=JUDGE_ITERATION + tag, games=games, who=[tag])[0]
        return float(e["f"]) if e["feasible"] else 0.0

    def own_run(self, out, sequential=False):
        if sequential:
            raise SystemExit("playforge-seq: a balance config only (generate's cma confirms sequentially with confirm = \"sequential\" in its config)")
        return playforge.Generate(self.config, seed=self.seed, out=out)

    def own_best(self, ck):
        b = ck.get("best")
        return None if b is None else b["x"]

    def budget(self):
        g = self.cfg["generate"]
        return g.get("max_evaluations", 240) * g.get("games", 4) * self.tables


class Tracker:
    """The games used and the judged recommendation at each judge point. A method also stops
    after 100 000 proposals (genes that break a constraint cost no game)."""

    def __init__(self, problem, budget, points):
        self.problem, self.budget = problem, budget
        self.marks = [budget * (k + 1) // points for k in range(points)]
        self.used = 0
        self.proposals = 0
        self.curve = []  # (games used, judged F)

    def open(self):
        self.proposals += 1
        return self.used < self.budget and self.proposals <= 100_000

    def due(self):
        return len(self.curve) < len(self.marks) and self.used >= self.marks[len(self.curve)]

    def judge(self, x):
        while self.due():
            f = self.problem.judge(x, len(self.curve)) if x is not None else 0.0
            self.curve.append((self.used, f))

    def finish(self, x):
        while len(self.curve) < len(self.marks):
            self.curve.append((self.used, self.problem.judge(x, len(self.curve)) if x is not None else 0.0))

    def reached(self):
        return next((g for g, f in self.curve if f >= self.problem.target), None)


def run_playforge(problem, tracker, out, sequential=False):
    run = problem.own_run(out, sequential)
    best = None
    ck_path = os.path.join(run._core.dir(), "checkpoint.json")
    told = {}  # games told, per iteration
    # The run's own budget, or the comparison's where it is smaller (then the run is left there).
    while tracker.used < tracker.budget and (req := run.ask()) is not None:
        # The run waits for its tell, so its checkpoint stands still: the best so far, and (a
        # balance run) every game of the iterations it finished, confirmations included — a
        # sequential confirmation plays its own games, which are never told.
        if os.path.exists(ck_path):
            with open(ck_path) as f:
                ck = json.load(f)
            best = problem.own_best(ck) or best
            if "optimizer" in ck:
                tracker.used = max(tracker.used, ck["games_played"] + sum(g for it, g in told.items() if it >= ck["next_iteration"]))
        tracker.judge(best)
        if tracker.used >= tracker.budget:
            break
        evals = run.evaluate()
        run.tell(evals)
        games = sum(int(e["games"]) for e in evals) * getattr(problem, "tables", 1)
        told[req["iteration"]] = told.get(req["iteration"], 0) + games
        tracker.used += games
    if os.path.exists(ck_path):
        with open(ck_path) as f:
            ck = json.load(f)
        best = problem.own_best(ck) or best
        if "optimizer" in ck:
            tracker.used = max(tracker.used, ck["games_played"])
    tracker.finish(best)


def run_nevergrad(name, problem, tracker, seed):
    import nevergrad as ng

    param = ng.p.Array(shape=(problem.n,), lower=0.0, upper=1.0)
    param.function.deterministic = False
    param.random_state = np.random.RandomState(seed)
    f0, g0 = problem.evaluate(np.full(problem.n, 0.5))  # the games of one evaluation, for the budget in evaluations
    tracker.used += g0
    budget_evals = max(1, tracker.budget // max(g0, 1))
    opt = ng.optimizers.registry[name](parametrization=param, budget=budget_evals, num_workers=1)
    rec = None
    while tracker.open():
        cand = opt.ask()
        f, g = problem.evaluate(cand.value)
        tracker.used += g
        opt.tell(cand, -f)
        if tracker.due():
            rec = opt.provide_recommendation().value
            tracker.judge(rec)
    rec = opt.provide_recommendation().value
    tracker.finish(rec)


def run_pycma(problem, tracker, seed):
    import cma

    es = cma.CMAEvolutionStrategy([0.5] * problem.n, 0.2, {"bounds": [0.0, 1.0], "seed": seed, "verbose": -9})
    nh = cma.NoiseHandler(es.N, maxevals=[1, 1, 30])

    def loss(x):
        f, g = problem.evaluate(x)
        tracker.used += g
        tracker.proposals += 1
        return -f

    while tracker.open():
        X, fs = es.ask_and_eval(loss, evaluations=nh.evaluations)
        es.tell(X, fs)
        es.sigma *= nh(X, fs, loss, es.ask)
        es.countevals += nh.evaluations_just_done
        if tracker.due():
            tracker.judge(es.result.xfavorite)
    tracker.finish(es.result.xfavorite)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 11)))
    ap.add_argument("--budget", type=int, default=None, help="games per run (default: the config's max_evaluations × the games of one evaluation)")
    ap.add_argument("--methods", nargs="+", default=["playforge", *NEVERGRAD, "pycma"], help="which methods to run")
    ap.add_argument("--judge-points", type=int, default=10, help="moments over the budget at which each recommendation is judged")
    ap.add_argument("--target", type=float, default=1.0, help="generate: the judged F that counts as reached (balance: the config's target)")
    ap.add_argument("--out", default="outputs/bench_opt")
    ap.add_argument("--json", default=None, help="also write the figures here")
    a = ap.parse_args()
    with open(a.config, "rb") as f:
        cfg = tomllib.load(f)
    kind = "balance" if "balance" in cfg else "generate"
    if kind == "generate" and cfg["generate"].get("algorithm", "cma") != "cma":
        raise SystemExit(f"{a.config}: algorithm {cfg['generate']['algorithm']!r}; expected a single-target config (algorithm = \"cma\"); maps are python/bench_qd.py's")
    results = {m: [] for m in a.methods}
    for seed in a.seeds:
        for m in a.methods:
            out = os.path.join(a.out, f"seed-{seed}", m)
            shutil.rmtree(out, ignore_errors=True)
            problem = Balance(a.config, cfg, seed, out) if kind == "balance" else Generate(a.config, cfg, seed, out, a.target)
            budget = a.budget or problem.budget()
            tracker = Tracker(problem, budget, a.judge_points)
            t = time.time()
            if m in ("playforge", "playforge-seq"):
                run_playforge(problem, tracker, os.path.join(out, "run"), sequential=m == "playforge-seq")
            elif m == "pycma":
                run_pycma(problem, tracker, seed)
            elif m in NEVERGRAD:
                run_nevergrad(m, problem, tracker, seed)
            else:
                raise SystemExit(f"method {m!r}; expected playforge, playforge-seq, pycma or one of {', '.join(NEVERGRAD)}")
            r = {"seed": seed, "reached": tracker.reached(), "judged": tracker.curve[-1][1], "used": tracker.used, "curve": tracker.curve, "seconds": time.time() - t}
            results[m].append(r)
            print(f"seed {seed} {m}: reached at {r['reached']} games, judged F {r['judged']:.4f} at {r['used']} games ({r['seconds']:.0f} s)", flush=True)
    print(f"\n{a.config}: budget {a.budget or 'the config'}, target {problem.target}, seeds {a.seeds}\n")
    print("| method | games to reach the target, median (seeds reaching it) | judged F at the budget, mean [95% CI] |")
    print("|---|---|---|")
    for m, rs in results.items():
        got = [r["reached"] for r in rs if r["reached"] is not None]
        med = f"{statistics.median(got):.0f}" if len(got) * 2 > len(rs) else "not reached"
        mu, h = mean_ci([r["judged"] for r in rs])
        print(f"| {m} | {med} ({len(got)} of {len(rs)}) | {mu:.4f} [{mu - h:.4f}, {mu + h:.4f}] |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"config": a.config, "budget": a.budget, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
