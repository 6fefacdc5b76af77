#!/usr/bin/env node
// A deck-builder, a game of its own in JavaScript that playforge plays over the bridge
// (docs/bridge.md, the client ./bridge.js). One player builds a deck for `turns` turns.
//
// The deck starts with 7 Coppers (1 coin each) and 3 Estates (1 victory point each). Each turn
// the player draws `hand` cards (the deck is shuffled by the game's own generator seeded with
// the episode's seed; the discard pile is shuffled back in when the deck runs out), counts its
// coins and buys at most one card it can afford, or nothing. The market, in the order offered:
//
//   nothing, Silver (cost 3, 2 coins), Gold (`gold_cost`, 3 coins), Estate (2, 1 point),
//   Duchy (5, 3 points), Province (`province_cost`, 6 points)
//
// The bought card goes to the discard pile with the hand. The score is the victory points in
// the whole deck after the last turn. Measures: `points`, `coins` (coin value of the deck),
// `provinces`, `cards`.
//
// Play styles restrict the options: `big_money` buys only treasure and Provinces, `no_pass`
// never passes when it can buy. Design variants: `standard` (12 turns, hand 5, Gold 6,
// Province 8), `cheap_gold` (Gold 5), `short` (9 turns). Declared parameters override them.
//
// Run by playforge (`command = ["node", "deckbuilder.js"]`), or by hand: `node deckbuilder.js
// --seed 3` plays it at the terminal.
"use strict";

const bridge = require("./bridge.js");

const PARAMS = [
  { name: "turns", min: 4, max: 20, integer: true },
  { name: "hand", min: 3, max: 7, integer: true },
  { name: "gold_cost", min: 4, max: 9, integer: true },
  { name: "province_cost", min: 6, max: 12, integer: true },
];
const VARIANTS = {
  standard: { turns: 12, hand: 5, gold_cost: 6, province_cost: 8 },
  cheap_gold: { turns: 12, hand: 5, gold_cost: 5, province_cost: 8 },
  short: { turns: 9, hand: 5, gold_cost: 6, province_cost: 8 },
};
const STYLES = ["unrestricted", "big_money", "no_pass"];
const MEASURES = ["points", "coins", "provinces", "cards"];

/** One game; `select(n, labels)` makes each decision. Returns [score, measures]. */
function play(seed, settings, select) {
  const v = Object.assign({}, VARIANTS[settings.variant || "standard"], settings.params || {});
  const style = settings.style || "unrestricted";
  const cards = {
    Copper: { cost: 0, coins: 1, points: 0 },
    Silver: { cost: 3, coins: 2, points: 0 },
    Gold: { cost: v.gold_cost, coins: 3, points: 0 },
    Estate: { cost: 2, coins: 0, points: 1 },
    Duchy: { cost: 5, coins: 0, points: 3 },
    Province: { cost: v.province_cost, coins: 0, points: 6 },
  };
  const market = ["Silver", "Gold", "Estate", "Duchy", "Province"];
  const rng = new bridge.SplitMix64(seed);
  const shuffle = (a) => {
    for (let i = a.length - 1; i > 0; i--) {
      const j = rng.uniform(i + 1);
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  };
  let deck = shuffle([...Array(7).fill("Copper"), ...Array(3).fill("Estate")]);
  let discard = [];
  for (let turn = 0; turn < v.turns; turn++) {
    const hand = [];
    while (hand.length < v.hand) {
      if (deck.length === 0) {
        if (discard.length === 0) break;
        deck = shuffle(discard);
        discard = [];
      }
      hand.push(deck.pop());
    }
    const coins = hand.reduce((s, c) => s + cards[c].coins, 0);
    let options = market.filter((c) => cards[c].cost <= coins);
    if (style === "big_money") options = options.filter((c) => cards[c].points === 0 || c === "Province");
    if (!(style === "no_pass" && options.length > 0)) options.unshift("nothing");
    const buy = options[select(options.length, options)];
    discard.push(...hand);
    if (buy !== "nothing") discard.push(buy);
  }
  const all = [...deck, ...discard];
  const points = all.reduce((s, c) => s + cards[c].points, 0);
  return [
    points,
    {
      points,
      coins: all.reduce((s, c) => s + cards[c].coins, 0),
      provinces: all.filter((c) => c === "Province").length,
      cards: all.length,
    },
  ];
}

async function main() {
  let game;
  try {
    game = await bridge.connect({ game: "deckbuilder", params: PARAMS, measures: MEASURES, styles: STYLES, variants: Object.keys(VARIANTS) });
  } catch (e) {
    if (!(e instanceof bridge.NoDriver)) throw e;
    const at = process.argv.indexOf("--seed");
    const seed = BigInt(at >= 0 ? process.argv[at + 1] : 1);
    const lines = require("fs").readFileSync(0, "utf8").split("\n");
    let k = 0;
    const [score, measures] = play(seed, {}, (n, labels) => {
      console.log(labels.map((l, i) => `${i}: ${l}`).join(" / "));
      const answer = Number(lines[k++]);
      return Number.isInteger(answer) && answer >= 0 && answer < n ? answer : 0;
    });
    console.log(`score ${score}: ${JSON.stringify(measures)}`);
    return;
  }
  for await (const episode of game.episodes()) {
    const [score, measures] = play(episode.seed, episode.settings, (n, labels) => episode.select(n, undefined, labels));
    episode.outcome(score, measures);
  }
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
