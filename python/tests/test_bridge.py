"""The bridge's clients (docs/bridge.md) — Python's (playforge.bridge), JavaScript's
(games/external/bridge.js, where Node is installed) and C#'s (games/external/Bridge.cs,
compiled by Mono's mcs where tests/csharp-setup.sh could install it) — against one stand-in for
playforge's side:
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
import tempfile

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


# The toy in C#; with `--rng SEED N` it prints the default policy's draws instead (uniform over
# 3 and over N options, softmax of three weights), for the cross-check with Python's.
CS_GAME = r"""
using System;
using System.Collections.Generic;
using Playforge;

static class Toy
{
    static int Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "--rng")
        {
            var g = new SplitMix64(ulong.Parse(args[1]));
            int n = int.Parse(args[2]);
            for (int i = 0; i < 4; i++)
                Console.WriteLine(g.Uniform(3) + " " + g.Uniform(n) + " " + g.Softmax(new[] { 0.5, 1.5, -2.0 }));
            return 0;
        }
        var game = Bridge.Connect("toy", measures: new[] { "turns" }, styles: new[] { "plain" }, variants: new[] { "a" });
        foreach (var ep in game.Episodes())
        {
            var w = Json.Get(ep.Settings, "weights") as List<object>;
            List<double> weights = null;
            if (w != null)
            {
                weights = new List<double>();
                foreach (object x in w) weights.Add(Json.ToDouble(x));
            }
            int a = ep.Select(3), b = ep.Select(2), c = ep.Select(4, weights);
            Console.WriteLine("noise on stdout [" + a + ", " + b + ", " + c + "]");
            ep.Outcome(a + b + c, new Dictionary<string, double> { { "turns", 3 } });
        }
        return 0;
    }
}
"""

_cs_exe = None


def csharp_toy():
    """The C# toy compiled with games/external/Bridge.cs (once), or a skip where Mono is not
    installed (a failure when PLAYFORGE_REQUIRE_CSHARP is set: tests/run installed it)."""
    global _cs_exe
    mcs, mono = shutil.which("mcs"), shutil.which("mono")
    if mcs is None or mono is None:
        if os.environ.get("PLAYFORGE_REQUIRE_CSHARP"):
            pytest.fail("PLAYFORGE_REQUIRE_CSHARP is set but Mono's mcs and mono are missing")
        pytest.skip("Mono (mcs, mono) is not installed: the C# client is not tested here")
    if _cs_exe is None:
        d = tempfile.mkdtemp(prefix="playforge-csharp-")
        src = os.path.join(d, "Toy.cs")
        with open(src, "w") as f:
            f.write(CS_GAME)
        exe = os.path.join(d, "toy.exe")
        r = subprocess.run([mcs, "-langversion:7", "-warnaserror+", f"-out:{exe}", str(ROOT / "games/external/Bridge.cs"), src], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        _cs_exe = exe
    return [mono, _cs_exe]


def game_command(language):
    """The toy game's command line in `language`, or a skip where Node or Mono is not installed."""
    if language == "python":
        return [sys.executable, "-c", GAME]
    if language == "csharp":
        return csharp_toy()
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the JavaScript client is not tested here")
    return [node, "-e", JS_GAME]


LANGUAGES = ["python", "javascript", "csharp"]


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_the_csharp_default_policy_draws_what_pythons_does(seed):
    # n = 2^31 - 1: the product (next >> 11) · n needs 84 bits; C# splits it.
    n = 2**31 - 1
    out = subprocess.run(csharp_toy() + ["--rng", str(seed), str(n)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    g = bridge.SplitMix64(seed)
    want = []
    for _ in range(4):
        want.append(f"{g.uniform(3)} {g.uniform(n)} {g.softmax([0.5, 1.5, -2.0])}")
    assert out.stdout.split("\n")[:4] == want


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
