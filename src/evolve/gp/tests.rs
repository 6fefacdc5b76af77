//! Tests of the GP operators, the simplifier, equivalence and the generation step.

use super::*;
use rand::SeedableRng;

fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

fn x() -> Formula {
    Formula::Var(Var::Moves)
}

fn c(v: f64) -> Formula {
    Formula::Const(v)
}

fn p(text: &str) -> Formula {
    Formula::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

/// A config with every variable and function, to exercise all simplifier rules.
fn wide() -> GpConfig {
    GpConfig { terminals: Var::ALL.to_vec(), functions: FUNS.to_vec(), ..GpConfig::default() }
}

/// Random statistics, including fractional ones off the sample grid.
fn random_stats(r: &mut Rng) -> Stats {
    let v = r.random_range(1..=250) as f64;
    let w = r.random_range(0..=v as u64) as f64;
    let mean = w / v;
    Stats {
        mean,
        wins: w,
        visits: v,
        parent: r.random_range(v as u64..=10000) as f64,
        sumsq: w * r.random::<f64>(),
        best: mean + (1.0 - mean) * r.random::<f64>(),
        moves: r.random_range(0..=40) as f64,
    }
}

#[test]
fn default_config_is_the_papers_and_valid() {
    let cfg = GpConfig::default();
    assert_eq!((cfg.population, cfg.elites, cfg.mutants), (100, 10, 45));
    assert!(cfg.validate().is_ok());
    let text = toml::to_string(&cfg).unwrap();
    assert!(text.contains(r#"terminals = ["wins", "visits", "parent", "moves"]"#), "{text}");
    assert_eq!(toml::from_str::<GpConfig>(&text).unwrap(), cfg);
    let partial: GpConfig = toml::from_str("population = 20\nelites = 2\nmutants = 9\nfunctions = [\"+\", \"max\"]").unwrap();
    assert_eq!(partial.functions, vec![Fun::Add, Fun::Max]);
    assert_eq!(partial.terminals, cfg.terminals);
}

#[test]
fn config_errors_name_the_key() {
    let e = toml::from_str::<GpConfig>("terminals = [\"wins\", \"score\"]").unwrap_err().to_string();
    assert!(e.contains("unknown terminal `score`"), "{e}");
    let e = toml::from_str::<GpConfig>("functions = [\"pow\"]").unwrap_err().to_string();
    assert!(e.contains("unknown function `pow`"), "{e}");
    assert!(toml::from_str::<GpConfig>("populaton = 3").is_err());
    let bad = |cfg: GpConfig, key: &str| {
        let e = cfg.validate().unwrap_err();
        assert!(e.contains(key), "{e}");
    };
    bad(GpConfig { elites: 60, ..GpConfig::default() }, "elites + mutants");
    bad(GpConfig { population: 1, elites: 0, mutants: 0, ..GpConfig::default() }, "population");
    bad(GpConfig { const_range: (3.0, 1.0), ..GpConfig::default() }, "const_range");
    bad(GpConfig { init_min_height: 7, ..GpConfig::default() }, "init_min_height");
    bad(GpConfig { terminals: vec![], ..GpConfig::default() }, "terminals");
    bad(GpConfig { functions: vec![], ..GpConfig::default() }, "functions");
    bad(GpConfig { parent_pool: 0.0, ..GpConfig::default() }, "parent_pool");
    bad(GpConfig { max_height: 40, ..GpConfig::default() }, "max_height");
}

#[test]
fn random_trees_respect_full_and_grow_heights() {
    let cfg = GpConfig::default();
    let mut r = rng(1);
    for _ in 0..200 {
        let f = random_tree(&cfg, &mut r, 2, 4, true);
        assert!((2..=4).contains(&height(&f)), "{f}");
        let g = random_tree(&cfg, &mut r, 2, 4, false);
        assert!((2..=4).contains(&height(&g)), "{g}");
    }
    // Full trees of binary operators only have 2^h leaves.
    let bin = GpConfig { functions: vec![Fun::Add, Fun::Mul], ..cfg };
    let f = random_tree(&bin, &mut r, 3, 3, true);
    assert_eq!(f.size(), 15, "{f}");
}

#[test]
fn initial_population_is_unique_and_within_heights() {
    let cfg = GpConfig::default();
    let pop = initial_population(&cfg, &mut rng(7)).unwrap();
    assert_eq!(pop.len(), cfg.population);
    for (i, a) in pop.iter().enumerate() {
        let h = height(a);
        assert!((cfg.init_min_height..=cfg.init_max_height).contains(&h), "height {h}: {a}");
        assert!((3..=7).contains(&a.depth()), "depth {} (= height + 1): {a}", a.depth());
        for b in &pop[..i] {
            assert!(!equivalent(a, b), "{a}  ≡  {b}");
        }
    }
    // Both ramps are used: some trees are full, some grown shorter than their ramp.
    assert!(pop.iter().any(|f| height(f) == 6));
    assert!(pop.iter().any(|f| height(f) == 2));
}

#[test]
fn initial_population_errors_instead_of_looping() {
    // One variable, `sqrt` only and no room for constants: very few distinct trees.
    let cfg = GpConfig {
        population: 50,
        elites: 0,
        mutants: 0,
        terminals: vec![Var::Wins],
        functions: vec![Fun::Sqrt],
        const_range: (1.0, 1.0),
        init_min_height: 1,
        init_max_height: 1,
        ..GpConfig::default()
    };
    let e = initial_population(&cfg, &mut rng(1)).unwrap_err();
    assert!(e.contains("distinct formulas"), "{e}");
}

#[test]
fn x_minus_4_and_minus_4_plus_x_are_one_formula() {
    let a = call2(Fun::Sub, x(), c(4.0));
    let b = call2(Fun::Add, c(-4.0), x());
    assert_eq!(simplify(&a), simplify(&b));
    assert_eq!(simplify(&a).to_string(), "moves - 4");
    assert!(equivalent(&a, &b));
    assert!(!equivalent(&a, &call2(Fun::Add, c(4.0), x())));
}

#[test]
fn simplifier_rules() {
    let s = |t: &str| simplify(&p(t)).to_string();
    assert_eq!(s("wins * 0 + visits"), "visits");
    assert_eq!(s("(wins + 0) * 1 - 0"), "wins");
    assert_eq!(s("(wins - parent) / (wins - parent)"), "1");
    assert_eq!(s("wins / 1"), "wins");
    assert_eq!(s("wins / (visits - visits)"), "1");
    assert_eq!(s("wins - wins + moves"), "moves");
    assert_eq!(s("sqrt(16) + 2 * 3"), "10");
    assert_eq!(s("0 - (0 - wins)"), "wins");
    assert_eq!(s("(parent + 2) + (3 + visits)"), "visits + parent + 5");
    assert_eq!(s("visits * (2 * wins) * 3"), "6 * (wins * visits)");
    assert_eq!(s("wins + wins"), "2 * wins");
    assert_eq!(s("0 - wins - visits"), "(-1) * wins - visits");
    assert_eq!(s("sqrt(0 - wins)"), "sqrt(wins)");
    assert_eq!(s("max(visits, wins) - min(wins, wins)"), "max(wins, visits) - wins");
    assert_eq!(s("2 - (visits - 5)"), "7 - visits");
    assert_eq!(simplify(&p("wins * visits")), simplify(&p("visits * wins")));
}

/// The constants of `f` rounded to integers in −5..=5, so that 0, ±1 and negative
/// coefficients (the special cases of the simplifier) are frequent.
fn integer_constants(f: &Formula) -> Formula {
    match f {
        Formula::Const(c) => Formula::Const(c.round() - 5.0),
        Formula::Call(op, args) => Formula::Call(*op, args.iter().map(integer_constants).collect()),
        _ => f.clone(),
    }
}

#[test]
fn simplify_preserves_values_on_random_trees() {
    let mut r = rng(11);
    let points: Vec<Stats> = (0..60).map(|_| random_stats(&mut r)).collect();
    let mut checked = 0;
    for (n, cfg) in [GpConfig::default(), wide(), GpConfig::default(), wide()].into_iter().enumerate() {
        for i in 0..400 {
            let f = random_tree(&cfg, &mut r, 1, 6, i % 2 == 0);
            let f = if n >= 2 { integer_constants(&f) } else { f };
            let s = simplify(&f);
            assert!(s.size() <= f.size() + 2, "{f}  →  {s}");
            for st in points.iter().chain(POINTS.iter()) {
                let (a, b) = (f.eval(st), s.eval(st));
                if !a.is_finite() {
                    continue; // the finite-only rules (x·0, x − x, x / x) may differ here
                }
                assert!(same_value(a, b), "{f}  →  {s}: {a} vs {b} at {st:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 1000 * 60);
    // The rules for −1 and negative coefficients, by hand.
    for t in ["wins / (3 - 4)", "0 - (wins + visits)", "(1 - 2) * (wins - parent)", "sqrt(0 - 3 * wins)", "sqrt((2 - 5) * visits)"] {
        let f = p(t);
        for st in points.iter() {
            assert!(same_value(f.eval(st), simplify(&f).eval(st)), "{t}  →  {}", simplify(&f));
        }
    }
}

#[test]
fn simplify_is_idempotent() {
    let mut r = rng(12);
    let cfg = wide();
    for i in 0..500 {
        let f = random_tree(&cfg, &mut r, 1, 5, i % 2 == 0);
        let s = simplify(&f);
        assert_eq!(simplify(&s), s, "{f}");
    }
}

#[test]
fn printed_random_trees_parse_back_equivalent() {
    let mut r = rng(13);
    for cfg in [GpConfig::default(), wide()] {
        for i in 0..300 {
            let f = random_tree(&cfg, &mut r, 0, 6, i % 2 == 0);
            let back = Formula::parse(&f.to_string()).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(fingerprint(&back), fingerprint(&f), "{f}");
            let pretty = pretty(&f);
            Formula::parse(&pretty).unwrap_or_else(|e| panic!("{pretty}: {e}"));
        }
    }
}

#[test]
fn pretty_rounds_constants() {
    assert_eq!(pretty(&p("wins + 3.14159265 - 0")), "wins + 3.142");
    assert_eq!(pretty(&p("wins * 12345.678")), "12350 * wins");
}

#[test]
fn crossover_preserves_total_size() {
    let cfg = GpConfig::default();
    let mut r = rng(3);
    for _ in 0..300 {
        let a = random_tree(&cfg, &mut r, 0, 5, false);
        let b = random_tree(&cfg, &mut r, 0, 5, false);
        let (x, y) = crossover(&a, &b, &mut r);
        assert_eq!(x.size() + y.size(), a.size() + b.size(), "{a} × {b}");
        if a.size() == 1 || b.size() == 1 {
            assert_eq!((&x, &y), (&a, &b));
        }
    }
    // Swapped subtrees show up in both children.
    let (x, y) = crossover(&p("wins + visits"), &p("parent * moves"), &mut r);
    let text = format!("{x} {y}");
    for v in ["wins", "visits", "parent", "moves"] {
        assert!(text.contains(v), "{text}");
    }
    assert!(x.to_string().contains('+') && y.to_string().contains('*'), "root kept: {x} / {y}");
}

#[test]
fn mutate_constant_changes_a_constant_when_there_is_one() {
    let cfg = GpConfig::default();
    let mut r = rng(5);
    for _ in 0..200 {
        let mut f = p("wins + 2.5 * sqrt(parent / 7)");
        let before = f.clone();
        assert!(mutate_constant(&mut f, &cfg, &mut r));
        assert_ne!(f, before);
        assert_eq!(f.size(), before.size());
    }
    let mut g = p("wins + visits");
    assert!(!mutate_constant(&mut g, &cfg, &mut r));
    assert_eq!(g, p("wins + visits"));
}

#[test]
fn mutate_uniform_stays_within_its_height() {
    let cfg = GpConfig::default();
    let mut r = rng(6);
    let mut changed = 0;
    for _ in 0..300 {
        let f = random_tree(&cfg, &mut r, 2, 4, false);
        let mut g = f.clone();
        mutate_uniform(&mut g, &cfg, &mut r);
        assert!(height(&g) <= height(&f) + cfg.mutation_max_height, "{f} → {g}");
        changed += usize::from(g != f);
    }
    assert!(changed > 250);
}

#[test]
fn rank_puts_nan_last_and_keeps_ties_in_order() {
    assert_eq!(rank(&[1.0, f64::NAN, 3.0, 1.0, f64::NEG_INFINITY]), vec![2, 0, 3, 4, 1]);
}

#[test]
fn next_generation_keeps_elites_counts_and_uniqueness() {
    let cfg = GpConfig::default();
    let mut r = rng(21);
    let pop = initial_population(&cfg, &mut r).unwrap();
    // Fitness: a fixed score per formula, with NaNs that must never be elites.
    let fitness: Vec<f64> =
        pop.iter().enumerate().map(|(i, f)| if i % 17 == 3 { f64::NAN } else { fingerprint(f).0[9].abs().min(1e6) - i as f64 }).collect();
    let next = next_generation(&pop, &fitness, &cfg, &mut r);
    assert_eq!(next.len(), cfg.population);
    let count = |o: Origin| next.iter().filter(|(_, x)| *x == o).count();
    assert_eq!(count(Origin::Elite), 10);
    assert_eq!(count(Origin::Mutant), 45);
    assert_eq!(count(Origin::Crossover), 45);
    assert_eq!(count(Origin::Fresh), 0);
    let top = &rank(&fitness)[..cfg.elites];
    for (k, &i) in top.iter().enumerate() {
        assert_eq!(next[k], (pop[i].clone(), Origin::Elite), "elite {k}");
        assert!(!fitness[i].is_nan());
    }
    for (i, (a, _)) in next.iter().enumerate() {
        assert!(height(a) <= cfg.max_height, "{a}");
        for (b, _) in &next[..i] {
            assert!(!equivalent(a, b), "{a}  ≡  {b}");
        }
    }
}

#[test]
fn next_generation_is_deterministic() {
    let cfg = GpConfig { population: 30, elites: 3, mutants: 13, ..GpConfig::default() };
    let run = |seed| {
        let mut r = rng(seed);
        let mut pop = initial_population(&cfg, &mut r).unwrap();
        let mut log = String::new();
        for _ in 0..3 {
            let fitness: Vec<f64> = pop.iter().map(|f| -(f.size() as f64)).collect();
            let next = next_generation(&pop, &fitness, &cfg, &mut r);
            for (f, o) in &next {
                log += &format!("{o:?} {f}\n");
            }
            pop = next.into_iter().map(|(f, _)| f).collect();
        }
        log
    };
    assert_eq!(run(4), run(4));
    assert_ne!(run(4), run(5));
}

#[test]
fn tiny_parent_pools_fall_back_to_fresh_trees() {
    // One parent: no crossover pairs at all.
    let cfg = GpConfig { population: 12, elites: 2, mutants: 4, parent_pool: 0.05, ..GpConfig::default() };
    let mut r = rng(8);
    let pop = initial_population(&cfg, &mut r).unwrap();
    let fitness: Vec<f64> = (0..pop.len()).map(|i| i as f64).collect();
    let next = next_generation(&pop, &fitness, &cfg, &mut r);
    assert_eq!(next.len(), 12);
    assert_eq!(next[0].0, pop[11]);
    assert_eq!(next.iter().filter(|(_, o)| *o == Origin::Fresh).count(), 6);
    assert_eq!(next.iter().filter(|(_, o)| *o == Origin::Crossover).count(), 0);
    for (i, (a, _)) in next.iter().enumerate() {
        for (b, _) in &next[..i] {
            assert!(!equivalent(a, b), "{a}  ≡  {b}");
        }
    }
}

#[test]
fn fingerprint_points_are_mcts_like() {
    for s in POINTS.iter() {
        assert!(s.visits >= 1.0 && s.visits <= 250.0);
        assert!(s.wins >= 0.0 && s.wins <= s.visits);
        assert!(s.parent >= s.visits && s.parent <= 10000.0);
        assert!(s.moves >= 0.0 && s.moves <= 40.0);
    }
    // `wins / visits` and `mean` agree everywhere; `wins` and `sumsq` do not.
    assert!(equivalent(&p("wins / visits"), &p("mean")));
    assert!(!equivalent(&p("wins"), &p("sumsq")));
    assert!(equivalent(&p("wins / 0"), &p("1")));
}
