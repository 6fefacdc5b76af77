"""The bridge's clients (docs/bridge.md) — Python's (playforge.bridge) and JavaScript's
(games/external/bridge.js, where Node is installed) — against one stand-in for playforge's side:
the handshake with the nonce, a prefix replayed then the default policy (SplitMix64: the same
numbers in every client), the trace, a prefix the game cannot follow, stop, stdin/stdout, and
a process not started by playforge."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import ROOT
from playforge import bridge

# A game of three decisions (3, 2 and 4 options, the last by weights when asked); its score is
# the sum of the choices.
GAME = r"""
from playforge import bridge
game = bridge.connect("toy", measures=["turns"], styles=["plain"], variants=["a"])
for ep in game.episodes():
    w = ep.settings.get("weights")
    picks = [ep.select(3), ep.select(2), ep.select(4, weights=w)]
    print("noise on stdout", picks)
    ep.outcome(sum(picks), turns=3)
"""


JS_GAME = """
const bridge = require(%s);
(async () => {
  const game = await bridge.connect({ game: "toy", measures: ["turns"], styles: ["plain"], variants: ["a"] });
  for await (const ep of game.episodes()) {
    const picks = [ep.select(3), ep.select(2), ep.select(4, ep.settings.weights)];
    console.log("noise on stdout", picks);
    ep.outcome(picks[0] + picks[1] + picks[2], { turns: 3 });
  }
})();
""" % json.dumps(str(ROOT / "games/external/bridge.js"))


def game_command(language):
    """The toy game's command line in `language`, or a skip where Node is not installed."""
    if language == "python":
        return [sys.executable, "-c", GAME]
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the JavaScript client is not tested here")
    return [node, "-e", JS_GAME]


LANGUAGES = ["python", "javascript"]


def test_splitmix64_is_the_specified_generator():
    g = bridge.SplitMix64(0)
    assert [g.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    g = bridge.SplitMix64(7)
    r = g.next()
    assert bridge.SplitMix64(7).uniform(4) == ((r >> 11) * 4) >> 53
    # Softmax of {1, 2} favours index 1 about 0.73 of the time (Monster Carlo's example).
    g = bridge.SplitMix64(1)
    share = sum(g.softmax([1, 2]) for _ in range(20000)) / 20000
    assert abs(share - 0.731) < 0.02


def talk(f_in, f_out, nonce, episodes):
    """The stand-in: checks the hello, welcomes, plays `episodes`, returns the outcomes."""
    hello = json.loads(f_in.readline())
    assert hello["type"] == "hello" and hello["protocol"] == 1 and hello["nonce"] == nonce
    assert hello["game"] == "toy" and hello["measures"] == ["turns"] and hello["styles"] == ["plain"]
    send = lambda m: (f_out.write(json.dumps(m) + "\n"), f_out.flush())
    send({"type": "welcome", "protocol": 1})
    got = []
    for ep in episodes:
        send(ep)
        line = f_in.readline()
        got.append(json.loads(line) if line else None)
        if got[-1] is None or got[-1]["type"] == "error":
            return got
    send({"type": "stop"})
    return got


def expected(prefix, policy_seed, weights=None):
    g = bridge.SplitMix64(policy_seed)
    picks = list(prefix)
    for n in [3, 2, 4][len(prefix):]:
        picks.append(g.softmax(weights) if (n == 4 and weights) else g.uniform(n))
    return picks


def episodes():
    return [
        {"type": "episode", "id": 0, "seed": "5", "policy_seed": "7", "settings": {}, "prefix": [1, 0]},
        {"type": "episode", "id": 1, "seed": "5", "policy_seed": "18446744073709551615", "settings": {"weights": [0, 0, 0, 9]}, "prefix": []},
    ]


def check(outcomes):
    a, b = outcomes
    assert a["type"] == "outcome" and a["id"] == 0 and a["measures"] == {"turns": 3.0}
    picks = expected([1, 0], 7)
    assert a["trace"] == [[picks[0], 3], [picks[1], 2], [picks[2], 4]] and a["score"] == sum(picks)
    picks = expected([], 2**64 - 1, [0, 0, 0, 9])
    assert [c for c, _ in b["trace"]] == picks and b["id"] == 1


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_game_on_the_socket_replays_the_prefix_then_plays_the_default_policy(language):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    env = {**os.environ, "PLAYFORGE_PROTOCOL": "1", "PLAYFORGE_ADDR": "127.0.0.1", "PLAYFORGE_PORT": str(port), "PLAYFORGE_NONCE": "ab" * 16}
    proc = subprocess.Popen(game_command(language), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    conn, _ = server.accept()
    conn.settimeout(30)
    f_in, f_out = conn.makefile("r"), conn.makefile("w")
    check(talk(f_in, f_out, "ab" * 16, episodes()))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.count("noise on stdout") == 2


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_game_on_stdin_and_stdout_keeps_its_prints_off_the_protocol(language):
    env = {**os.environ, "PLAYFORGE_PROTOCOL": "1", "PLAYFORGE_STDIO": "1", "PLAYFORGE_NONCE": "cd" * 16}
    proc = subprocess.Popen(game_command(language), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(talk(proc.stdout, proc.stdin, "cd" * 16, episodes()))
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 0 and err.count("noise on stdout") == 2


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_prefix_the_game_cannot_follow_is_an_error_message_and_an_exit(language):
    env = {**os.environ, "PLAYFORGE_PROTOCOL": "1", "PLAYFORGE_STDIO": "1", "PLAYFORGE_NONCE": ""}
    proc = subprocess.Popen(game_command(language), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bad = [{"type": "episode", "id": 0, "seed": "1", "policy_seed": "1", "settings": {}, "prefix": [0, 5]}]
    (reply,) = talk(proc.stdout, proc.stdin, "", bad)
    assert reply["type"] == "error" and "prefix entry 1 is 5" in reply["message"]
    assert proc.wait(timeout=30) != 0
    assert "ProtocolError" in proc.stderr.read()


def test_outside_playforge_connect_says_so_and_a_wrong_protocol_is_refused():
    with pytest.raises(bridge.NoDriver):
        bridge.connect("toy", env={})
    with pytest.raises(bridge.ProtocolError, match="speaks 1"):
        bridge.connect("toy", env={"PLAYFORGE_PROTOCOL": "2"})
