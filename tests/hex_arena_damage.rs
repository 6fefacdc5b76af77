//! The hex arena's damage statistics (games/README.md §9.11): the `damageStats` overlay of
//! `games/hex_arena.wgdl` counts, in WGDL, the HP that abilities take off mages — `game.damageDealt`
//! (direct hits, debuff ticks and area-effect ticks) and `game.areaDamage` (area-effect ticks
//! only). HP is never healed in the arena and every mage starts at its `maxHp`, so after every move
//! of every game `damageDealt` must equal the HP lost by all mages, Σ (maxHp − hp), overkill not
//! counted; `areaDamage` lies between 0 and `damageDealt`, is 0 when the area effects are switched
//! off and positive in some game when they are strong. Without the overlay the file has no game
//! value, and with it the moves and HP are those without it.

use playforge::experiment::tournament::sample_encounter;
use playforge::players::{AiConfig, Player, play_out, resolve};
use playforge::wgdl::probe::ValueRef;
use playforge::wgdl::{self, CompileOptions, Program, State, Status};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The overlay that switches the counters on.
const OVERLAY: &str = "damageStats";
const MAGES: [&str; 4] = ["red1", "red2", "blue1", "blue2"];
const ABILITIES: [&str; 8] = ["red1a", "red1b", "red2a", "red2b", "blue1a", "blue1b", "blue2a", "blue2b"];

fn arena_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hex_arena.wgdl")
}

fn options(overrides: Vec<(String, f64)>) -> CompileOptions {
    CompileOptions { overrides, overlays: vec![OVERLAY.into()], ..Default::default() }
}

fn arena(overrides: Vec<(String, f64)>) -> Arc<Program> {
    wgdl::load_with(&arena_path(), &options(overrides)).unwrap_or_else(|e| panic!("{e}")).program
}

/// Overrides setting each of `attrs` (name, value) on every ability.
fn every_ability(attrs: &[(&str, f64)]) -> Vec<(String, f64)> {
    ABILITIES.iter().flat_map(|a| attrs.iter().map(move |(k, v)| (format!("{a}.{k}"), *v))).collect()
}

/// The values the test reads, resolved once per program.
struct Probe {
    dealt: ValueRef,
    area: ValueRef,
    /// (hp, maxHp) of each mage.
    mages: Vec<(ValueRef, ValueRef)>,
}

impl Probe {
    fn new(p: &Program) -> Probe {
        let v = |path: &str| p.value_ref(path).unwrap_or_else(|e| panic!("{e}"));
        Probe {
            dealt: v("game.damageDealt"),
            area: v("game.areaDamage"),
            mages: MAGES.iter().map(|m| (v(&format!("{m}.hp")), v(&format!("{m}.maxHp")))).collect(),
        }
    }

    /// (damageDealt, areaDamage), after checking them against the mages' HP.
    fn check(&self, p: &Program, st: &State, what: &str) -> (f64, f64) {
        let (dealt, area) = (p.read(st, self.dealt), p.read(st, self.area));
        let lost: f64 = self.mages.iter().map(|&(hp, max)| p.read(st, max) - p.read(st, hp)).sum();
        assert_eq!(dealt, lost, "{what}, move {}: damageDealt is not the HP lost by all mages", st.moves);
        assert!((0.0..=dealt).contains(&area), "{what}, move {}: areaDamage {area} outside 0..=damageDealt {dealt}", st.moves);
        (dealt, area)
    }
}

/// The rule-based AI, MCTS with the greedy playout (as the balance job's ensemble, with more
/// iterations) and the random AI.
fn players(p: &Arc<Program>) -> Vec<Player> {
    let ai = |text: &str| resolve(&toml::from_str::<AiConfig>(text).unwrap(), p).unwrap();
    vec![
        ai("name = \"Rule\"\nkind = \"policy\"\npolicy = \"rule\""),
        ai("name = \"MCTS\"\nkind = \"mcts\"\niterations = 20\nplayout = \"greedy\""),
        ai("name = \"Random\"\nkind = \"random\""),
    ]
}

/// Plays every AI against itself and the rule AI against the others on `seeds`, checking the
/// counters before every move and at the end; returns the final (damageDealt, areaDamage) and
/// status of each game.
fn games(p: &Arc<Program>, seeds: std::ops::Range<u64>, what: &str) -> Vec<(f64, f64, Status)> {
    let probe = Probe::new(p);
    let ps = players(p);
    let pairs = [(0, 0), (1, 1), (2, 2), (0, 1), (2, 0)];
    let mut out = Vec::new();
    for seed in seeds {
        for &(a, b) in &pairs {
            let what = format!("{what}, {} vs {}, seed {seed}", ps[a].name, ps[b].name);
            let mut check = |st: &State, _| {
                probe.check(p, st, &what);
            };
            let (status, st) = play_out(p, [&ps[a], &ps[b]], seed, &mut check).unwrap();
            let (dealt, area) = probe.check(p, &st, &what);
            out.push((dealt, area, status));
        }
    }
    out
}

#[test]
fn damage_dealt_is_the_hp_lost_on_the_file_and_on_random_encounters() {
    let mut all = games(&arena(vec![]), 0..6, "file values");
    for k in 0..8 {
        let (p, _) = sample_encounter(&arena_path(), &options(vec![]), 21, k).unwrap();
        all.extend(games(&p, 0..2, &format!("encounter {k}")));
    }
    assert!(all.iter().filter(|g| matches!(g.2, Status::Won(_) | Status::Draw)).count() > all.len() / 2, "most games are fought out");
    assert!(all.iter().any(|g| g.1 > 0.0 && g.1 < g.0), "some games mix area and other damage: {all:?}");
}

#[test]
fn overkill_is_not_counted() {
    // One-HP mages against 30-damage hits: every kill counts 1.
    let mut over: Vec<(String, f64)> = MAGES.iter().map(|m| (format!("{m}.maxHp"), 1.0)).collect();
    over.extend(ABILITIES.iter().map(|a| (format!("{a}.dmg"), 30.0)));
    let p = arena(over);
    for (dealt, _, status) in games(&p, 0..3, "one-HP mages") {
        assert!(dealt <= 4.0, "{dealt} HP counted from 4 HP in all");
        if matches!(status, Status::Won(_)) {
            assert!(dealt >= 2.0, "a win takes both enemy mages' HP");
        }
    }
}

#[test]
fn without_area_effects_there_is_no_area_damage() {
    let p = arena(every_ability(&[("aoeRadius", 0.0), ("aoeHp", 0.0), ("aoeAp", 0.0), ("aoeLife", 0.0)]));
    let all = games(&p, 0..6, "no area effects");
    assert!(all.iter().all(|g| g.1 == 0.0), "{all:?}");
    assert!(all.iter().filter(|g| g.0 > 0.0).count() > all.len() / 2, "damage is still dealt: {all:?}");
}

#[test]
fn strong_area_effects_deal_area_damage() {
    let p = arena(every_ability(&[("aoeRadius", 3.0), ("aoeHp", 5.0), ("aoeLife", 3.0)]));
    let all = games(&p, 0..6, "strong area effects");
    let with_area = all.iter().filter(|g| g.1 > 0.0).count();
    assert!(with_area > all.len() / 2, "only {with_area} of {} games saw area damage: {all:?}", all.len());
}

#[test]
fn without_the_overlay_the_game_has_no_counters_and_the_same_moves() {
    let plain = wgdl::load(&arena_path()).unwrap_or_else(|e| panic!("{e}")).program;
    assert!(plain.value_ref("game.damageDealt").is_err() && plain.value_ref("game.areaDamage").is_err());
    // The overlay adds game values only: the same legal moves and HP along the same random games.
    let stats = arena(vec![]);
    let hp: Vec<ValueRef> = MAGES.iter().map(|m| plain.value_ref(&format!("{m}.hp")).unwrap()).collect();
    let hp2: Vec<ValueRef> = MAGES.iter().map(|m| stats.value_ref(&format!("{m}.hp")).unwrap()).collect();
    for seed in 0..20 {
        let mut rng = playforge::rng::stream(seed, 0, 0, 0);
        let (mut a, mut b) = (plain.initial_state().unwrap(), stats.initial_state().unwrap());
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        loop {
            plain.legal_actions(&a, &mut la).unwrap();
            stats.legal_actions(&b, &mut lb).unwrap();
            let na: Vec<String> = la.iter().map(|&m| plain.action_name(&a, m)).collect();
            let nb: Vec<String> = lb.iter().map(|&m| stats.action_name(&b, m)).collect();
            assert_eq!(na, nb, "seed {seed}, move {}", a.moves);
            let (ha, hb): (Vec<f64>, Vec<f64>) =
                (hp.iter().map(|&v| plain.read(&a, v)).collect(), hp2.iter().map(|&v| stats.read(&b, v)).collect());
            assert_eq!(ha, hb, "seed {seed}, move {}", a.moves);
            if la.is_empty() {
                break;
            }
            let k = rand::RngExt::random_range(&mut rng, 0..la.len());
            plain.apply(&mut a, la[k]).unwrap();
            stats.apply(&mut b, lb[k]).unwrap();
        }
        assert_eq!((a.turns, a.outcome), (b.turns, b.outcome), "seed {seed}");
    }
}
