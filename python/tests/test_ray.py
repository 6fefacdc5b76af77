"""The same run, everywhere: the shipped balance config run locally, on a private Ray instance
with 1 and 2 CPUs, and on a three-node cluster that loses a worker node in the middle of the run,
writes byte-identical outputs (the wall clock and the executor's summary apart)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BOOKKEEPING, ROOT, outputs, playforge, ray_or_skip

CONFIG = "configs/hexmage_balance.toml"
RUN = Path("hexmage_balance/cma-seed-1")


def shared_out(tmp_path_factory) -> Path:
    """The one ``--out`` of every run here (the folder is written into config.toml)."""
    return tmp_path_factory.getbasetemp() / "out"


def balance(out: Path, keep: Path, *extra: str) -> Path:
    """The shipped balance run into ``out``, its folder then moved to ``keep``."""
    shutil.rmtree(out, ignore_errors=True)
    playforge(["balance", CONFIG, "--quiet", "--out", str(out), *extra], timeout=600)
    shutil.move(str(out / RUN), str(keep))
    return keep


def same(a: Path, b: Path):
    oa, ob = outputs(a), outputs(b)
    assert "history.csv" in oa and "best_encounter.toml" in oa, sorted(oa)
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
    summary = (run / "executor.txt").read_text()
    cpus = address.split(":")[1]
    assert f"{cpus} CPUs on 1 node" in summary, summary


def test_a_cluster_that_loses_a_node_mid_run_writes_the_local_outputs(tmp_path, tmp_path_factory, local_run):
    ray_or_skip()
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        doomed = cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        out = shared_out(tmp_path_factory)
        shutil.rmtree(out, ignore_errors=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "playforge", "balance", CONFIG, "--quiet", "--out", str(out), "--ray", cluster.address],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        history = out / RUN / "history.csv"
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            if history.exists() and len(history.read_text().splitlines()) >= 4:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before a node could be removed:\n" + proc.communicate()[1]
        rows_at_removal = len(history.read_text().splitlines()) - 1
        cluster.remove_node(doomed)
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr
        rows = len(history.read_text().splitlines()) - 1
        assert rows > rows_at_removal, "no iteration ran after the node was removed"
        run = tmp_path / "cluster"
        shutil.move(str(out / RUN), str(run))
        same(local_run, run)
        summary = (run / "executor.txt").read_text()
        assert "3 CPUs on 3 node(s)" in summary, summary
        assert "executor: ray" in stdout
    finally:
        cluster.shutdown()


def test_bookkeeping_is_only_what_says_how_a_run_ran():
    assert BOOKKEEPING == {"timing.csv", "executor.txt", "checkpoint.json", ".lock", ".playforge"}
