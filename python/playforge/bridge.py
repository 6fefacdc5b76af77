"""The bridge's Python client (protocol 1, docs/bridge.md): a game in its own process asks
playforge to "pick one of N" at each decision and reports its score at the end.

Standard library only, so that a game can also copy this one file instead of installing the
package. A game written for it::

    from playforge import bridge

    game = bridge.connect("roguelike", measures=["turns"], styles=["unrestricted"])
    for episode in game.episodes():          # until playforge says stop
        world = World(seed=episode.seed, **episode.settings["params"])
        while not world.over():
            moves = world.moves(style=episode.settings.get("style"))
            world.play(moves[episode.select(len(moves))])
        episode.outcome(world.score(), turns=world.turns)

The module-level ``select``, ``outcome`` and ``settings`` act on the episode in progress, for a
game whose decisions are made far from its main loop. Run outside playforge (no
``PLAYFORGE_PROTOCOL`` in the environment), ``connect`` raises ``NoDriver``: the game decides
for itself whether to play for a human instead.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sys
from typing import Dict, Iterator, List, Optional, Sequence

PROTOCOL = 1
MASK = (1 << 64) - 1


class NoDriver(RuntimeError):
    """The process was not started by playforge (no ``PLAYFORGE_PROTOCOL``)."""


class ExperimentFinished(RuntimeError):
    """playforge closed the connection (the run is over or gone): raised by ``episodes``; quit."""


class ProtocolError(RuntimeError):
    """A message the client cannot accept (a wrong protocol, a prefix entry out of range…)."""


class SplitMix64:
    """The default policy's generator, as docs/bridge.md specifies it (every client agrees)."""

    def __init__(self, seed: int):
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self, n: int) -> int:
        return ((self.next() >> 11) * n) >> 53

    def softmax(self, weights: Sequence[float]) -> int:
        top = max(weights)
        p = [math.exp(w - top) for w in weights]
        u = (self.next() >> 11) * 2.0**-53 * sum(p)
        acc = 0.0
        for i, q in enumerate(p):
            acc += q
            if acc > u:
                return i
        return len(p) - 1


class Episode:
    """One playthrough: its seed, its settings, and the choices to make."""

    def __init__(self, link: "Link", msg: dict):
        self._link = link
        self.id = int(msg["id"])
        self.seed = int(msg["seed"])
        self.settings: Dict = msg.get("settings") or {}
        self._prefix: List[int] = [int(c) for c in msg.get("prefix", [])]
        self._rng = SplitMix64(int(msg.get("policy_seed", "0")))
        self.trace: List[List[int]] = []
        self.labels: List[Optional[Sequence[str]]] = []
        self.done = False

    def select(self, n: int, weights: Optional[Sequence[float]] = None, labels: Optional[Sequence[str]] = None) -> int:
        """An index in [0, n): the prefix's next entry, then the default policy (uniform, or
        softmax of ``weights``)."""
        if self.done:
            raise ProtocolError("select after outcome; expected the next episode")
        n = int(n)
        if n < 1:
            raise ProtocolError(f"select({n}); expected at least one option")
        if weights is not None and len(weights) != n:
            raise ProtocolError(f"select({n}) with {len(weights)} weights; expected one per option")
        k = len(self.trace)
        if k < len(self._prefix):
            choice = self._prefix[k]
            if not 0 <= choice < n:
                self._link.send({"type": "error", "message": f"prefix entry {k} is {choice}, but the game offers {n} options"})
                raise ProtocolError(f"prefix entry {k} is {choice} with {n} options: the game is not deterministic under its seed")
        else:
            choice = self._rng.softmax(weights) if weights is not None else self._rng.uniform(n)
        self.trace.append([choice, n])
        self.labels.append(list(labels) if labels is not None else None)
        return choice

    def outcome(self, score: float, **measures: float) -> None:
        """Ends the episode: its score, its measures, and the whole trace go to playforge."""
        if self.done:
            raise ProtocolError("a second outcome for one episode")
        self.done = True
        self._link.send({"type": "outcome", "id": self.id, "score": float(score), "measures": {k: float(v) for k, v in measures.items()}, "trace": self.trace})


class Link:
    """One JSON line per message, on a socket or on stdin/stdout."""

    def __init__(self, env: Dict[str, str]):
        if env.get("PLAYFORGE_STDIO") == "1":
            self._in, self._out = sys.stdin, sys.stdout
            # Whatever else the game prints must not reach the protocol stream.
            sys.stdout = sys.stderr
        else:
            sock = socket.create_connection((env["PLAYFORGE_ADDR"], int(env["PLAYFORGE_PORT"])))
            self._in = sock.makefile("r", encoding="utf-8", newline="\n")
            self._out = sock.makefile("w", encoding="utf-8", newline="\n")

    def send(self, msg: dict) -> None:
        self._out.write(json.dumps(msg, separators=(",", ":")) + "\n")
        self._out.flush()

    def receive(self) -> dict:
        line = self._in.readline()
        if not line:
            raise ExperimentFinished("playforge closed the connection")
        return json.loads(line)


class Game:
    """A connected game: ``episodes()`` yields what playforge asks it to play."""

    def __init__(self, link: Link, env: Dict[str, str]):
        self._link = link
        self.settings: Dict = json.loads(env.get("PLAYFORGE_SETTINGS") or "{}")
        self.current: Optional[Episode] = None

    def episodes(self) -> Iterator[Episode]:
        while True:
            if self.current is not None and not self.current.done:
                raise ProtocolError(f"episode {self.current.id} ended without an outcome")
            msg = self._link.receive()
            kind = msg.get("type")
            if kind == "stop":
                return
            if kind != "episode":
                raise ProtocolError(f"message {kind!r}; expected an episode or stop")
            self.current = Episode(self._link, msg)
            self.settings = self.current.settings
            yield self.current

    def log(self, message: str) -> None:
        self._link.send({"type": "log", "message": str(message)})


_game: Optional[Game] = None


def connect(game: str, params: Sequence[dict] = (), measures: Sequence[str] = (), styles: Sequence[str] = (), variants: Sequence[str] = (), env: Optional[Dict[str, str]] = None) -> Game:
    """Connects to the playforge that started this process and introduces the game: its name,
    its declared parameters (``{"name", "min", "max", "integer"}``), the measures its outcomes
    report, its play styles and design variants."""
    global _game
    env = dict(os.environ if env is None else env)
    if "PLAYFORGE_PROTOCOL" not in env:
        raise NoDriver("not started by playforge (no PLAYFORGE_PROTOCOL in the environment)")
    if env["PLAYFORGE_PROTOCOL"] != str(PROTOCOL):
        raise ProtocolError(f"PLAYFORGE_PROTOCOL={env['PLAYFORGE_PROTOCOL']}; this client speaks {PROTOCOL}")
    link = Link(env)
    link.send({
        "type": "hello",
        "protocol": PROTOCOL,
        "nonce": env.get("PLAYFORGE_NONCE", ""),
        "game": str(game),
        "params": [dict(p) for p in params],
        "measures": [str(m) for m in measures],
        "styles": [str(s) for s in styles],
        "variants": [str(v) for v in variants],
    })
    answer = link.receive()
    if answer.get("type") != "welcome":
        raise ProtocolError(f"playforge refused the game: {answer.get('message', answer)}")
    _game = Game(link, env)
    return _game


def _episode() -> Episode:
    if _game is None or _game.current is None or _game.current.done:
        raise ProtocolError("no episode in progress; expected connect() and an episode from episodes()")
    return _game.current


def select(n: int, weights: Optional[Sequence[float]] = None, labels: Optional[Sequence[str]] = None) -> int:
    """``select`` of the episode in progress."""
    return _episode().select(n, weights, labels)


def outcome(score: float, **measures: float) -> None:
    """``outcome`` of the episode in progress."""
    _episode().outcome(score, **measures)


def settings() -> Dict:
    """The settings of the episode in progress (before the first: the worker's, from
    ``PLAYFORGE_SETTINGS``)."""
    if _game is None:
        return json.loads(os.environ.get("PLAYFORGE_SETTINGS") or "{}")
    return _game.settings
