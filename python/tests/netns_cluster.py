"""A Ray cluster whose worker nodes are separate hosts on a network: the head in this network
namespace, each worker node in a network namespace of its own, joined to the head by a veth
pair on a bridge (10.x.y.0/24). Nodes reach each other only over those links, as machines on a
LAN do, and a node is removed as a machine that loses power: its link is cut and its processes
are killed.

It offers what the tests use of ``ray.cluster_utils.Cluster`` (``address``, ``add_node``,
``remove_node``, ``wait_for_nodes``, ``shutdown``). It needs root and ``ip`` from iproute2
(``available()`` says whether this machine has them); elsewhere the tests use
``ray.cluster_utils.Cluster``, whose nodes share this namespace.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

#: Ray's failure detection, faster than its defaults so that a lost machine is noticed in
#: seconds: the GCS's health checks of the nodes (by default about 30 s), and the gRPC
#: keepalive that fails a call to a machine that went silent mid-task (by default 2 minutes,
#: as a call to a machine without power gets no answer at all, not even a refusal). Set on
#: every node and on the driver (`env()`).
FAILURE_DETECTION = {
    "RAY_health_check_initial_delay_ms": "500",
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
    "RAY_grpc_client_keepalive_time_ms": "1000",
    "RAY_grpc_client_keepalive_timeout_ms": "2000",
}


#: The cluster's token (Ray's token authentication, as a cluster on a real network should
#: have): every node and driver of this process's clusters gets it.
TOKEN = secrets.token_hex(32)


def env() -> dict:
    """This process's environment with the cluster's failure detection and token."""
    return {**os.environ, **FAILURE_DETECTION, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}


#: Waits until the cluster at argv[1] has argv[2] live nodes (for argv[3] seconds) and prints
#: their addresses as JSON; run in a child process, so that this one never holds Ray state.
_NODES = """
import json, sys, time
import ray._private.state
from ray._raylet import GcsClientOptions
address, want, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
state = ray._private.state.GlobalState()
state._initialize_global_state(GcsClientOptions.create(address, None, allow_cluster_id_nil=True, fetch_cluster_id_if_nil=False))
deadline, live = time.time() + timeout, []
while time.time() < deadline:
    try:
        live = [n["NodeManagerAddress"] for n in state.node_table() if n["Alive"]]
    except Exception:
        live = []
    if len(live) == want:
        break
    time.sleep(0.2)
print(json.dumps(sorted(live)))
"""


def _ip(*args: str, ns: Optional[str] = None) -> None:
    cmd = ["ip", *args] if ns is None else ["ip", "netns", "exec", ns, "ip", *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")


def available() -> bool:
    """Root, ``ip``, and a network namespace that can actually be made here."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    probe = f"pfprobe{os.getpid() % 100000}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode == 0
    if made:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return made


def _ray_bin() -> str:
    return str(Path(sys.executable).with_name("ray"))


@dataclass
class Node:
    index: int
    namespace: str
    veth: str
    ip: str
    proc: subprocess.Popen


class NetnsCluster:
    """A head here and worker nodes in network namespaces of their own (see the module's text)."""

    def __init__(self, head_cpus: int = 1):
        self.tag = f"pf{os.getpid() % 100000}"
        self.bridge = f"{self.tag}br"
        used = subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True).stdout
        third = next(k for k in range(200, 250) if f"10.213.{k}." not in used)
        self.prefix = f"10.213.{third}"
        self.nodes: List[Node] = []
        self._count = 0
        self.temp = tempfile.mkdtemp(prefix="pf-ray-")
        self._cleanups = []
        try:
            _ip("link", "add", "name", self.bridge, "type", "bridge")
            self._cleanups.append(lambda: _ip("link", "del", self.bridge))
            _ip("addr", "add", f"{self.prefix}.1/24", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            port = self._free_port(f"{self.prefix}.1")
            self.address = f"{self.prefix}.1:{port}"
            self._head = self._start(
                None,
                ["--head", f"--node-ip-address={self.prefix}.1", f"--port={port}", f"--num-cpus={head_cpus}",
                 "--include-dashboard=false", f"--temp-dir={self.temp}"],
            )
            self.wait_for_nodes()
        except BaseException:
            self.shutdown()
            raise

    @staticmethod
    def _free_port(host: str) -> int:
        with socket.socket() as s:
            s.bind((host, 0))
            return s.getsockname()[1]

    def _start(self, namespace: Optional[str], args: List[str]) -> subprocess.Popen:
        cmd = [_ray_bin(), "start", "--block", "--disable-usage-stats", *args]
        if namespace is not None:
            cmd = ["ip", "netns", "exec", namespace, *cmd]
        log = open(Path(self.temp) / f"start-{namespace or 'head'}.log", "w")
        # Its own process group, so that the node's processes can be killed together.
        return subprocess.Popen(cmd, env=env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def add_node(self, num_cpus: int = 1) -> Node:
        self._count += 1
        i = self._count
        ns, host_end, node_end = f"{self.tag}n{i}", f"{self.tag}h{i}", f"{self.tag}w{i}"
        _ip("netns", "add", ns)
        self._cleanups.append(lambda: _ip("netns", "del", ns))
        _ip("link", "add", host_end, "type", "veth", "peer", "name", node_end)
        _ip("link", "set", node_end, "netns", ns)
        _ip("link", "set", host_end, "master", self.bridge)
        _ip("link", "set", host_end, "up")
        ip = f"{self.prefix}.{10 + i}"
        _ip("addr", "add", f"{ip}/24", "dev", node_end, ns=ns)
        _ip("link", "set", node_end, "up", ns=ns)
        _ip("link", "set", "lo", "up", ns=ns)
        proc = self._start(ns, [f"--address={self.address}", f"--node-ip-address={ip}", f"--num-cpus={num_cpus}"])
        node = Node(i, ns, host_end, ip, proc)
        self.nodes.append(node)
        # Nodes share the file system: one starting while another does could pick the same
        # socket file names (Ray numbers them by what exists), so each waits for the last.
        self.wait_for_nodes()
        return node

    @property
    def expected(self) -> int:
        """Live nodes there should be: the head and the workers not removed."""
        return 1 + len(self.nodes)

    def _nodes(self, want: int, timeout: float) -> List[str]:
        r = subprocess.run([sys.executable, "-c", _NODES, self.address, str(want), str(timeout)],
                           env=env(), capture_output=True, text=True, timeout=timeout + 60)
        if r.returncode != 0:
            raise RuntimeError(f"reading the cluster's nodes failed:\n{r.stderr[-3000:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])

    def wait_for_nodes(self, timeout: float = 60) -> None:
        live = self._nodes(self.expected, timeout)
        if len(live) != self.expected:
            logs = "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in Path(self.temp).glob("start-*.log"))
            raise TimeoutError(f"{self.expected} Ray nodes expected within {timeout} s, found {live}\n{logs}")

    def node_ips(self) -> List[str]:
        """The addresses the cluster's live nodes registered with."""
        return self._nodes(self.expected, 10)

    def remove_node(self, node: Node) -> None:
        """The node's link cut, then its processes killed: a machine that lost power."""
        _ip("link", "del", node.veth)
        self._kill(node.proc)
        self.nodes.remove(node)

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    def shutdown(self) -> None:
        for node in list(self.nodes):
            self._kill(node.proc)
        if getattr(self, "_head", None) is not None:
            self._kill(self._head)
        # Ray's own processes may outlive `ray start` in another group: everything whose
        # command line names this cluster's temp dir or session goes too.
        me = os.getpid()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == me:
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if self.temp.encode() in cmdline:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for undo in reversed(self._cleanups):
            try:
                undo()
            except RuntimeError:
                pass
        self._cleanups.clear()
        shutil.rmtree(self.temp, ignore_errors=True)
