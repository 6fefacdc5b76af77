//! The integration tests, one binary (`autotests = false` in Cargo.toml), one module per topic.

/// Shared helpers: compile a game from text or from `games/`.
mod util;

/// Encounter generation: config errors, the DNA codec, determinism over threads, resume,
/// outputs, verify and the landscape sampler.
mod balance;
/// The board games (Breakthrough, Othello, Hex) through every shipped command: tournaments,
/// personas, playtest, generate over Hex's size, play/experiment, reports and the play page.
mod board_commands;
/// The board games held to OpenSpiel 2.0.2: perft from the start, reproducible random games.
mod board_perft;
/// Games in their own process: the bridge's episodes and every fault of a game process.
mod bridge;
/// Monster Carlo's prefix-tree search over the bridge and on the roguelike's WGDL twin.
mod bridge_search;
/// The closure compiler against the bytecode it lowers, on every shipped game.
mod closures;
/// Connect Four: perft counts, random games and hand-checked wins against its native twin.
mod connect_four;
/// The interpreter against hand-written native twins, move for move.
mod differential;
/// The doors to OpenSpiel, PettingZoo and Gymnasium: a stable, sorted action index on every
/// shipped game, rewards, observations and the errors of bad requests.
mod doors;
/// Every kind of bad input gives a diagnostic with file:line:column, never a panic
/// (golden files in tests/data/wgdl/err/).
mod errors;
/// The executor seam: runs through serialized jobs write the same files as local runs.
mod exec;
/// The fuzzing campaign over every shipped game and config (no panic, no hang, bounded
/// memory) and its kept crash inputs (tests/data/fuzz/).
mod fuzz;
/// GDL: the reader's errors, perft of the GDL games, random games through the `Game` contract.
mod gdl;
/// GDL rulesheets of the GGP community, one small description of ours per class of behaviour
/// (tests/data/gdl/classes/): warnings, errors, reasoner choice and play on both evaluators.
mod gdl_rulesheets;
/// Content for any game (`generate`): config errors, determinism over threads and the job
/// seam, resume, feasibility, verify.
mod generate;
/// `generate` on a game in its own process: the roguelike's designer target verified on fresh
/// seeds, threads and restarts changing nothing, names checked against the game's hello.
mod generate_external;
/// Golden run folders: a small run of every search command through the CLI, compared file for
/// file with the copies under tests/data/runs/ (`UPDATE_GOLDEN=1` writes them).
mod golden_runs;
/// The hex arena and the two-sided extensions (turns, outcomes, parameters, maps, policies).
mod hex_arena;
/// The hex arena's damage counters (the `damageStats` overlay): the HP lost, area effects' share.
mod hex_arena_damage;
/// The hex arena against its hand-written native twin, move for move on random encounters, and
/// against the arena lowered by hand in benches/lowered/, state for state.
mod hex_arena_native;
/// Hostile GDL: infinite term sets, huge rulesheets and the GGP server under bad requests,
/// each refused in time and bounded memory.
mod hostile_gdl;
/// Hostile nesting: formulas and target expressions past the parsers' depth limits.
mod hostile_parse;
/// Hostile run folders: corrupt checkpoints, moved folders, stale locks, games named portably.
mod hostile_runs;
/// Hostile clients of `serve`: slow connections, other origins, other players' games, reports
/// that would read or run what they should not.
mod hostile_serve;
/// Hostile WGDL and configs: compile time linear in the input, bounded error echoes, non-finite numbers.
mod hostile_wgdl;
/// Nothing lost: balance, personas, playtest and experiment killed with SIGKILL and resumed
/// give byte-identical outputs.
mod kill_resume;
/// Magic Land: the shipped social building game compiles, plays and meets its design.
mod magic_land;
/// Match-3: the paper's scoring on crafted boards, the tile-grid built-ins, seeded chance, and
/// the interpreter against its native twin move for move.
mod match3;
/// Match-3's content genes: colour weights and a layout number, the defaults draw for draw as before.
mod match3_genes;
/// Procedural personas: config errors, determinism over threads and resume, outputs, measures.
mod personas;
/// `personas` on a game in its own process: GP over the prefix tree's formula on the roguelike,
/// threads changing nothing, the tree's limits as clear errors.
mod personas_external;
/// Playtest experiments: overlays, encodings, the stacker's styles, CUT_OFF against an
/// exhaustive search, determinism over threads and resume, reports, config errors.
mod playtest;
/// `playtest` on games in their own process: the shipped external configs, names checked
/// against the game's hello.
mod playtest_external;
/// Random play: every applied action was legal, clone/hash agree, timers fire in order.
mod properties;
/// Searchers: determinism, enhancements, the Simple Coins optimum, shipped configs.
mod search;
/// The semantics the thesis pins: Simple Coins, the chapter-4 examples, time and sessions.
mod semantics;
/// Project tidiness: every source file opens with a `//!` paragraph.
mod tidy;
/// Every shipped config run by the CLI on both tiers: the same files, byte for byte, and the same
/// standard output (feature `compiled`).
mod tier_outputs;
/// The interpreted and the compiled tier in lockstep (feature `compiled`).
mod tiers;
/// Connected groups on tile grids: sizes, leaders, counts, distinct values and clears on
/// crafted boards, and a naive flood fill on random ones.
mod tile_groups;
/// The state view: every shipped game drawn as a well-formed SVG, boards matching the description.
mod view;
/// Reports and the local web app: self-contained report.html per run, serve's limits, games
/// played through its API and their traces replayed.
mod web;
