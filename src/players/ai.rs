//! The AI players the drivers share: an `[[ai]]` table ([`AiConfig`]: `mcts`, `policy` or
//! `random`, with MCTS settings) resolved against a compiled game into a [`Player`], a game
//! played out between two players ([`play_out`]), and the record of a played game ([`Replay`])
//! that `playforge replay` steps through. The tournament, balance's fitness and verification,
//! and the Python package's `Bot` all play through these; they sit below those drivers so that
//! none of them imports another for its players.

use super::agents::{Agent, choose};
use crate::game::{Game, Status, WgdlGame};
use crate::rng::stream;
use crate::search::formula::Formula;
use crate::search::mcts::MctsConfig;
use crate::search::run::{FORMULA_NAMES, formula_by_name_or_text};
use crate::wgdl::{Action, Program};
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// An `[[ai]]` table: who plays, and how.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AiConfig {
    pub name: String,
    /// `mcts`, `policy` or `random`.
    pub kind: String,
    /// mcts: iterations per decision (default 100, HexMage's benchmark).
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 1_000_000_000>")]
    pub iterations: Option<u64>,
    /// mcts: the selection formula: `ucb1` (default), `ucb_tuned1`, `ucb_tuned2`, `sp_mcts`,
    /// `ucb_for_sp` (with `c`, `d`, `w`), or a formula's text such as an evolved persona's
    /// `wins / visits + sqrt(ln(parent) / visits)`.
    #[serde(default)]
    pub formula: Option<String>,
    /// mcts: exploration constant C of the named formulas (default √2).
    #[serde(default)]
    pub c: Option<f64>,
    /// mcts: D of the named formulas (default 2).
    #[serde(default)]
    pub d: Option<f64>,
    /// mcts: w of `ucb_for_sp` (default 0).
    #[serde(default)]
    pub w: Option<f64>,
    /// mcts: which root child is played: `best_mean` (default, HexMage), `most_visited`, or
    /// `formula` (the selection formula's choice).
    #[serde(default)]
    pub final_choice: Option<crate::search::mcts::FinalChoice>,
    /// mcts: full expansion (every legal move a child at once; the match-3 persona paper's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_expansion: bool,
    /// mcts: progressive widening with this initial cap on children per node.
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 1_000_000>")]
    pub widening: Option<usize>,
    /// mcts: abort an iteration whose new state already exists at the same depth.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub duplicate_detection: bool,
    /// mcts: skip fully explored subtrees (CUT_OFF; sound for deterministic one-player games).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_off: bool,
    /// mcts: the playout policy (default: the game's `greedy` if it has one, else random).
    #[serde(default)]
    pub playout: Option<String>,
    /// mcts: the policy that plays when the best mean is below `fallback_below` (default 0.2).
    #[serde(default)]
    pub fallback: Option<String>,
    #[serde(default)]
    pub fallback_below: Option<f64>,
    /// mcts: playout moves before a playout counts as undecided (default 200, HexMage's).
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 10_000_000>")]
    pub max_playout_moves: Option<u32>,
    /// policy: the policy's name.
    #[serde(default)]
    pub policy: Option<String>,
}

/// An AI resolved against a program, and the game it plays through (its playout policy).
pub struct Player {
    pub name: String,
    pub agent: Agent,
    pub game: WgdlGame,
}

/// Resolves an `[[ai]]` table against a program (its policies by name, its MCTS settings).
pub fn resolve(ai: &AiConfig, program: &Arc<Program>) -> Result<Player> {
    let policy = |name: &str, key: &str| {
        program.policy_index(name).ok_or_else(|| {
            let known: Vec<&str> = program.policies.iter().map(|p| p.name.as_str()).collect();
            anyhow!("AI `{}`: {key} = \"{name}\" is not a policy of the game; expected one of: {}", ai.name, known.join(", "))
        })
    };
    let mut game = WgdlGame::new(program.clone());
    let agent = match ai.kind.as_str() {
        "random" => Agent::Random,
        "policy" => {
            let Some(p) = &ai.policy else { bail!("AI `{}`: kind = \"policy\" needs `policy = \"<name>\"`", ai.name) };
            Agent::Policy(policy(p, "policy")?)
        }
        "mcts" => {
            match &ai.playout {
                Some(p) => game.playout_policy = Some(policy(p, "playout")?),
                None => game.playout_policy = program.policy_index("greedy"),
            }
            let fallback = match &ai.fallback {
                Some(f) => Some((policy(f, "fallback")?, ai.fallback_below.unwrap_or(0.2))),
                None => None,
            };
            let (c, d, w) = (ai.c.unwrap_or(std::f64::consts::SQRT_2), ai.d.unwrap_or(2.0), ai.w.unwrap_or(0.0));
            let formula = match ai.formula.as_deref() {
                None => Formula::ucb1(c, d),
                Some(text) => formula_by_name_or_text(text, c, d, w)
                    .map_err(|e| anyhow!("AI `{}`: {e} (or a named formula: {FORMULA_NAMES})", ai.name))?,
            };
            let cfg = MctsConfig {
                formula,
                max_playout_moves: ai.max_playout_moves.unwrap_or(200),
                full_expansion: ai.full_expansion,
                widening: ai.widening,
                duplicate_detection: ai.duplicate_detection,
                cut_off: ai.cut_off,
                ..MctsConfig::default()
            };
            Agent::Mcts {
                iterations: ai.iterations.unwrap_or(100),
                cfg: Box::new(cfg),
                choice: ai.final_choice.unwrap_or_default(),
                fallback,
            }
        }
        k => bail!("AI `{}`: kind = \"{k}\"; expected \"mcts\", \"policy\" or \"random\"", ai.name),
    };
    Ok(Player { name: ai.name.clone(), agent, game })
}

/// A recorded game: enough to play it again move by move.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Replay {
    pub game: PathBuf,
    #[serde(default)]
    pub turn_order: Option<String>,
    /// Parameter overrides (`red1.maxHp`, 40).
    #[serde(default)]
    pub params: Vec<(String, f64)>,
    /// Who played each side.
    #[serde(default)]
    pub players: Vec<String>,
    pub moves: Vec<String>,
    #[serde(default)]
    pub result: String,
    /// The game's own chance seed (match-3's refills; `run --chance-seed`); left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chance_seed: u64,
    /// The overlays switched on (`run --overlay`); left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<String>,
}

impl Replay {
    /// The program the game was played on: the game at `path` (the replay's own `game`, or
    /// where it was found) with the replay's parameters, turn order and overlays.
    pub fn program(&self, path: &std::path::Path) -> Result<Arc<Program>> {
        let opts = crate::wgdl::CompileOptions {
            overrides: self.params.clone(),
            turn_order: self.turn_order.clone(),
            overlays: self.overlays.clone(),
            ..crate::wgdl::CompileOptions::default()
        };
        Ok(crate::wgdl::load_with(path, &opts).map_err(|e| anyhow!("{e}"))?.program)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Plays one game between `sides[0]` (side 0) and `sides[1]` (side 1) from the start, with the
/// stream of `seed`; `before_move(state, move)` sees every move before it is applied.
pub fn play_out(
    program: &Arc<Program>,
    sides: [&Player; 2],
    seed: u64,
    before_move: &mut dyn FnMut(&crate::wgdl::State, Action),
) -> Result<(Status, crate::wgdl::State)> {
    let render = |e: crate::wgdl::RuntimeError| anyhow!("{}", e.render(program));
    let game = &sides[0].game;
    let mut st = game.initial().map_err(render)?;
    let mut legal: Vec<Action> = Vec::new();
    let mut rng = stream(seed, 1, 0, 0);
    loop {
        game.legal(&st, &mut legal).map_err(render)?;
        let status = game.status(&st, &legal);
        if status != Status::Running {
            return Ok((status, st));
        }
        let side = game.to_move(&st).min(1);
        let p = sides[side];
        let m = choose(&p.game, &p.agent, &st, &legal, &mut rng).map_err(render)?;
        before_move(&st, m);
        game.apply(&mut st, m).map_err(render)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wgdl;
    use std::path::Path;

    fn ai(extra: &str) -> AiConfig {
        toml::from_str(&format!("name = \"A\"\nkind = \"mcts\"\n{extra}")).unwrap()
    }

    fn mcts(p: &Player) -> (&MctsConfig, crate::search::mcts::FinalChoice) {
        match &p.agent {
            Agent::Mcts { cfg, choice, .. } => (cfg, *choice),
            a => panic!("{a:?}"),
        }
    }

    #[test]
    fn mcts_keys_reach_the_search_settings() {
        let program = wgdl::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/games/connect_four.wgdl"))).unwrap().program;
        // The default is HexMage's: UCB1 with C = √2, D = 2, the best mean, no enhancement.
        let p = resolve(&ai(""), &program).unwrap();
        let (cfg, choice) = mcts(&p);
        assert_eq!(cfg.formula, Formula::ucb1(std::f64::consts::SQRT_2, 2.0));
        assert_eq!((choice, cfg.full_expansion, cfg.widening, cfg.max_playout_moves), (Default::default(), false, None, 200));
        let p = resolve(
            &ai("formula = \"ucb_tuned1\"\nc = 0.5\nd = 0.01\nfull_expansion = true\nwidening = 3\nfinal_choice = \"most_visited\""),
            &program,
        )
        .unwrap();
        let (cfg, choice) = mcts(&p);
        assert_eq!(cfg.formula, Formula::ucb_tuned1(0.5, 0.01));
        assert_eq!((choice, cfg.full_expansion, cfg.widening), (crate::search::mcts::FinalChoice::MostVisited, true, Some(3)));
        let text = "wins / visits + sqrt(ln(parent) / visits)";
        assert_eq!(mcts(&resolve(&ai(&format!("formula = \"{text}\"")), &program).unwrap()).0.formula, Formula::parse(text).unwrap());
        let Err(e) = resolve(&ai("formula = \"wins / (visits\""), &program) else { panic!("a bad formula resolved") };
        let e = e.to_string();
        assert!(e.contains("AI `A`") && e.contains("column") && e.contains("ucb_tuned1"), "{e}");
    }
}
