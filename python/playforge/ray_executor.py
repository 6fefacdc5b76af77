"""The Ray executor behind ``--ray ADDRESS``: the command's batches of jobs run as Ray tasks.

A batch (one optimizer iteration's games, say) is dealt into chunks, about CHUNKS_PER_CPU per
CPU of the cluster, so that a task's fixed cost (≈ 1.4 ms round trip here) stays a small share
of its games; the context (the resolved config, the game's path and content hash) is put in
Ray's object store once per batch. Each worker process builds the context's game once and keeps
it (``_core.run_batch`` caches by the context's hash). Results come back in job order. A task
whose worker dies is retried by Ray (``max_retries``); the driver's own death is covered by
the command's ``--resume``.

Addresses: ``local`` (a private Ray instance on this machine, all its CPUs), ``local:N`` (with
N CPUs), ``auto`` (the cluster this machine belongs to), or a cluster's address
(``ray://host:10001``, ``host:6379``).
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import List, Tuple

#: Chunks per CPU in a batch: more balance the load, fewer cost less overhead.
CHUNKS_PER_CPU = 1
#: Times Ray re-runs a task whose worker process died.
MAX_RETRIES = 3

INSTALL = "pip install 'playforge[ray]' (or `bash python/setup.sh`, which puts it in .venv)"


def _run_chunk(kind: str, context: str, jobs: List[str]) -> Tuple[str, List[str]]:
    import ray

    from playforge import _core

    node = ray.get_runtime_context().get_node_id()
    return node, _core.run_batch(kind, context, jobs)


def _warm() -> int:
    from playforge import _core

    return len(_core.job_kinds())


class RayExecutor:
    """Runs batches of playforge jobs as Ray tasks."""

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
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.nodes = len([n for n in ray.nodes() if n.get("Alive")])
        self._task = ray.remote(max_retries=MAX_RETRIES, num_cpus=1)(_run_chunk)
        # Start a worker process per CPU and load the extension there now, so that the run's
        # first batch does not pay for it.
        ray.get([ray.remote(num_cpus=1)(_warm).remote() for _ in range(self.cpus)])
        self.jobs_per_node: Counter = Counter()
        self._context = None
        # Commands may call from several threads at once.
        self._lock = threading.Lock()
        self.tasks = 0

    def run(self, kind: str, context: str, jobs: List[str]) -> List[str]:
        ray = self._ray
        # A run sends the same context with every batch: put it in the object store once.
        with self._lock:
            if self._context is None or self._context[0] != context:
                self._context = (context, ray.put(context))
            ctx = self._context[1]
        k = max(1, min(len(jobs), self.cpus * CHUNKS_PER_CPU))
        # Job i goes to chunk i mod k: every chunk gets a share of each kind of game in the
        # batch (a batch lists its games pair by pair, and pairs differ in cost).
        refs = [self._task.remote(kind, ctx, jobs[c::k]) for c in range(k)]
        out: List[str] = [""] * len(jobs)
        for c, (node, results) in enumerate(ray.get(refs)):
            if len(results) != len(range(c, len(jobs), k)):
                raise RuntimeError(f"a Ray task returned {len(results)} results for {len(range(c, len(jobs), k))} jobs")
            out[c::k] = results
            with self._lock:
                self.jobs_per_node[node] += len(results)
        with self._lock:
            self.tasks += len(refs)
        return out

    def describe(self) -> str:
        per_node = ", ".join(f"{node[:8]}: {n}" for node, n in sorted(self.jobs_per_node.items()))
        return (
            f"ray ({self.address}): {self.cpus} CPUs on {self.nodes} node(s); "
            f"{sum(self.jobs_per_node.values())} jobs in {self.tasks} tasks; jobs per node: {per_node or 'none'}"
        )


def connect(address: str) -> RayExecutor:
    """The executor of ``--ray ADDRESS`` (what ``_core.set_ray_connector`` installs)."""
    return RayExecutor(address)
