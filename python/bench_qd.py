"""playforge's quality-diversity search against pyribs's, side by side in one run.

For a map config (``configs/generate_hex_map.toml``, ``configs/generate_match3_map.toml``) and
each seed, four runs share one game budget (the config's ``max_evaluations`` × ``games`` × the
tables, or ``--evaluations``):

* playforge CMA-ME and playforge MAP-Elites: the command line's run (``playforge.main``),
  confirmations of elites on fresh seeds part of the budget;
* pyribs CMA-ME: a ``GridArchive`` of the config's descriptors and bins, as many
  ``EvolutionStrategyEmitter``s (``2imp`` ranker, CMA-ES, σ0, λ as the config's ``[cma]``) as the
  config has emitters, driven by a ``Scheduler``; its samples are clipped into [0, 1] when they
  are played (with bounds, pyribs's CMA-ES redraws until every gene is inside, which in the hex
  map's 48 dimensions runs for minutes per batch);
* pyribs CMA-MAE (``--algorithms cma-mae``): the same emitters with the ``imp`` ranker, μ
  selection and CMA-ES's own restart rule over an archive of learning rate α (the config's
  ``[qd] learning_rate``, 0.01 by default), its results kept in a second archive;
* pyribs MAP-Elites: the same archive with a ``GaussianEmitter`` (σ and batch of the config's
  ``[qd]``),

both pyribs runs starting from the same number of random candidates as playforge's (and more,
in batches, until one is feasible: pyribs's emitters restart from elites) and
evaluating every candidate through ``Generate.evaluate_genes`` (the same games, the config's
``games`` per table, common random numbers per iteration). pyribs's objective is the quality F of
feasible candidates and F − 2 of infeasible ones, whose archive threshold −0.5 keeps them out;
genes that break a constraint are infeasible without a game and do not count as an evaluation
(pyribs cannot know the constraints; playforge's searches redraw such genes for free), up to 100
proposals per evaluation.

Every final archive is then judged the same way: each elite played again on seeds no run used,
``verify_games`` per table, and judged on those games twice — as the config asks (``certain``
requirements by their whole 95% interval) and as ``playforge verify`` does (by their
estimates); a judged archive keeps per cell the best elite that is feasible there. Its QD-score is the sum of F over its cells. The table gives the mean
over seeds with a 95% t interval, and the archive's own QD-score as its run reported it.

    bash python/bench_qd.sh configs/generate_hex_map.toml --evaluations 6000 --seeds 1 2 3
"""

import argparse
import glob
import json
import math
import os
import sys
import time
import tomllib

import numpy as np

import playforge

JUDGE_ITERATION = 1 << 40  # a stream no run's iterations reach


def cell_of(cfg, values):
    """The archive cell of descriptor values (edge bins take what falls outside)."""
    idx = []
    for d, v in zip(cfg["descriptor"], values):
        b = int(math.floor((v - d["min"]) / (d["max"] - d["min"]) * d["bins"]))
        idx.append(min(max(b, 0), d["bins"] - 1))
    return tuple(idx)


def judge(run, cfg, elites, seed_tag, games=None):
    """Plays every elite (genes) again on fresh seeds, ``verify_games`` per table, and judges it
    twice on the same games: as the config asks (``certain`` requirements by their whole 95%
    interval) and as ``playforge verify`` does (by their estimates). Per judge, the best elite
    feasible in each cell. Returns {judge: (QD-score, cells)}."""
    g = cfg["generate"]
    games = games or g.get("verify_games", g.get("confirm_games", 40))
    out = {}
    # Without a `certain` requirement or target both judges read the same games the same way: play once.
    strict_differs = any(t.get("certain", False) for t in cfg.get("require", []) + cfg.get("target", []))
    evals = None
    for name, strict in [("certain", True), ("estimate", False)]:
        if not elites:
            out[name] = (0.0, 0)
            continue
        if evals is None or strict_differs:
            evals = run.evaluate_genes(elites, iteration=JUDGE_ITERATION + seed_tag, games=games, who=list(range(len(elites))), confirm=strict)
        best = {}
        for e in evals:
            if not e["feasible"]:
                continue
            c = cell_of(cfg, [d["mean"] for d in e["descriptors"]])
            best[c] = max(best.get(c, 0.0), e["f"])
        out[name] = (sum(best.values()), len(best))
    return out


def budget_games(run, cfg, evaluations):
    tables = len({tuple(m["players"]) for m in cfg.get("measure", [])}) or 1
    return evaluations * cfg["generate"].get("games", 4) * tables


def playforge_run(config, seed, algorithm, evaluations, out):
    """playforge's own run, as the command line makes it (a sequential confirmation plays its
    own games, which the ask/tell cannot hand out)."""
    with open(config, "rb") as f:
        name = tomllib.load(f)["generate"]["name"]
    argv = ["generate", config, "--seed", str(seed), "--algorithm", algorithm, "--evaluations", str(evaluations), "--out", out, "-q"]
    if playforge.main(argv) != 0:
        raise SystemExit(f"playforge {' '.join(argv)} failed")
    run_dir = os.path.join(out, name, f"{algorithm}-seed-{seed}")
    elites = []
    for path in sorted(glob.glob(os.path.join(run_dir, "elites", "*.toml"))):
        with open(path, "rb") as f:
            elites.append([float(g) for g in tomllib.load(f)["genes"].values()])
    with open(os.path.join(run_dir, "checkpoint.json")) as f:
        ck = json.load(f)
    own = sum(e["eval"]["f"] for e in ck["archive"]["cells"].values())
    return elites, own, ck["games_played"]


def pyribs_run(config, cfg, seed, algorithm, evaluations, out):
    from ribs.archives import GridArchive
    from ribs.emitters import EvolutionStrategyEmitter, GaussianEmitter
    from ribs.schedulers import Scheduler

    run = playforge.Generate(config, seed=seed, algorithm="cma-me", evaluations=evaluations, out=out)
    n = len(run.gene_names())
    qd = cfg.get("qd", {})
    cma = cfg.get("cma", {})
    descs = cfg["descriptor"]
    mae = algorithm == "cma-mae"

    def grid(rate):
        return GridArchive(
            solution_dim=n,
            dims=[d["bins"] for d in descs],
            ranges=[(d["min"], d["max"]) for d in descs],
            learning_rate=rate,
            threshold_min=-0.5,
            seed=seed,
        )

    # CMA-MAE searches a soft archive (learning rate α) and keeps its results in a second one.
    archive = grid(qd.get("learning_rate", 0.01) if mae else 1.0)
    result = grid(1.0) if mae else archive
    rng = np.random.default_rng(seed)
    budget = budget_games(run, cfg, evaluations)
    used = 0
    it = 0
    evaluated = 0
    proposed = 0

    def evaluate(xs):
        nonlocal used, it, evaluated, proposed
        evals = run.evaluate_genes([list(map(float, np.clip(x, 0.0, 1.0))) for x in xs], iteration=it)
        it += 1
        evaluated += sum(1 for e in evals if e["games"] > 0)
        proposed += len(evals)
        used += sum(e["games"] for e in evals) * max(1, len({tuple(m["players"]) for m in cfg.get("measure", [])}))
        obj = np.array([e["f"] if e["feasible"] else e["f"] - 2.0 for e in evals])
        meas = np.array([[d["mean"] for d in e["descriptors"]] if e["descriptors"] else [descs[k]["min"] for k in range(len(descs))] for e in evals])
        return obj, meas

    initial = rng.uniform(0.0, 1.0, size=(qd.get("initial", 20), n))
    obj, meas = evaluate(initial)
    archive.add(initial, obj, meas)
    if mae:
        result.add(initial, obj, meas)
    # pyribs's emitters restart from an elite, so they start once there is one: random
    # candidates (in the budget) until then.
    while archive.empty and used < budget and evaluated < evaluations and proposed < 100 * evaluations:
        more = rng.uniform(0.0, 1.0, size=(qd.get("batch", 8), n))
        obj, meas = evaluate(more)
        archive.add(more, obj, meas)
        if mae:
            result.add(more, obj, meas)
    if archive.empty:
        return run, [], 0.0, used
    bounds = [(0.0, 1.0)] * n
    if algorithm in ("cma-me", "cma-mae"):
        lam = cma.get("lambda") or 4 + int(3 * math.log(n))
        # CMA-ME: the two-stage improvement ranker; CMA-MAE: improvement over the thresholds,
        # μ selection, restarts by CMA-ES's own rule (pyribs's CMA-MAE tutorial).
        kw = dict(ranker="imp", selection_rule="mu", restart_rule="basic") if mae else dict(ranker="2imp")
        emitters = [
            EvolutionStrategyEmitter(archive, x0=rng.uniform(0.0, 1.0, n), sigma0=cma.get("sigma0", 0.2), batch_size=lam, seed=seed * 100 + k, **kw)
            for k in range(qd.get("emitters", 2))
        ]
    else:
        emitters = [GaussianEmitter(archive, sigma=qd.get("sigma", 0.1), initial_solutions=initial, bounds=bounds, batch_size=qd.get("batch", 8), seed=seed * 100)]
    scheduler = Scheduler(archive, emitters, result_archive=result if mae else None)
    # The game budget and the evaluations; genes that break a constraint cost nothing (as
    # playforge's searches redraw them), but at most 100 proposals per evaluation.
    while used < budget and evaluated < evaluations and proposed < 100 * evaluations:
        xs = scheduler.ask()
        obj, meas = evaluate(xs)
        scheduler.tell(obj, meas)
    elites = [list(map(float, np.clip(x, 0.0, 1.0))) for x in result.data("solution")]
    own = float(sum(o for o in result.data("objective") if o >= 0.0))
    return run, elites, own, used


def mean_ci(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    t = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}.get(len(xs), 2.0)
    return m, t * sd / math.sqrt(len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--evaluations", type=int, default=None, help="candidate evaluations per run (default: the config's max_evaluations)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--out", default="outputs/bench_qd")
    ap.add_argument("--json", default=None, help="also write the figures here")
    ap.add_argument("--verify-games", type=int, default=None, help="games per table for judging each elite (default: the config's verify_games)")
    ap.add_argument("--algorithms", nargs="+", default=["cma-me", "map-elites"], choices=["cma-me", "cma-mae", "map-elites"], help="the searches to compare (default CMA-ME and MAP-Elites)")
    ap.add_argument("--no-pyribs", action="store_true", help="playforge's runs only")
    a = ap.parse_args()
    with open(a.config, "rb") as f:
        cfg = tomllib.load(f)
    evaluations = a.evaluations or cfg["generate"]["max_evaluations"]
    methods = [f"{who} {algo}" for algo in a.algorithms for who in (["playforge"] if a.no_pyribs else ["playforge", "pyribs"])]
    rows = {(k, j): [] for k in methods for j in ["certain", "estimate"]}
    detail = []
    for seed in a.seeds:
        for algo in a.algorithms:
            t = time.time()
            elites, own, games = playforge_run(a.config, seed, algo, evaluations, os.path.join(a.out, f"playforge-{algo}"))
            judge_run = playforge.Generate(a.config, seed=seed, algorithm="cma-me", evaluations=evaluations, out=os.path.join(a.out, "judge"))
            j = judge(judge_run, cfg, elites, seed, a.verify_games)
            del judge_run  # releases its folder's lock for the next one
            for name, (q, _) in j.items():
                rows[(f"playforge {algo}", name)].append(q)
            detail.append({"method": f"playforge {algo}", "seed": seed, "judged": j, "own_qd": own, "elites": len(elites), "games": games, "seconds": time.time() - t})
            print(json.dumps(detail[-1]), flush=True)
            if a.no_pyribs:
                continue
            t = time.time()
            run, elites, own, used = pyribs_run(a.config, cfg, seed, algo, evaluations, os.path.join(a.out, f"pyribs-{algo}"))
            j = judge(run, cfg, elites, seed, a.verify_games)
            del run
            for name, (q, _) in j.items():
                rows[(f"pyribs {algo}", name)].append(q)
            detail.append({"method": f"pyribs {algo}", "seed": seed, "judged": j, "own_qd": own, "elites": len(elites), "games": used, "seconds": time.time() - t})
            print(json.dumps(detail[-1]), flush=True)
    print()
    print(f"{a.config}: {evaluations} evaluations per run, seeds {a.seeds}; QD-score of each final archive judged on fresh seeds")
    print("| method | judged as the config asks (certain), mean [95% CI] | per seed | judged by estimates (verify), mean [95% CI] | per seed |")
    print("|---|---|---|---|---|")
    for k in methods:
        cells = []
        for name in ["certain", "estimate"]:
            xs = rows[(k, name)]
            m, h = mean_ci(xs)
            cells.append(f"{m:.2f} [{m - h:.2f}, {m + h:.2f}] | {', '.join(f'{x:.2f}' for x in xs)}")
        print(f"| {k} | {' | '.join(cells)} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"config": a.config, "evaluations": evaluations, "seeds": a.seeds, "runs": detail}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
