"""The Ray executor behind ``--ray ADDRESS``: the command's batches of jobs run as Ray tasks.

One task per node and batch: a batch (one optimizer iteration's games, say) is dealt over the
cluster's CPUs (job i to CPU slot i mod CPUs, slots grouped by node), and each node's share runs
as one task that holds all the node's CPUs and plays its jobs on that many threads (the Rust
side's rayon pool, which balances the load inside the node as the local executor does). So a
batch costs one task's fixed cost (≈ 1–2 ms here) per node, not per job, and no CPU of a node
idles while another of the same node has work. The context (the resolved config, the game's
path and content hash) is put in the object store once per run, and each worker process builds
it once (``_core.run_batch`` caches by the context's hash). Results come back in job order.
(A small context, under ``INLINE_CONTEXT``, travels inline with each task instead: on this
2-core machine that is about 0.8 ms per task quicker than fetching it from the object store.)

A task is placed on its node softly: when that node is gone, Ray runs it elsewhere; a task
whose worker dies is retried (``max_retries``). The list of nodes is read again after a failure
and every few seconds. The driver's own death is covered by the command's ``--resume``.

Addresses: ``local`` (a private Ray instance on this machine, all its CPUs), ``local:N`` (with
N CPUs), ``auto`` (the cluster this machine belongs to), or a cluster's address
(``ray://host:10001``, ``host:6379``).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Dict, List, Tuple

#: Times Ray re-runs a task whose worker process or node died.
MAX_RETRIES = 3
#: Contexts shorter than this (characters) travel inline with each task, not by the object store.
INLINE_CONTEXT = 64 * 1024
#: Seconds between readings of the cluster's nodes.
NODES_EVERY_S = 5.0

INSTALL = "pip install 'playforge[ray]' (or `bash python/setup.sh`, which puts it in .venv)"


def _run_share(kind: str, context: str, jobs: List[str], threads: int) -> Tuple[str, float, List[str]]:
    from playforge import _core
    import ray

    node = ray.get_runtime_context().get_node_id()
    t = time.perf_counter()
    out = _core.run_batch(kind, context, jobs, threads)
    return node, time.perf_counter() - t, out


def _warm() -> int:
    from playforge import _core

    return len(_core.job_kinds())


def deal(n: int, nodes: List[Tuple[str, int]]) -> Dict[str, List[int]]:
    """Job indices per node: job i goes to CPU slot i mod (all CPUs), slots node by node."""
    slots = [node for node, cpus in nodes for _ in range(cpus)]
    share: Dict[str, List[int]] = {node: [] for node, _ in nodes}
    for i in range(n):
        share[slots[i % len(slots)]].append(i)
    return {node: idx for node, idx in share.items() if idx}


class RayExecutor:
    """Runs batches of playforge jobs as Ray tasks, one per node."""

    def __init__(self, address: str):
        try:
            import ray
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise RuntimeError(f"--ray {address}: Ray is not installed ({e}); install it with {INSTALL}") from None
        self._ray = ray
        self.address = address
        kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level="WARNING", configure_logging=True)
        if not ray.is_initialized():
            if address == "local" or address.startswith("local:"):
                cpus = int(address.split(":", 1)[1]) if ":" in address else None
                ray.init(num_cpus=cpus, **kwargs)
            else:
                ray.init(address=address, **kwargs)
        self._task = ray.remote(max_retries=MAX_RETRIES)(_run_share)
        self._lock = threading.Lock()
        self._addresses: Dict[str, str] = {}
        self._read_nodes()
        self.cpus = sum(c for _, c in self._nodes)
        self.nodes = len(self._nodes)
        # Start the worker processes and load the extension there now, so that the run's first
        # batch does not pay for it.
        ray.get([self._on(node, cpus, _warm).remote() for node, cpus in self._nodes])
        self.jobs_per_node: Counter = Counter()
        self._context = None
        self.tasks = 0

    def _read_nodes(self):
        alive = [n for n in self._ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
        self._nodes = sorted((n["NodeID"], int(n["Resources"]["CPU"])) for n in alive)
        # Addresses of every node seen, the ones lost since among them (for the summary).
        self._addresses.update((n["NodeID"], n.get("NodeManagerAddress", "?")) for n in alive)
        self._nodes_at = time.monotonic()
        if not self._nodes:
            raise RuntimeError(f"--ray {self.address}: the cluster has no node with a CPU")

    def _on(self, node: str, cpus: int, fn=None):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = self._task if fn is None else self._ray.remote(fn)
        return remote.options(num_cpus=cpus, scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=True))

    def run(self, kind: str, context: str, jobs: List[str]) -> List[str]:
        ray = self._ray
        with self._lock:
            if time.monotonic() - self._nodes_at > NODES_EVERY_S:
                self._read_nodes()
            nodes = list(self._nodes)
            # A run sends the same context with every batch: a large one goes to the object
            # store once; a small one travels inline with the task, which is quicker than every
            # task fetching it from the object store.
            if len(context) < INLINE_CONTEXT:
                ctx = context
            else:
                if self._context is None or self._context[0] != context:
                    self._context = (context, ray.put(context))
                ctx = self._context[1]
        shares = deal(len(jobs), nodes)
        cpus = dict(nodes)
        refs = [self._on(node, cpus[node]).remote(kind, ctx, [jobs[i] for i in idx], cpus[node]) for node, idx in shares.items()]
        try:
            results = ray.get(refs)
        except Exception:
            with self._lock:
                self._nodes_at = 0.0  # read the nodes again before the next batch
            raise
        out: List[str] = [""] * len(jobs)
        for idx, (node, _seconds, outputs) in zip(shares.values(), results):
            if len(outputs) != len(idx):
                raise RuntimeError(f"a Ray task returned {len(outputs)} results for {len(idx)} jobs")
            for i, o in zip(idx, outputs):
                out[i] = o
            with self._lock:
                self.jobs_per_node[node] += len(idx)
        with self._lock:
            self.tasks += len(refs)
        return out

    def describe(self) -> str:
        named = sorted((self._addresses.get(node, "?"), node[:8], n) for node, n in self.jobs_per_node.items())
        per_node = ", ".join(f"{address} {node}: {n}" for address, node, n in named)
        return (
            f"ray ({self.address}): {self.cpus} CPUs on {self.nodes} node(s); "
            f"{sum(self.jobs_per_node.values())} jobs in {self.tasks} tasks; jobs per node: {per_node or 'none'}"
        )


def connect(address: str) -> RayExecutor:
    """The executor of ``--ray ADDRESS`` (what ``_core.set_ray_connector`` installs)."""
    return RayExecutor(address)
