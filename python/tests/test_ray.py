"""The same run, everywhere: the shipped balance config run locally, on a private Ray instance
with 1 and 2 CPUs, and on a three-node cluster that loses a worker node in the middle of the run,
writes byte-identical outputs (the wall clock and the executor's summary apart). The cluster's
worker nodes are hosts of their own on a bridge, each in a network namespace behind a veth link,
where this machine allows it (root and iproute2: `netns_cluster.py`); elsewhere they are
`ray.cluster_utils.Cluster`'s nodes in this namespace."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import netns_cluster
from conftest import BOOKKEEPING, ROOT, outputs, playforge, ray_or_skip

CONFIG = "configs/hexmage_balance.toml"
RUN = Path("hexmage_balance/cma-seed-1")


def shared_out(tmp_path_factory) -> Path:
    """The one ``--out`` of every run here (the folder is written into config.toml)."""
    return tmp_path_factory.getbasetemp() / "out"


def run_into(args, run: Path, out: Path, keep: Path, *extra: str, timeout: int = 600) -> Path:
    """``playforge ARGS`` into ``out``, its run folder ``run`` then moved to ``keep``."""
    shutil.rmtree(out, ignore_errors=True)
    playforge([*args, "--quiet", "--out", str(out), *extra], timeout=timeout)
    shutil.move(str(out / run), str(keep))
    return keep


def balance(out: Path, keep: Path, *extra: str) -> Path:
    """The shipped balance run into ``out``, its folder then moved to ``keep``."""
    return run_into(["balance", CONFIG], RUN, out, keep, *extra)


def same(a: Path, b: Path):
    oa, ob = outputs(a), outputs(b)
    assert len(oa) >= 5, sorted(oa)
    assert sorted(oa) == sorted(ob)
    for name in oa:
        assert oa[name] == ob[name], f"{name} differs between {a} and {b}"


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    return balance(shared_out(tmp_path_factory), tmp_path_factory.mktemp("local") / "run")


@pytest.mark.parametrize("address", ["local:1", "local:2"])
def test_ray_local_writes_the_local_outputs(tmp_path, tmp_path_factory, local_run, address):
    ray_or_skip()
    run = balance(shared_out(tmp_path_factory), tmp_path / "ray", "--ray", address)
    same(local_run, run)
    assert "history.csv" in outputs(run) and "best_encounter.toml" in outputs(run)
    summary = (run / "executor.txt").read_text()
    cpus = address.split(":")[1]
    assert f"{cpus} CPUs on 1 node" in summary, summary


PERSONAS = ["personas", "configs/personas_quick.toml", "--generations", "3", "--only", "MaxS"]
PERSONAS_RUN = Path("personas_quick/seed-1")


def personas(out: Path, keep: Path, *extra: str) -> Path:
    """A short persona run (three generations of MaxS, then its held-out table) into ``out``."""
    return run_into(PERSONAS, PERSONAS_RUN, out, keep, *extra)


@pytest.fixture(scope="module")
def local_personas(tmp_path_factory):
    return personas(shared_out(tmp_path_factory), tmp_path_factory.mktemp("local-personas") / "run")


def test_personas_on_ray_local_write_the_local_outputs(tmp_path, tmp_path_factory, local_personas):
    ray_or_skip()
    run = personas(shared_out(tmp_path_factory), tmp_path / "ray", "--ray", "local:2")
    same(local_personas, run)
    assert "MaxS/history.csv" in outputs(run) and "held_out.md" in outputs(run)


def run_losing_a_node(cluster, doomed, args, out: Path, progress_file: Path, rows: int) -> str:
    """Runs ``playforge ARGS --out OUT --ray CLUSTER`` and removes node ``doomed`` once
    ``progress_file`` has ``rows`` lines, while the run goes on; returns its stdout."""
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "playforge", *args, "--quiet", "--out", str(out), "--ray", cluster.address],
        cwd=ROOT,
        env=netns_cluster.env(),  # a lost machine noticed in seconds, not minutes
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if progress_file.exists() and len(progress_file.read_text().splitlines()) >= rows:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before a node could be removed:\n" + proc.communicate()[1]
    at_removal = len(progress_file.read_text().splitlines())
    cluster.remove_node(doomed)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    assert len(progress_file.read_text().splitlines()) > at_removal, "nothing ran after the node was removed"
    assert "executor: ray" in stdout
    return stdout


#: Worker nodes each in a network namespace of their own on a veth link (as root, with
#: iproute2), else ``ray.cluster_utils.Cluster``'s nodes, which share this one.
CLUSTER = "netns" if netns_cluster.available() else "shared-namespace"


def start_cluster(kind: str):
    if kind == "netns":
        return netns_cluster.NetnsCluster(head_cpus=1)
    from ray.cluster_utils import Cluster

    return Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})


@pytest.mark.parametrize("kind", [CLUSTER])
def test_a_cluster_that_loses_a_node_mid_run_writes_the_local_outputs(kind, tmp_path, tmp_path_factory, local_run, local_personas):
    ray_or_skip()
    cluster = start_cluster(kind)
    try:
        first = cluster.add_node(num_cpus=1)
        second = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        if kind == "netns":
            # Three hosts: the head on the bridge, each worker behind its own veth link.
            ips = cluster.node_ips()
            assert len(set(ips)) == 3 and all(ip.startswith(cluster.prefix) for ip in ips), ips
        out = shared_out(tmp_path_factory)
        # Balance, losing a worker node after three iterations.
        run_losing_a_node(cluster, first, ["balance", CONFIG], out, out / RUN / "history.csv", 4)
        run = tmp_path / "balance"
        shutil.move(str(out / RUN), str(run))
        same(local_run, run)
        summary = (run / "executor.txt").read_text()
        assert "3 CPUs on 3 node(s)" in summary, summary
        if kind == "netns":
            # Every node played jobs, the lost one among them (its address is in the summary).
            assert all(ip in summary for ip in ips), summary
        # Personas on a fresh three-node cluster, losing a worker node after a generation.
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        run_losing_a_node(cluster, second, PERSONAS, out, out / PERSONAS_RUN / "MaxS/history.csv", 2)
        run = tmp_path / "personas"
        shutil.move(str(out / PERSONAS_RUN), str(run))
        same(local_personas, run)
    finally:
        cluster.shutdown()


def test_bookkeeping_is_only_what_says_how_a_run_ran():
    assert BOOKKEEPING == {"timing.csv", "executor.txt", "checkpoint.json", ".lock", ".playforge"}


GENERATE = ["generate", "configs/generate_hex_map.toml", "--evaluations", "3000"]
GENERATE_RUN = Path("generate_hex_map/cma-me-seed-1")


def generate(out: Path, keep: Path, *extra: str) -> Path:
    """The shipped hex map for 3 000 evaluations (enough to confirm its first elites) into ``out``."""
    return run_into(GENERATE, GENERATE_RUN, out, keep, *extra, timeout=900)


def test_generate_on_ray_local_writes_the_local_archive(tmp_path, tmp_path_factory):
    ray_or_skip()
    local = generate(shared_out(tmp_path_factory), tmp_path / "local")
    run = generate(shared_out(tmp_path_factory), tmp_path / "ray", "--ray", "local:2")
    same(local, run)
    files = outputs(run)
    assert "archive.csv" in files and any(f.startswith("elites/") for f in files), sorted(files)


EXTERNAL = ["playtest", "configs/playtest_external_roguelike.toml", "--replicates", "2", "--rollouts", "300"]
EXTERNAL_RUN = Path("playtest_external_roguelike/seed-1")


def test_an_external_game_on_ray_local_writes_the_local_outputs(tmp_path, tmp_path_factory):
    """A game in its own process (the Python roguelike over the bridge): each Ray task starts
    its own game processes, and the outputs are the local run's."""
    ray_or_skip()
    local = run_into(EXTERNAL, EXTERNAL_RUN, shared_out(tmp_path_factory), tmp_path / "local")
    run = run_into(EXTERNAL, EXTERNAL_RUN, shared_out(tmp_path_factory), tmp_path / "ray", "--ray", "local:2")
    # A replicate's wall-clock seconds are kept beside it (rep-NN.seconds), apart from the record.
    oa, ob = ({k: v for k, v in outputs(f).items() if not k.endswith(".seconds")} for f in (local, run))
    assert sorted(oa) == sorted(ob)
    for name in oa:
        assert oa[name] == ob[name], f"{name} differs between the local run and Ray's"
    assert "summary.md" in ob and "best/unrestricted-deep.trace" in ob, sorted(ob)
