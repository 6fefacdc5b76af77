//! Hostile nesting (issue 54, item 3): a persona formula file, a `best_formula.txt` as `serve`
//! reads it, and a `[[target]]` expression nested tens of thousands of levels deep used to
//! overflow the stack and abort the process (exit 134, which `catch_unwind` cannot catch). Now
//! each parser stops at its depth limit with an error naming the column and the limit; a
//! formula exactly at the limit parses, prints and parses back; whatever GP writes (its deepest
//! trees) parses back; and GP's simplifier keeps a formula of many terms shallow enough to
//! print and evaluate.
//!
//! Each deep input runs on a thread with the standard 2 MiB stack, so a test shows that no
//! large main-thread stack is needed.

use playforge::evolve::gp::{self, GpConfig, HEIGHT_LIMIT};
use playforge::generate::config::GenerateConfig;
use playforge::generate::expr::{self, Expr};
use playforge::persona::run::read_formula_file;
use playforge::search::formula::{self, Formula};
use std::path::{Path, PathBuf};

/// The stack of a thread a deep input runs on: the standard thread's.
const STACK: usize = 2 << 20;

/// Runs `f` on a thread with a [`STACK`]-sized stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(STACK).spawn(f).expect("a thread").join().expect("no panic")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("playforge-hostile-parse-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// `sqrt(` `n` times around `mean`: a formula `n + 1` levels deep.
fn sqrts(n: usize) -> String {
    format!("{}mean{}", "sqrt(".repeat(n), ")".repeat(n))
}

/// `mean + mean + …` with `n` operators: a chain `n + 1` levels deep, with no bracket at all.
fn chain(n: usize, term: &str) -> String {
    let mut s = term.to_string();
    for _ in 0..n {
        s.push_str(" + ");
        s.push_str(term);
    }
    s
}

#[test]
fn a_formula_file_nested_30000_deep_is_an_error_at_its_column() {
    let dir = scratch("formula");
    for (name, text, col) in [
        // Brackets: the 65th `(` is at column 65.
        ("brackets", format!("{}mean{}", "(".repeat(30_000), ")".repeat(30_000)), 65),
        // Functions: the 65th `sqrt(` starts at column 64 * 5 + 1.
        ("functions", sqrts(30_000), 321),
        // Signs: the 65th `-` is at column 2 * 64 + 1.
        ("signs", format!("{}mean", "- ".repeat(30_000)), 129),
        // A chain of operators builds a tree 30 000 deep without a bracket: the 64th `+` (at
        // column 7 * 64 - 1) makes it 65 levels deep.
        ("chain", chain(30_000, "mean"), 447),
    ] {
        let file = dir.join(format!("{name}.txt"));
        // As serve finds it: an indented formula line after a comment, then the goal.
        std::fs::write(&file, format!("# best formula\n  {text}\n# goal: 0.5\n")).expect("write");
        let f = file.clone();
        let err = on_small_stack(move || read_formula_file(&f).map(|_| ()).map_err(|e| e.to_string())).unwrap_err();
        let at = format!("{}:2:{}:", file.display(), col + 2);
        assert!(err.starts_with(&at), "{name}: `{at}` expected first in: {err}");
        assert!(err.contains("nested deeper than 64 levels"), "{name}: {err}");
        assert!(err.len() < 600, "{name}: the error quotes a window of the formula, not all of it ({} bytes)", err.len());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_formula_at_the_limit_parses_and_one_past_it_does_not() {
    assert_eq!(formula::MAX_DEPTH, 64);
    let max = formula::MAX_DEPTH;
    for (text, deep) in [
        (sqrts(max - 1), false),
        (sqrts(max), true),
        (chain(max - 1, "mean"), false),
        (chain(max, "mean"), true),
        (format!("{}mean{}", "(".repeat(max), ")".repeat(max)), false),
        (format!("{}mean{}", "(".repeat(max + 1), ")".repeat(max + 1)), true),
        (format!("{}mean", "-".repeat(max - 1)), false),
        (format!("{}mean", "-".repeat(max)), true),
    ] {
        let got = Formula::parse(&text);
        match (got, deep) {
            (Ok(f), false) => assert!(f.depth() <= max, "{text}"),
            (Err(e), true) => assert!(e.to_string().contains("nested deeper than 64 levels"), "{e}"),
            (got, _) => panic!("{text}: {got:?}"),
        }
    }
    // Trees exactly MAX_DEPTH deep print as text that parses back to them (brackets of right
    // operands, functions and negative constants included), and evaluate the same compiled.
    let mut right = Formula::Const(-3.0);
    let mut funs = Formula::Const(-3.0);
    let mut left = Formula::Var(formula::Var::Visits);
    for k in 1..max {
        right = Formula::Call(formula::Fun::Sub, vec![Formula::Var(formula::Var::Mean), right]);
        funs = Formula::Call(if k % 2 == 0 { formula::Fun::Sqrt } else { formula::Fun::Ln }, vec![funs]);
        left = Formula::Call(formula::Fun::Div, vec![left, Formula::Const(k as f64)]);
    }
    let stats = formula::Stats { mean: 0.4, wins: 4.0, visits: 10.0, parent: 100.0, sumsq: 2.0, best: 0.9, moves: 21.0 };
    for f in [right, funs, left] {
        assert_eq!(f.depth(), max);
        let text = f.to_string();
        let back = Formula::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, f, "{text}");
        assert_eq!(f.compile().eval(&stats).to_bits(), f.eval(&stats).to_bits(), "{text}");
    }
}

#[test]
fn the_deepest_formulas_gp_writes_parse_back() {
    // DEAP heights: a tree of height h is h + 1 deep.
    const { assert!(HEIGHT_LIMIT < formula::MAX_DEPTH, "GP's height limit must stay below the parse limit") };
    let cfg = GpConfig {
        init_min_height: HEIGHT_LIMIT,
        init_max_height: HEIGHT_LIMIT,
        max_height: HEIGHT_LIMIT,
        functions: vec![
            formula::Fun::Add,
            formula::Fun::Sub,
            formula::Fun::Mul,
            formula::Fun::Div,
            formula::Fun::Sqrt,
            formula::Fun::Ln,
            formula::Fun::Max,
            formula::Fun::Min,
        ],
        const_range: (-10.0, 10.0),
        ..GpConfig::default()
    };
    cfg.validate().expect("a valid config");
    let mut rng = playforge::rng::stream(54, 3, 0, 0);
    for k in 0..6 {
        // Full trees reach the limit on every path; grown ones at least on one.
        let f = gp::random_tree(&cfg, &mut rng, HEIGHT_LIMIT, HEIGHT_LIMIT, k % 2 == 0);
        assert!(gp::height(&f) <= HEIGHT_LIMIT);
        let text = f.to_string();
        let back = Formula::parse(&text).unwrap_or_else(|e| panic!("tree {k}: {e}"));
        assert_eq!(back, f, "tree {k}");
    }
}

/// A sum of 2^15 different terms (`ln(wins + k)`), written as a balanced tree 18 levels deep:
/// it parses, and GP's simplifier used to flatten it into a chain 32 768 levels deep that
/// printing, evaluating and dropping recursed down (a crafted persona checkpoint's population
/// goes through it). Now a sum of more than `MAX_TERMS` terms is left as it is.
#[test]
fn simplifying_a_formula_of_many_terms_keeps_it_shallow() {
    let mut terms: Vec<String> = (0..1 << 15).map(|k| format!("ln(wins + {k})")).collect();
    while terms.len() > 1 {
        terms = terms.chunks(2).map(|p| format!("({} + {})", p[0], p[1])).collect();
    }
    let text = terms.pop().expect("one formula");
    let (depth, pretty_len, finite) = on_small_stack(move || {
        let f = Formula::parse(&text).expect("18 levels parse");
        let pretty = gp::pretty(&f);
        let fp = gp::fingerprint(&f);
        (gp::simplify(&f).depth(), pretty.len(), fp.0.iter().all(|v| v.is_finite()))
    });
    assert!(depth <= 2 * gp::MAX_TERMS, "simplified depth {depth}");
    assert!(pretty_len > 1 << 15 && finite);
}

/// A generate config (the shipped match-3 one) with its first `[[target]]`'s expression replaced.
fn generate_config(expr: &str) -> (PathBuf, String, usize) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/generate_match3.toml");
    let text = std::fs::read_to_string(&path).expect("the shipped config");
    let line = text.lines().position(|l| l == "expr = \"maxs\"").expect("a target `maxs`");
    let text = text.replacen("expr = \"maxs\"", &format!("expr = \"{expr}\""), 1);
    (path, text, line + 1)
}

fn generate_error(path: &Path, text: String) -> String {
    let path = path.to_path_buf();
    on_small_stack(move || GenerateConfig::parse(&path, &text).map(|_| ()).map_err(|e| e.to_string())).unwrap_err()
}

#[test]
fn a_deeply_nested_target_expression_is_an_error_at_its_line_and_column() {
    // A config string holds at most 64 KiB (`config::MAX_CONFIG_STRING`): longer is refused for
    // its length, at its line and column, before the expression is read.
    let (path, text, line) = generate_config(&format!("{}maxs{}", "(".repeat(40_000), ")".repeat(40_000)));
    let err = generate_error(&path, text);
    assert!(
        err.starts_with(&format!("{}:{line}:8:", path.display())) && err.contains("at most 65536 bytes"),
        "{}",
        &err[..err.len().min(400)]
    );
    // Within that length, 30 000 deep is refused by the expression's depth limit.
    for (name, e, col) in [
        // `expr = "` is 8 characters; the 65th `(` is the expression's 65th.
        ("brackets", format!("{}maxs{}", "(".repeat(30_000), ")".repeat(30_000)), 8 + 65),
        ("signs", format!("{}maxs", "-".repeat(30_000)), 8 + 65),
        // The 64th `+` of `maxs + maxs + …` (7 characters a term) makes it 65 deep.
        ("chain", chain(9_000, "maxs"), 8 + 7 * 64 - 1),
    ] {
        let (path, text, line) = generate_config(&e);
        let err = generate_error(&path, text);
        let at = format!("{}:{line}:{col}:", path.display());
        assert!(err.starts_with(&at), "{name}: `{at}` expected first in: {}", &err[..err.len().min(400)]);
        assert!(err.contains("nested deeper than 64 levels"), "{name}: {err}");
        assert!(err.len() < 800, "{name}: the error quotes a window of the expression ({} bytes)", err.len());
    }
}

#[test]
fn a_target_expression_at_the_limit_parses() {
    let max = expr::MAX_DEPTH;
    assert_eq!(max, 64);
    let names = ["maxs", "mins"];
    for (text, deep) in [
        (chain(max - 1, "maxs"), false),
        (chain(max, "maxs"), true),
        (format!("{}maxs{}", "(".repeat(max), ")".repeat(max)), false),
        (format!("{}maxs{}", "(".repeat(max + 1), ")".repeat(max + 1)), true),
        (format!("{}maxs", "-".repeat(max - 1)), false),
        (format!("{}maxs", "-".repeat(max)), true),
    ] {
        match (Expr::parse(&text, &names), deep) {
            (Ok(e), false) => assert_eq!(e.eval(&[2.0, 1.0]).abs(), if text.contains('+') { 2.0 * max as f64 } else { 2.0 }),
            (Err(e), true) => assert!(e.to_string().contains("nested deeper than 64 levels"), "{e}"),
            (got, _) => panic!("{text}: {got:?}"),
        }
    }
    // The config at the limit loads.
    let (path, text, _) = generate_config(&chain(max - 1, "maxs"));
    GenerateConfig::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
}

/// A balanced sum of `2^k` visits (depth `k + 1`, `2^(k+1) - 1` terms).
fn balanced(k: u32) -> String {
    if k == 0 { "visits".to_string() } else { format!("({} + {})", balanced(k - 1), balanced(k - 1)) }
}

/// A formula shallow enough but of millions of terms made every MCTS step of a persona crawl;
/// the parse takes what a tree of GP's height limit can hold and refuses more.
#[test]
fn a_formula_of_more_terms_than_gp_can_write_is_refused() {
    use playforge::search::formula::{Formula, MAX_NODES};
    let at = balanced(17);
    assert_eq!(Formula::parse(&at).unwrap().size(), (1 << 18) - 1);
    let past = balanced(18);
    let e = Formula::parse(&past).unwrap_err();
    assert!(e.to_string().contains(&format!("at most {MAX_NODES} terms")), "{e}");
    assert!(e.to_string().len() < 600, "the error quotes a window, not the formula");
}
