// The bridge's JavaScript client (protocol 1, docs/bridge.md): a game in its own Node process
// asks playforge to "pick one of N" at each decision and reports its score at the end. One
// file, no dependencies: copy it beside the game.
//
//   const bridge = require("./bridge.js");
//   const game = await bridge.connect({ game: "deckbuilder", measures: ["turns"] });
//   for await (const episode of game.episodes()) {      // until playforge says stop
//     const world = new World(episode.seed, episode.settings.params);
//     while (!world.over()) world.play(world.moves()[episode.select(world.moves().length)]);
//     episode.outcome(world.score(), { turns: world.turns });
//   }
//
// `select` is synchronous (the prefix, then the default policy, in this process); only the
// start of an episode waits for playforge. Seeds are BigInt (a 64-bit seed does not fit a
// double). Outside playforge (no PLAYFORGE_PROTOCOL) `connect` throws a NoDriver error.
"use strict";

const net = require("net");
const readline = require("readline");

const PROTOCOL = 1;
const MASK = (1n << 64n) - 1n;

class NoDriver extends Error {
  constructor(message) {
    super(message);
    this.name = "NoDriver";
  }
}
class ProtocolError extends Error {
  constructor(message) {
    super(message);
    this.name = "ProtocolError";
  }
}

/** The default policy's generator, as docs/bridge.md specifies it (every client agrees). */
class SplitMix64 {
  constructor(seed) {
    this.state = BigInt(seed) & MASK;
  }
  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }
  uniform(n) {
    return Number(((this.next() >> 11n) * BigInt(n)) >> 53n);
  }
  softmax(weights) {
    const top = Math.max(...weights);
    const p = weights.map((w) => Math.exp(w - top));
    const u = Number(this.next() >> 11n) * 2 ** -53 * p.reduce((a, b) => a + b, 0);
    let acc = 0;
    for (let i = 0; i < p.length; i++) {
      acc += p[i];
      if (acc > u) return i;
    }
    return p.length - 1;
  }
}

/** One playthrough: its seed, its settings, and the choices to make. */
class Episode {
  constructor(link, msg) {
    this.link = link;
    this.id = msg.id;
    this.seed = BigInt(msg.seed);
    this.settings = msg.settings || {};
    this.prefix = (msg.prefix || []).map(Number);
    this.rng = new SplitMix64(msg.policy_seed || "0");
    this.trace = [];
    this.labels = [];
    this.done = false;
  }
  /** An index in [0, n): the prefix's next entry, then uniform (or softmax of `weights`). */
  select(n, weights, labels) {
    if (this.done) throw new ProtocolError("select after outcome; expected the next episode");
    if (!(Number.isInteger(n) && n >= 1)) throw new ProtocolError(`select(${n}); expected at least one option`);
    if (weights && weights.length !== n) throw new ProtocolError(`select(${n}) with ${weights.length} weights; expected one per option`);
    const k = this.trace.length;
    let choice;
    if (k < this.prefix.length) {
      choice = this.prefix[k];
      if (!(choice >= 0 && choice < n)) {
        const message = `prefix entry ${k} is ${choice}, but the game offers ${n} options`;
        this.link.send({ type: "error", message });
        throw new ProtocolError(`${message}: the game is not deterministic under its seed`);
      }
    } else {
      choice = weights ? this.rng.softmax(weights) : this.rng.uniform(n);
    }
    this.trace.push([choice, n]);
    this.labels.push(labels || null);
    return choice;
  }
  /** Ends the episode: its score, its measures and the whole trace go to playforge. */
  outcome(score, measures = {}) {
    if (this.done) throw new ProtocolError("a second outcome for one episode");
    this.done = true;
    const m = {};
    for (const [k, v] of Object.entries(measures)) m[k] = Number(v);
    this.link.send({ type: "outcome", id: this.id, score: Number(score), measures: m, trace: this.trace });
  }
}

/** One JSON line per message, on a socket or on stdin/stdout. */
class Link {
  constructor(input, output) {
    this.output = output;
    this.rl = readline.createInterface({ input, crlfDelay: Infinity });
    this.lines = this.rl[Symbol.asyncIterator]();
  }
  send(msg) {
    this.output.write(JSON.stringify(msg) + "\n");
  }
  async receive() {
    const { value, done } = await this.lines.next();
    if (done) return { type: "stop" };
    return JSON.parse(value);
  }
  close() {
    this.rl.close();
    if (this.output !== process.stdout) this.output.end(() => this.output.destroy());
  }
}

/** A connected game: `episodes()` yields what playforge asks it to play. */
class Game {
  constructor(link, env) {
    this.link = link;
    this.settings = JSON.parse(env.PLAYFORGE_SETTINGS || "{}");
    this.current = null;
  }
  async *episodes() {
    for (;;) {
      if (this.current && !this.current.done) throw new ProtocolError(`episode ${this.current.id} ended without an outcome`);
      const msg = await this.link.receive();
      if (msg.type === "stop") {
        this.link.close();
        return;
      }
      if (msg.type !== "episode") throw new ProtocolError(`message ${JSON.stringify(msg.type)}; expected an episode or stop`);
      this.current = new Episode(this.link, msg);
      this.settings = this.current.settings;
      yield this.current;
    }
  }
  log(message) {
    this.link.send({ type: "log", message: String(message) });
  }
}

/** Connects to the playforge that started this process and introduces the game. */
async function connect({ game, params = [], measures = [], styles = [], variants = [], env = process.env }) {
  if (!("PLAYFORGE_PROTOCOL" in env)) throw new NoDriver("not started by playforge (no PLAYFORGE_PROTOCOL in the environment)");
  if (env.PLAYFORGE_PROTOCOL !== String(PROTOCOL)) throw new ProtocolError(`PLAYFORGE_PROTOCOL=${env.PLAYFORGE_PROTOCOL}; this client speaks ${PROTOCOL}`);
  let link;
  if (env.PLAYFORGE_STDIO === "1") {
    // Whatever else the game prints must not reach the protocol stream.
    console.log = console.error;
    link = new Link(process.stdin, process.stdout);
  } else {
    const socket = net.createConnection({ host: env.PLAYFORGE_ADDR, port: Number(env.PLAYFORGE_PORT) });
    await new Promise((ok, fail) => socket.once("connect", ok).once("error", fail));
    link = new Link(socket, socket);
  }
  link.send({ type: "hello", protocol: PROTOCOL, nonce: env.PLAYFORGE_NONCE || "", game: String(game), params, measures, styles, variants });
  const answer = await link.receive();
  if (answer.type !== "welcome") throw new ProtocolError(`playforge refused the game: ${answer.message || JSON.stringify(answer)}`);
  return new Game(link, env);
}

module.exports = { connect, SplitMix64, NoDriver, ProtocolError, PROTOCOL };
