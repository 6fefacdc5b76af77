//! Bad input never panics, and every problem is reported the same way: `file:line:column`, the
//! offending line with a caret, and what was expected instead.
//!
//! The cases are golden files: `tests/data/wgdl/err/<name>.wgdl` holds a game with one problem
//! and `<name>.txt` its expected rendered output — the compile [`Diagnostics`] if the game does
//! not compile, else the first [`RuntimeError`] met while playing the first legal action again
//! and again (rendered with [`RuntimeError::render`]). Adding a `.wgdl` file adds a case; run
//! with `UPDATE_GOLDEN=1` to (re)write the `.txt` files, and read the diff before keeping it.
//! Wording is not all that is checked: the table in [`expected_kinds`] pins the structured kind
//! of every case, and every rendering is checked for its location, its source line and the word
//! "expected". Huge or deeply nested input must give an error, not overflow the stack.
//!
//! Last, seeded fuzz tests mutate Simple Coins and the error cases (characters, words, lines)
//! and check that compiling and playing the result never panics and that every error names the
//! file, a line and a column. A longer run is `fuzz_long` (ignored by default):
//! `FUZZ_N=300000 FUZZ_FILES=a.wgdl,b.wgdl cargo test --release fuzz_long -- --ignored`.

use playforge::rng;
use playforge::wgdl::{self, DiagKind, Diagnostics, Program, RtKind, RuntimeError, Severity};
use rand::RngExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn err_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wgdl/err")
}

/// The name a case is compiled under, so renderings do not depend on where the repo lives.
fn display_name(case: &str) -> String {
    format!("tests/data/wgdl/err/{case}.wgdl")
}

/// Every `<name>.wgdl` in the error folder, sorted by name.
fn cases() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(err_dir())
        .expect("tests/data/wgdl/err exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgdl"))
        .map(|p| {
            let name = p.file_stem().expect("file name").to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).expect("utf-8 test file");
            (name, text)
        })
        .collect();
    out.sort();
    out
}

/// What went wrong with one case.
enum Outcome {
    Compile(Diagnostics),
    Runtime(RuntimeError, Arc<Program>),
    /// It compiled and played `steps` moves without an error.
    Fine {
        steps: usize,
    },
}

/// [`play_case`] on a thread of its own, given a minute: a case that does not end (a compiler or
/// interpreter loop) fails by name instead of hanging the suite. A case takes milliseconds.
fn run_case(case: &str, text: &str) -> Outcome {
    let (tx, rx) = std::sync::mpsc::channel();
    let (name, src) = (case.to_string(), text.to_string());
    std::thread::spawn(move || {
        let _ = tx.send(play_case(&name, &src));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(outcome) => outcome,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{case}: compiling and playing it did not end within 60 s"),
        // The case's thread panicked (its message is printed above).
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{case}: compiling or playing it panicked"),
    }
}

/// Compiles, then plays the first legal action until something fails (at most 500 moves).
fn play_case(case: &str, text: &str) -> Outcome {
    let compiled = match wgdl::compile_str(&display_name(case), text) {
        Ok(c) => c,
        Err(d) => return Outcome::Compile(d),
    };
    let p = compiled.program;
    let err = |e: RuntimeError| Outcome::Runtime(e, p.clone());
    let mut st = match p.initial_state() {
        Ok(st) => st,
        Err(e) => return err(e),
    };
    let mut legal = Vec::new();
    for step in 0..500 {
        if let Err(e) = p.legal_actions(&st, &mut legal) {
            return err(e);
        }
        let Some(&first) = legal.first() else { return Outcome::Fine { steps: step } };
        if let Err(e) = p.apply(&mut st, first) {
            return err(e);
        }
    }
    Outcome::Fine { steps: 500 }
}

fn render(o: &Outcome) -> String {
    match o {
        Outcome::Compile(d) => d.to_string(),
        Outcome::Runtime(e, p) => e.render(p),
        Outcome::Fine { steps } => format!("no error: compiled and played {steps} moves\n"),
    }
}

/// The kind each case must report (compile cases: the first error's kind).
enum Expect {
    Diag(fn(&DiagKind) -> bool),
    Rt(fn(&RtKind) -> bool),
}

fn expected_kinds() -> Vec<(&'static str, Expect)> {
    use Expect::{Diag, Rt};
    vec![
        ("unknown_declaration", Diag(|k| matches!(k, DiagKind::UnknownDeclaration { found, .. } if found == "clas"))),
        ("unknown_class", Diag(|k| matches!(k, DiagKind::UnknownName { what: "class", name, .. } if name == "hous"))),
        ("unknown_parent_class", Diag(|k| matches!(k, DiagKind::UnknownName { what: "parent class", name, .. } if name == "buildng"))),
        ("unknown_attribute", Diag(|k| matches!(k, DiagKind::UnknownAttribute { attr, .. } if attr == "enrgy"))),
        ("unknown_consequence", Diag(|k| matches!(k, DiagKind::UnknownName { what: "consequence", name, .. } if name == "addCoin"))),
        ("unknown_action_in_condition", Diag(|k| matches!(k, DiagKind::UnknownName { what: "action", name, .. } if name == "ern"))),
        ("unknown_object_in_path", Diag(|k| matches!(k, DiagKind::UnknownName { what: "object", name, .. } if name == "globl"))),
        ("unknown_initial", Diag(|k| matches!(k, DiagKind::UnknownName { what: "object description", name, .. } if name == "globalClass"))),
        ("duplicate_class", Diag(|k| matches!(k, DiagKind::Duplicate { what: "class", first_line: 2, .. }))),
        ("duplicate_attribute", Diag(|k| matches!(k, DiagKind::Duplicate { what: "attribute", first_line: 3, .. }))),
        ("duplicate_object", Diag(|k| matches!(k, DiagKind::Duplicate { what: "object description", first_line: 4, .. }))),
        ("duplicate_goal", Diag(|k| matches!(k, DiagKind::Duplicate { what: "goal", first_line: 9, .. }))),
        ("duplicate_action", Diag(|k| matches!(k, DiagKind::Duplicate { what: "action", first_line: 6, .. }))),
        ("bad_long_literal", Diag(|k| matches!(k, DiagKind::BadLiteral { ty: "long", text, .. } if text == "1.5"))),
        (
            "long_literal_out_of_range",
            Diag(|k| matches!(k, DiagKind::BadLiteral { ty: "long", text, .. } if text == "99999999999999999999")),
        ),
        ("parameter_range_too_wide", Diag(|k| matches!(k, DiagKind::Invalid { expected, .. } if expected.contains("2^53")))),
        ("bad_boolean_literal", Diag(|k| matches!(k, DiagKind::BadLiteral { ty: "boolean", text, .. } if text == "yes"))),
        ("type_mismatch_condition", Diag(|k| matches!(k, DiagKind::TypeMismatch { found, .. } if found == "long"))),
        ("type_mismatch_string_plus_long", Diag(|k| matches!(k, DiagKind::TypeMismatch { found, .. } if found == "string"))),
        ("wrong_arity_create_and_assign", Diag(|k| matches!(k, DiagKind::WrongArity { what, found: 1, .. } if what == "createAndAssign"))),
        ("wrong_arity_game_increase", Diag(|k| matches!(k, DiagKind::WrongArity { what, found: 0, .. } if what == "game increase"))),
        ("unterminated_comment", Diag(|k| matches!(k, DiagKind::UnterminatedComment))),
        ("unterminated_string", Diag(|k| matches!(k, DiagKind::UnterminatedString))),
        ("bad_character", Diag(|k| matches!(k, DiagKind::BadCharacter { found: ';' }))),
        (
            "unclosed_bracket",
            Diag(|k| matches!(k, DiagKind::Unexpected { found, expected } if found == "end of line" && expected == "`)`")),
        ),
        ("unknown_consequence_kind", Diag(|k| matches!(k, DiagKind::Unexpected { found, .. } if found == "`drect`"))),
        ("builtin_game_value", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("`game.time`")))),
        ("cyclic_inheritance", Diag(|k| matches!(k, DiagKind::CyclicInheritance { .. }))),
        ("assign_to_constant", Diag(|k| matches!(k, DiagKind::AssignToConstant { attr, .. } if attr == "maxCoins"))),
        ("expression_too_long", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("more than 500")))),
        ("binding_on_rule", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("cannot bind")))),
        ("this_in_rule", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("`this`")))),
        ("goal_gap", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("goal 3")))),
        ("consequence_cycle", Diag(|k| matches!(k, DiagKind::ConsequenceCycle { .. }))),
        ("action_without_group", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("`rest` is in no action group")))),
        ("assignment_in_condition", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("`=`")))),
        ("tile_op_in_expression", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("`board.fall` in an expression")))),
        ("unknown_tile_op", Diag(|k| matches!(k, DiagKind::UnknownName { what: "grid operation", name, .. } if name == "board.spin"))),
        ("tile_op_arity", Diag(|k| matches!(k, DiagKind::WrongArity { what, found: 0, .. } if what == "board.refill"))),
        ("group_arity", Diag(|k| matches!(k, DiagKind::WrongArity { what, found: 1, .. } if what == "board.group"))),
        (
            "clear_group_in_expression",
            Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("`board.clearGroup` in an expression"))),
        ),
        ("overlay_tag_without_colon", Diag(|k| matches!(k, DiagKind::Unexpected { expected, .. } if expected == "`:`"))),
        ("nothing_to_play", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("nothing to play")))),
        ("bad_chance_mode", Diag(|k| matches!(k, DiagKind::UnknownName { what: "chance mode", name, .. } if name == "maybe"))),
        ("rt_deal_impossible", Rt(|k| matches!(k, RtKind::NoDeal { colours: 1, min: 2, .. }))),
        ("rt_swap_off_the_grid", Rt(|k| matches!(k, RtKind::BadSwap { s: 18, last: 17, .. }))),
        ("rt_group_cell_off_the_grid", Rt(|k| matches!(k, RtKind::BadCell { c: 9, last: 8, .. }))),
        ("rt_division_by_zero", Rt(|k| matches!(k, RtKind::DivisionByZero))),
        ("rt_overflow", Rt(|k| matches!(k, RtKind::Overflow { op: "+", .. }))),
        ("rt_overflow_product", Rt(|k| matches!(k, RtKind::Overflow { op: "*", .. }))),
        ("rt_null_path", Rt(|k| matches!(k, RtKind::NullPath { attr } if attr == "this.fruit.isCollectable"))),
        ("rt_dead_object", Rt(|k| matches!(k, RtKind::DeadObject { .. }))),
        ("rt_runaway_rule", Rt(|k| matches!(k, RtKind::RunawayRule { rule, .. } if rule == "levelUp"))),
        ("rt_create_hook_recursion", Rt(|k| matches!(k, RtKind::CreateTooDeep { .. }))),
        ("rt_too_many_objects", Rt(|k| matches!(k, RtKind::TooManyObjects { limit: 3 }))),
        ("rt_too_many_timers", Rt(|k| matches!(k, RtKind::TooManyTimers { limit: 2 }))),
        ("rt_negative_delay", Rt(|k| matches!(k, RtKind::NegativeDelay { delay: -5 }))),
        ("rt_delete_null", Rt(|k| matches!(k, RtKind::DeleteNull))),
        ("inherited_attribute_redeclared", Diag(|k| matches!(k, DiagKind::Duplicate { what: "attribute (inherited)", first_line: 5, .. }))),
        ("increase_builtin", Diag(|k| matches!(k, DiagKind::Invalid { what, .. } if what.contains("`game increase time`")))),
        ("rt_runaway_timers", Rt(|k| matches!(k, RtKind::RunawayTimers { consequence, .. } if consequence == "again"))),
        ("rt_write_to_deleted_named_object", Rt(|k| matches!(k, RtKind::DeadObject { .. }))),
        // Conditions read `this` and the bound object as plain slots (they are live there);
        // a consequence after a `delete` still finds them deleted.
        ("rt_read_deleted_this", Rt(|k| matches!(k, RtKind::DeadObject { .. }))),
        ("rt_read_deleted_bound", Rt(|k| matches!(k, RtKind::DeadObject { .. }))),
    ]
}

/// A short line diff for failure messages.
fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => out.push_str(&format!("  {x}\n")),
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("- {x}\n"));
                }
                if let Some(y) = y {
                    out.push_str(&format!("+ {y}\n"));
                }
            }
        }
    }
    out
}

#[test]
fn golden_files_match_the_rendered_errors() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() >= 30, "only {} error cases", all.len());
    for (case, text) in &all {
        let actual = render(&run_case(case, text));
        let golden = err_dir().join(format!("{case}.txt"));
        if update {
            let old = std::fs::read_to_string(&golden).unwrap_or_default();
            if old != actual {
                std::fs::write(&golden, &actual).expect("write golden file");
                eprintln!("updated {}:\n{}", golden.display(), diff(&old, &actual));
            }
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!("{case}: output differs (- expected, + actual):\n{}", diff(&expected, &actual))),
            Err(_) => failures.push(format!("{case}: no {case}.txt; run with UPDATE_GOLDEN=1 and review it. Output:\n{actual}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_case_reports_the_expected_kind() {
    let table = expected_kinds();
    let all = cases();
    let untabled: Vec<&str> = all.iter().map(|(c, _)| c.as_str()).filter(|c| !table.iter().any(|(t, _)| t == c)).collect();
    assert!(untabled.is_empty(), "add a row to expected_kinds() for {untabled:?}");
    for (case, expect) in &table {
        let text = all.iter().find(|(c, _)| c == case).map(|(_, t)| t).unwrap_or_else(|| panic!("no file {case}.wgdl"));
        let outcome = run_case(case, text);
        match (expect, &outcome) {
            (Expect::Diag(ok), Outcome::Compile(d)) => {
                let errors: Vec<&DiagKind> = d.errors().map(|e| &e.kind).collect();
                assert!(errors.first().is_some_and(|k| ok(k)), "{case}: wrong kind {errors:?}\n{d}");
                // One problem in the file, one error in the report: no cascades.
                assert_eq!(errors.len(), 1, "{case}: expected exactly one error\n{d}");
            }
            (Expect::Rt(ok), Outcome::Runtime(e, _)) => assert!(ok(&e.kind), "{case}: wrong kind {:?}", e.kind),
            _ => panic!(
                "{case}: expected a {} error, got:\n{}",
                if matches!(expect, Expect::Diag(_)) { "compile" } else { "runtime" },
                render(&outcome)
            ),
        }
    }
}

/// Checks the `--> file:L:C` lines of a rendering: the file is named, L and C are in range, and
/// the line after the gutter is line L of the source, verbatim. Returns how many it found.
fn check_locations(out: &str, name: &str, src: &str) -> usize {
    let lines: Vec<&str> = out.lines().collect();
    let src_lines: Vec<&str> = src.split('\n').map(|l| l.trim_end_matches('\r')).collect();
    let mut found = 0;
    for (i, l) in lines.iter().enumerate() {
        let Some(at) = l.trim_start().strip_prefix("--> ") else { continue };
        let loc = at.strip_prefix(name).and_then(|r| r.strip_prefix(':')).unwrap_or_else(|| panic!("`{l}` does not name {name}\n{out}"));
        let (line, col) = loc.split_once(':').unwrap_or_else(|| panic!("no line:column in `{l}`\n{out}"));
        let line: usize = line.parse().unwrap_or_else(|_| panic!("bad line in `{l}`\n{out}"));
        let col: usize = col.parse().unwrap_or_else(|_| panic!("bad column in `{l}`\n{out}"));
        assert!(line >= 1 && line <= src_lines.len(), "line {line} out of range\n{out}");
        let text = src_lines[line - 1];
        assert!(col >= 1 && col <= text.chars().count() + 1, "column {col} out of range for `{text}`\n{out}");
        let shown = lines.get(i + 2).unwrap_or_else(|| panic!("no source line after `{l}`\n{out}"));
        // A long line is shown as a window of it, cut with `…` (at most 242 characters).
        let window = shown.strip_prefix(&format!("{line} | ")).unwrap_or_else(|| panic!("no `{line} | ` in `{shown}`\n{out}"));
        if window.contains('…') {
            assert!(window.chars().count() <= 242 && text.contains(window.trim_matches('…')), "not a window of line {line}\n{out}");
        } else {
            assert_eq!(window, text, "the offending line is not shown verbatim\n{out}");
        }
        found += 1;
    }
    found
}

#[test]
fn every_rendering_shows_file_line_column_the_line_and_what_was_expected() {
    for (case, text) in cases() {
        let outcome = run_case(&case, &text);
        let out = render(&outcome);
        let n = check_locations(&out, &display_name(&case), &text);
        let items = match &outcome {
            Outcome::Compile(d) => d.items.len(),
            _ => 1,
        };
        assert_eq!(n, items, "{case}: every message needs a location\n{out}");
        if let Outcome::Compile(d) = &outcome {
            for e in d.errors() {
                assert!(e.kind.to_string().contains("expected"), "{case}: does not say what was expected: {}", e.kind);
            }
        }
        assert!(out.contains("expected"), "{case}: does not say what was expected:\n{out}");
    }
}

#[test]
fn every_runtime_error_kind_says_what_was_expected() {
    let kinds = [
        RtKind::DivisionByZero,
        RtKind::Overflow { a: 1, op: "+", b: 2 },
        RtKind::NullPath { attr: "a.b".into() },
        RtKind::DeadObject { attr: "a.b".into() },
        RtKind::RunawayRule { rule: "r".into(), limit: 1 },
        RtKind::TooManyObjects { limit: 1 },
        RtKind::TooManyTimers { limit: 1 },
        RtKind::CreateTooDeep { limit: 1 },
        RtKind::NegativeDelay { delay: -1 },
        RtKind::IllegalAction { action: "a(b)".into() },
        RtKind::DeleteNull,
    ];
    for k in kinds {
        assert!(k.to_string().contains("expected"), "{k:?}: {k}");
    }
}

#[test]
fn an_illegal_move_is_an_error_not_a_panic() {
    let c = crate::util::game("simple_coins.wgdl");
    let p = &c.program;
    let mut st = p.initial_state().expect("start");
    let mut legal = Vec::new();
    p.legal_actions(&st, &mut legal).expect("legal");
    let get = *legal.iter().find(|a| p.actions[a.def as usize].name == "getCoins").expect("getCoins");
    for _ in 0..30 {
        p.apply_checked(&mut st, get).expect("legal while energy lasts");
    }
    let e = p.apply_checked(&mut st, get).expect_err("no energy left");
    assert!(matches!(&e.kind, RtKind::IllegalAction { action } if action == "getCoins(coin1)"), "{e:?}");
    let out = e.render(p);
    assert!(out.contains("simple_coins.wgdl:") && out.contains("expected"), "{out}");
    // Not even an action of this game: still an error, not an index out of bounds.
    let bogus = playforge::wgdl::Action { def: p.actions.len() as u16 + 5, this: 0, bound: playforge::wgdl::program::NONE };
    assert_eq!(p.is_legal(&st, bogus), Ok(false));
    let e = p.apply_checked(&mut st, bogus).expect_err("no such action");
    assert!(matches!(e.kind, RtKind::IllegalAction { .. }), "{e:?}");
}

#[test]
fn huge_or_deeply_nested_input_is_an_error_not_a_stack_overflow() {
    // Each of these used to recurse once per bracket, sign, operator or chained consequence and
    // overflow the stack (an abort, not even a panic) somewhere between 10 000 and 100 000.
    let coins = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("games/simple_coins.wgdl")).expect("simple_coins.wgdl");
    let n = 100_000;
    let chain = |kind: &str| {
        let mut s = coins.clone();
        for i in 0..20_000 {
            s.push_str(&format!("consequence c{i} {kind} c{}\n", i + 1));
        }
        s + "consequence c20000 direct global.coins = global.coins + long 1\nhasConsequence getCoins c0\n"
    };
    let inputs = [
        ("brackets", format!("{coins}goal 5 {}global.coins > long 1{}\n", "(".repeat(n), ")".repeat(n))),
        (
            "minus signs",
            format!("{coins}consequence big direct global.coins = {}global.coins\nhasConsequence getCoins big\n", "- ".repeat(n)),
        ),
        ("nots", format!("{coins}condition getCoins {}boolean true\n", "not ".repeat(n))),
        (
            "operators",
            format!("{coins}consequence big direct global.coins = global.coins{}\nhasConsequence getCoins big\n", " + long 1".repeat(n)),
        ),
        ("conditional chain", chain("conditional global.coins > long 0")),
        ("timed chain", chain("timed long 1")),
    ];
    for (what, text) in inputs {
        let d = crate::util::compile_err(&text);
        let e = d.errors().next().unwrap_or_else(|| panic!("{what}: no error"));
        assert!(matches!(&e.kind, DiagKind::Invalid { what, .. } if what.contains("deep")), "{what}: {:?}", e.kind);
        assert!(check_locations(&d.to_string(), "test.wgdl", &text) >= 1);
    }
}

#[test]
fn a_game_value_store_too_big_to_lay_out_is_a_compile_error() {
    // Every computed segment (`this.name`) can be any of the game's names, so four of them over
    // 120 names would need 120⁴ counters. This used to compile with the store cut short and then
    // index past it (a panic) at the first increment outside it.
    let mut s =
        String::from("class globalClass\nattribute globalClass coins long 0\nobject global is globalClass\ninitial global\nclass thing\n");
    for i in 0..120 {
        s.push_str(&format!("object t{i} is thing\ninitial t{i}\n"));
    }
    s.push_str("action thing poke\nconsequence count game increase this.name, this.name, this.name, this.name\n");
    s.push_str("hasConsequence poke count\ngoal 1 global.coins > long 1\n");
    let d = crate::util::compile_err(&s);
    assert!(d.errors().any(|e| matches!(&e.kind, DiagKind::Invalid { what, .. } if what.contains("game value store"))), "{d}");
    // Two computed segments are fine and count per name pair.
    let s = s.replace("this.name, this.name, this.name, this.name", "String poked, this.name, this.name");
    let c = crate::util::compile(&s);
    let p = &c.program;
    let mut st = p.initial_state().expect("start");
    let mut legal = Vec::new();
    p.legal_actions(&st, &mut legal).expect("legal");
    for &a in legal.iter().rev().take(3) {
        p.apply(&mut st, a).expect("increment");
    }
    let node = p.store.paths.iter().position(|x| x == "poked.t119.t119").expect("node poked.t119.t119");
    assert_eq!(st.slots[node], 1);
}

#[test]
fn huge_times_and_amounts_saturate_the_clock_instead_of_overflowing() {
    // Used to overflow `clock + delay` (a panic in debug builds, a clock that jumps back in
    // release builds).
    let game = |settings: &str, body: &str| {
        format!(
            "class globalClass\nattribute globalClass coins long 0\nobject global is globalClass\ninitial global\n{settings}\n\
             action globalClass plant\nconsequence ripen direct global.coins = global.coins + long 1\n{body}\n\
             hasConsequence plant c\ngoal 1 global.coins > long 10\n"
        )
    };
    let max = i64::MAX;
    let games = [
        game("duration long 10", &format!("consequence c timed long {max} ripen")),
        game("duration long 10", &format!("consequence c game increase String a, String b by long {max}")),
        game(&format!("session length long {max}\nsession pause long {max}\nduration long {max}"), "consequence c endSession"),
        game(&format!("duration long {max}"), "consequence c timed long 5 ripen"),
    ];
    for src in games {
        let c = crate::util::compile(&src);
        let p = &c.program;
        let mut st = p.initial_state().expect("start");
        let mut legal = Vec::new();
        for _ in 0..3 {
            p.legal_actions(&st, &mut legal).expect("legal");
            let before = st.clock;
            p.apply(&mut st, legal[0]).unwrap_or_else(|e| panic!("{}", e.render(p)));
            assert!(st.clock >= before && st.timers.iter().all(|t| t.due >= st.clock), "clock {} → {}\n{src}", before, st.clock);
        }
    }
}

/// A conditional chain of 100 links is fine; compiled from its middle first, the rest of it must
/// still count the links already compiled.
#[test]
fn a_chain_compiled_from_its_middle_still_counts_every_link() {
    let chain = |links: usize, first_use: usize| {
        let mut s = String::from("class globalClass\nattribute globalClass coins long 0\nobject global is globalClass\ninitial global\n");
        s.push_str("action globalClass a\naction globalClass b\ngoal 1 global.coins > long 10\n");
        s.push_str(&format!("hasConsequence a c{first_use}\nhasConsequence b c0\n"));
        for i in 0..links {
            s.push_str(&format!("consequence c{i} conditional global.coins >= long 0 c{}\n", i + 1));
        }
        s + &format!("consequence c{links} direct global.coins = global.coins + long 1\n")
    };
    let ok = crate::util::compile(&chain(99, 50));
    let p = &ok.program;
    let mut st = p.initial_state().expect("start");
    let b = playforge::wgdl::Action {
        def: p.actions.iter().position(|a| a.name == "b").expect("b") as u16,
        this: 0,
        bound: playforge::wgdl::program::NONE,
    };
    p.apply(&mut st, b).expect("a 100-link chain runs");
    let d = crate::util::compile_err(&chain(150, 75));
    assert!(d.errors().any(|e| matches!(&e.kind, DiagKind::Invalid { what, .. } if what.contains("chain"))), "{d}");
}

// ---------------------------------------------------------------- fuzzing

const TOKENS: &[&str] = &[
    "long",
    "double",
    "boolean",
    "String",
    "object:",
    "object",
    "null",
    "this",
    "game",
    ".",
    "sum",
    "create:",
    "forEveryGOD",
    "forEveryInstance",
    "/*",
    "*/",
    "//",
    "\"",
    "-",
    "99999999999999999999",
    "0",
    "1.5",
    "(",
    ")",
    "=",
    "==",
    "and",
    "not",
    "xor",
    "timed",
    "direct",
    "conditional",
    "createAndAssign",
    "create",
    "delete",
    "endSession",
    "increase",
    "by",
    ",",
    "limit",
    "session",
    "length",
    "pause",
    "duration",
    "goal",
    "initial",
    "class",
    ":",
    "attribute",
    "action",
    "consequence",
    "hasConsequence",
    "coinGenerator",
    "globalClass",
    "global",
    "getCoins",
    "coin20",
    "energy",
    "/",
    "*",
    "é",
    "\t",
    "\n",
];
const CHARS: &[char] = &['a', 'z', '0', '9', '.', ':', '=', '<', '!', '-', '+', '*', '/', '(', ')', '"', ' ', '\n', '\t', 'é', '→', '_'];

/// Applies 1–4 random edits (characters, words or whole lines) to `src`.
fn mutate(src: &str, r: &mut rng::Rng) -> String {
    let mut s: Vec<char> = src.chars().collect();
    for _ in 0..r.random_range(1..=4) {
        let n = s.len().max(1);
        let i = r.random_range(0..n).min(s.len());
        let line_bounds = |s: &[char], i: usize| {
            let lo = s[..i].iter().rposition(|&c| c == '\n').map_or(0, |p| p + 1);
            let hi = s[i..].iter().position(|&c| c == '\n').map_or(s.len(), |p| i + p + 1);
            (lo, hi)
        };
        match r.random_range(0..8) {
            0 if i < s.len() => {
                s.remove(i);
            }
            1 if i < s.len() => {
                let c = s[i];
                s.insert(i, c);
            }
            2 if i < s.len() => s[i] = CHARS[r.random_range(0..CHARS.len())],
            3 => {
                // Delete the word around i.
                let lo = s[..i].iter().rposition(|c| c.is_whitespace()).map_or(0, |p| p + 1);
                let hi = s[i..].iter().position(|c| c.is_whitespace()).map_or(s.len(), |p| i + p);
                s.drain(lo..hi);
            }
            4 => {
                let (lo, hi) = line_bounds(&s, i);
                let line: Vec<char> = s[lo..hi].to_vec();
                s.splice(hi..hi, line);
            }
            5 => {
                let (lo, hi) = line_bounds(&s, i);
                s.drain(lo..hi);
            }
            6 => {
                let (lo, hi) = line_bounds(&s, i);
                let line: Vec<char> = s.drain(lo..hi).collect();
                let j = r.random_range(0..=s.len());
                let (lo2, _) = line_bounds(&s, j);
                s.splice(lo2..lo2, line);
            }
            _ => {
                let t = TOKENS[r.random_range(0..TOKENS.len())];
                let text: Vec<char> = format!(" {t} ").chars().collect();
                s.splice(i..i, text);
            }
        }
    }
    s.into_iter().collect()
}

/// Compiles and, if that works, plays up to 60 random moves; returns the rendering of any error.
fn compile_and_play(name: &str, text: &str, seed: u64) -> Option<String> {
    let compiled = match wgdl::compile_str(name, text) {
        Ok(c) => c,
        Err(d) => {
            assert!(d.has_errors(), "a failed compile must report an error\n{d}");
            return Some(d.to_string());
        }
    };
    if compiled.warnings.items.iter().any(|w| w.severity == Severity::Error) {
        panic!("errors among the warnings of a successful compile");
    }
    let p = compiled.program;
    super::util::random_moves(&p, seed, 60).err().map(|e| e.render(&p))
}

/// Mutates `original` once per seed; returns (inputs that gave an error, inputs that played fine).
fn fuzz(name: &str, original: &str, seeds: std::ops::Range<u64>) -> (usize, usize) {
    let (mut errors, mut fine) = (0, 0);
    for seed in seeds {
        let mut r = rng::stream(seed, 0, 0, 0);
        let text = mutate(original, &mut r);
        let outcome = std::panic::catch_unwind(|| compile_and_play(name, &text, seed));
        match outcome {
            Err(_) => panic!("{name}, seed {seed}: panicked on this input:\n{text}"),
            Ok(Some(out)) => {
                errors += 1;
                assert!(check_locations(&out, name, &text) >= 1, "{name}, seed {seed}: no location in\n{out}");
            }
            Ok(None) => fine += 1,
        }
    }
    (errors, fine)
}

#[test]
fn mutated_simple_coins_never_panics_and_every_error_has_a_location() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/simple_coins.wgdl");
    let original = std::fs::read_to_string(path).expect("simple_coins.wgdl");
    let (errors, fine) = fuzz("fuzz/simple_coins.wgdl", &original, 0..10_000);
    // The mutations must actually break things, and not always.
    assert!(errors > 3000 && fine > 300, "errors {errors}, fine {fine}");
}

#[test]
fn mutated_error_cases_never_panic() {
    // The error cases use most of the language (timers, create hooks, deletion, bindings, …).
    for (case, text) in cases() {
        fuzz(&format!("fuzz/{case}.wgdl"), &text, 0..300);
    }
}

#[test]
#[ignore = "long fuzz run"]
fn fuzz_long() {
    let n: u64 = std::env::var("FUZZ_N").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/simple_coins.wgdl");
    let mut corpus = vec![("coins".to_string(), std::fs::read_to_string(path).expect("simple_coins.wgdl"))];
    corpus.extend(cases());
    let extra = std::env::var("FUZZ_FILES").unwrap_or_default();
    for f in extra.split(',').filter(|f| !f.is_empty()) {
        corpus.push((f.to_string(), std::fs::read_to_string(f).expect("fuzz file")));
    }
    let mut panics = 0;
    for seed in 0..n {
        let (case, original) = &corpus[(seed % corpus.len() as u64) as usize];
        let mut r = rng::stream(seed, 7, 0, 0);
        let mut text = original.clone();
        for _ in 0..r.random_range(1..4) {
            text = mutate(&text, &mut r);
        }
        let name = format!("fuzz/{case}.wgdl");
        if std::panic::catch_unwind(|| compile_and_play(&name, &text, seed)).is_err() {
            panics += 1;
            std::fs::write(std::env::temp_dir().join(format!("fuzz_panic_{seed}.wgdl")), &text).expect("write");
        }
    }
    assert_eq!(panics, 0);
}

#[test]
fn an_object_with_an_unknown_class_is_reported_once() {
    let src = "class building\nclass house : building\nobject poor is hous\nattribute poor coins 5\ninitial poor\naction building go\nconsequence c direct poor.coins = long 1\nhasConsequence go c\n";
    let d = wgdl::compile_str("x.wgdl", src).err().expect("an unknown class is an error");
    let errors: Vec<String> = d.errors().map(|e| e.kind.to_string()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("unknown class `hous`"), "{errors:?}");
}

/// Output into a closed pipe (`playforge … | head -1` once `head` has quit) ends a command
/// quietly — exit 0, no panic — whichever command writes it (one place, the `outln!` macro and
/// `cli::main`, handles it).
#[test]
fn a_closed_pipe_never_panics() {
    let bin = env!("CARGO_BIN_EXE_playforge");
    let commands: [&[&str]; 3] = [
        &["check", "games/gdl/connect_four.kif"],
        &["persona-play", "configs/personas_quick.toml", "--persona", "MaxS", "--agent", "random", "--seeds", "1-3"],
        &["gdl-match", "games/gdl/tictactoe.kif", "--players", "random,random", "--matches", "1", "--out", "target/closed-pipe-test"],
    ];
    for args in commands {
        let mut child = std::process::Command::new(bin)
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before the first line is written.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(o.status.success(), "{args:?}: {:?} {err}", o.status);
    }
}

/// More than 65 535 object descriptions (or classes) is a clear error at the first one past
/// the limit — not a wrapped 16-bit index and false "no attribute" errors — and a long chain of
/// classes compiles in linear time and memory (the subclass table was n² booleans).
#[test]
fn declaration_counts_past_a_16_bit_index_are_errors() {
    let mut src = String::from("players a b\nclass c\nattribute c x long 0\n");
    for i in 0..65_537 {
        src.push_str(&format!("object o{i} is c\n"));
    }
    src.push_str("initial o65536\nwinner a o65536.x > 0\n");
    let d = wgdl::compile_str("many.wgdl", &src).err().expect("an error");
    let first = &d.items[0];
    assert!(matches!(&first.kind, DiagKind::Invalid { what, .. } if what == "more than 65535 object descriptions"), "{}", d.to_string());
    assert!(d.to_string().contains("many.wgdl:65539:8"), "{}", d.to_string());
    // No error about the attribute of the description past the limit (no wrapped index).
    assert!(!d.to_string().contains("no attribute"), "{}", d.to_string());

    let mut src = String::from("players a b\nclass c0\nattribute c0 x long 0\n");
    for i in 1..70_000 {
        src.push_str(&format!("class c{i} : c{}\n", i - 1));
    }
    let d = wgdl::compile_str("chain.wgdl", &src).err().expect("an error");
    let r = d.to_string();
    assert!(r.contains("more than 256 parent classes") && r.contains("more than 65535 classes"), "{r}");
}

/// Every count in a config is read within a range, and one out of it is an error at its line
/// and column (`tree_parallel = 100000` aborted spawning threads; `replays = 100000000` ran on;
/// `budget_ms = 0` and `subgoals = 0` were accepted); counts given on the command line too.
#[test]
fn counts_in_configs_and_flags_are_checked_with_their_place() {
    use playforge::experiment::config::PlayConfig;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sc = std::fs::read_to_string(root.join("configs/simple_coins.toml")).unwrap();
    for (key, value) in [("tree_parallel", "100000"), ("budget_ms", "0"), ("subgoals", "0"), ("root_parallel", "0")] {
        let text = if sc.contains(&format!("\n{key} = ")) {
            regex_free_replace(&sc, &format!("\n{key} = "), value)
        } else {
            sc.replace("[search]\n", &format!("[search]\n{key} = {value}\n"))
        };
        let line = text.lines().position(|l| l.starts_with(key)).unwrap() + 1;
        let e = PlayConfig::parse("sc.toml", &text).err().unwrap_or_else(|| panic!("{key} = {value} accepted")).to_string();
        let col = key.len() + 4;
        assert!(e.starts_with(&format!("sc.toml:{line}:{col}: {value} is out of range; expected a whole number from")), "{e}");
    }
    let hb = std::fs::read_to_string(root.join("configs/hexmage_balance.toml")).unwrap();
    let text = regex_free_replace(&hb, "replays = ", "100000000");
    let e = playforge::balance::config::BalanceConfig::parse(Path::new("b.toml"), &text).expect_err("an error").to_string();
    assert!(e.contains("100000000 is out of range; expected a whole number from 0 to 10000"), "{e}");
    let bin = env!("CARGO_BIN_EXE_playforge");
    for args in [
        &["bench", "games/tictactoe.wgdl", "--seconds", "0"][..],
        &["bench", "games/tictactoe.wgdl", "--seconds", "NaN"],
        &["balance", "configs/hexmage_balance.toml", "--iterations", "0"],
    ] {
        let o = std::process::Command::new(bin).args(args).current_dir(root).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("invalid value") && !err.contains("NaN/s"), "{args:?}: {err}");
    }
}

/// `text` with the value after the first `key` (up to the line's end) replaced by `value`.
fn regex_free_replace(text: &str, key: &str, value: &str) -> String {
    let at = text.find(key).expect("the key") + key.len();
    let end = at + text[at..].find('\n').unwrap_or(text.len() - at);
    format!("{}{value}{}", &text[..at], &text[end..])
}

/// Paths in a config are relative to the config file, so a run works from any working
/// directory (they were resolved against the working directory); an older config whose path
/// holds only from the working directory still loads. `verify` given a balance config says what
/// it expected instead of "no game".
#[test]
fn config_paths_are_relative_to_the_config_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = playforge::experiment::config::PlayConfig::load(&root.join("configs/simple_coins.toml")).unwrap();
    assert_eq!(cfg.experiment.game, root.join("configs/../games/simple_coins.wgdl"));
    let (p, _) = playforge::persona::config::PersonaConfig::load(&root.join("configs/personas_quick.toml")).unwrap();
    assert!(p.personas.game.is_file(), "{}", p.personas.game.display());
    // From another working directory, through the CLI.
    let bin = env!("CARGO_BIN_EXE_playforge");
    let elsewhere = std::env::temp_dir();
    let o = std::process::Command::new(bin)
        .args([
            "landscape",
            &root.join("configs/landscape_hexmage.toml").display().to_string(),
            "--samples",
            "1",
            "--neighbours",
            "1",
            "--out",
        ])
        .arg(elsewhere.join(format!("playforge-landscape-{}", std::process::id())))
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // A path that holds only from the working directory (the tests run in the repository).
    let old = playforge::config::resolve_path(Path::new("/nonexistent/configs/x.toml"), Path::new("games/simple_coins.wgdl"));
    assert_eq!(old, Path::new("games/simple_coins.wgdl"));
    let o = std::process::Command::new(bin).args(["verify", "configs/hexmage_balance.toml"]).current_dir(root).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("a balance config, not an encounter; expected a best_encounter.toml"), "{err}");
}
