//! The two tiers write the same outputs (cargo feature `compiled`; without it this module is
//! empty): every shipped config in `configs/` and `configs/experiments/` is run by the CLI binary
//! once with `--tier interp` and once with `--tier compiled`, each in a fresh folder of its own,
//! and the two folders must hold the same files with the same bytes, and the two standard outputs
//! must be equal. tests/tiers.rs holds the tiers in lockstep move by move on random games; this
//! holds them to it where a designer looks — searches, optimizers, personas, playtests, tables,
//! charts and reports — and through every code path the commands add (overlays, parameter
//! vectors written into programs, measures, result formulas). Budgets are cut so that the whole
//! test takes seconds: by the commands' own flags where they can, else by a copy of the config
//! (`Case::copy`, each with its reason), and a search under a wall-clock budget gets an iteration
//! budget, since what it does depends on the machine's speed. Only the wall clock is masked
//! (`normalize`, `util::mask_wall_clock`); a config that cannot be run goes into `SKIPPED` with its
//! reason, and the test fails on a config that is in neither list.

#[cfg(feature = "compiled")]
mod every_config {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::Mutex;
    use std::time::Instant;

    /// An edit of a config's copy (`toml::Table` of the whole file).
    type Edit = fn(&mut toml::Table);

    /// How one shipped config is run: `playforge <command> <config> <flags> --out out --quiet
    /// --tier …` in a fresh folder.
    struct Case {
        /// The config, relative to the repository root.
        config: &'static str,
        command: &'static str,
        /// The command's own flags that cut the budget.
        flags: &'static [&'static str],
        /// `None`: the shipped file itself. `Some(edit)`: a copy with the edit applied (its paths
        /// made absolute), for budgets no flag reaches and for wall-clock budgets; both tiers run
        /// the same copy.
        copy: Option<Edit>,
    }

    /// Every shipped config and how it runs, about the slowest first (two threads share the list).
    const CASES: &[Case] = &[
        // The shipped config; .ci/run uses 3 000 evaluations (30 s), 350 is about the fewest
        // with a confirmed elite (so elites/ and the map are not empty).
        Case { config: "configs/generate_hex_map.toml", command: "generate", flags: &["--evaluations", "350"], copy: None },
        // A copy: one iteration of the shipped config (--iterations 1) still takes 92 s (MCTS
        // players of 250, 100 and 20 iterations a move); `generate_short`.
        Case { config: "configs/generate_match3_map.toml", command: "generate", flags: &["--iterations", "1"], copy: Some(generate_short) },
        // A copy: one iteration of the shipped config takes 17 s; `generate_short`.
        Case { config: "configs/generate_match3.toml", command: "generate", flags: &["--iterations", "1"], copy: Some(generate_short) },
        // A copy: one iteration of the shipped config takes 15 s; `generate_short`.
        Case { config: "configs/generate_magic_land.toml", command: "generate", flags: &["--iterations", "1"], copy: Some(generate_short) },
        // A copy: the paper's scale (a population of 100, 50 games of 250 MCTS iterations a
        // move) takes hours for one generation; `personas_short`. The other two personas than
        // personas_quick's, so that all four run.
        Case {
            config: "configs/personas_paper.toml",
            command: "personas",
            flags: &["--generations", "1", "--only", "MinS,MaxM"],
            copy: Some(personas_short),
        },
        // A copy: one generation of .ci/run's two personas (the flags) takes 17 s; `personas_short`.
        Case {
            config: "configs/personas_quick.toml",
            command: "personas",
            flags: &["--generations", "1", "--only", "MaxS,MinM"],
            copy: Some(personas_short),
        },
        // Copies: no flag cuts a comparison's seeds or budget (10 and 5 seeds of 10 000 and
        // 17 000 evaluations: half an hour each); `compare_short`.
        Case { config: "configs/compare_optimizers_strict.toml", command: "experiment", flags: &[], copy: Some(compare_short) },
        Case { config: "configs/compare_optimizers.toml", command: "experiment", flags: &[], copy: Some(compare_short) },
        // Copies: no flag cuts an experiment's seeds or budgets, and each searches under a
        // wall-clock budget (its own or its base's); `experiment_short`.
        Case { config: "configs/experiments/e3_subgoals.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        Case { config: "configs/experiments/e12_forfeit.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        Case { config: "configs/experiments/e4_ucb.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        Case { config: "configs/experiments/e10_best_path.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        Case { config: "configs/experiments/e17_nmcs.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        Case { config: "configs/experiments/e11_groups.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        Case { config: "configs/experiments/e7_duplicates.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        Case { config: "configs/experiments/e17_nmcs_sc.toml", command: "experiment", flags: &[], copy: Some(experiment_short) },
        // The shipped configs with .ci/run's flags (balance: 4 iterations instead of the whole
        // run's 29, 6 s).
        Case {
            config: "configs/playtest_match3.toml",
            command: "playtest",
            flags: &["--replicates", "3", "--rollouts", "300"],
            copy: None,
        },
        Case {
            config: "configs/playtest_stacker.toml",
            command: "playtest",
            flags: &["--replicates", "3", "--rollouts", "300"],
            copy: None,
        },
        Case { config: "configs/playtest_uct.toml", command: "playtest", flags: &["--replicates", "3", "--rollouts", "300"], copy: None },
        // A game in its own process (Python): no WGDL is run, so both tiers must agree trivially.
        Case {
            config: "configs/playtest_external_roguelike.toml",
            command: "playtest",
            flags: &["--replicates", "2", "--rollouts", "300"],
            copy: None,
        },
        Case { config: "configs/hexmage_balance.toml", command: "balance", flags: &["--iterations", "4"], copy: None },
        Case { config: "configs/hex_tournament.toml", command: "tournament", flags: &["--encounters", "2"], copy: None },
        Case {
            config: "configs/landscape_hexmage.toml",
            command: "landscape",
            flags: &["--samples", "10", "--neighbours", "3"],
            copy: None,
        },
        // Copies: one search of one seed, but under a wall-clock budget (`play` has no flag for
        // the budget); `play_short`.
        Case { config: "configs/magic_land_level5.toml", command: "play", flags: &[], copy: Some(play_short) },
        Case { config: "configs/magic_land.toml", command: "play", flags: &[], copy: Some(play_short) },
        Case { config: "configs/simple_coins.toml", command: "play", flags: &[], copy: Some(play_short) },
    ];

    /// Shipped configs this test does not run, each with its reason.
    const SKIPPED: &[(&str, &str)] = &[
        (
            "configs/personas_external_roguelike.toml",
            "a Python game in its own process: no WGDL runs, so the tier changes nothing (tests/personas_external.rs runs it)",
        ),
        (
            "configs/generate_external_roguelike.toml",
            "a Python game in its own process: no WGDL runs, so the tier changes nothing (tests/generate_external.rs runs it and verifies its answer)",
        ),
        (
            "configs/playtest_external_deckbuilder.toml",
            "a JavaScript game in its own process: no WGDL runs, so the tier changes nothing, and it needs `node` (tests/playtest_external.rs runs it where Node is installed)",
        ),
    ];

    /// The section `name` of `t` (a table), created if missing.
    fn section<'a>(t: &'a mut toml::Table, name: &str) -> &'a mut toml::Table {
        t.entry(name).or_insert_with(|| toml::Value::Table(toml::Table::new())).as_table_mut().expect("a TOML table")
    }

    /// Every table of the array of tables `name` (`[[player]]`, `[[condition]]`).
    fn each<'a>(t: &'a mut toml::Table, name: &str) -> impl Iterator<Item = &'a mut toml::Table> {
        t.get_mut(name).and_then(|v| v.as_array_mut()).into_iter().flatten().map(|v| v.as_table_mut().expect("an array of TOML tables"))
    }

    fn int(t: &toml::Table, key: &str) -> Option<i64> {
        t.get(key).map(|v| v.as_integer().unwrap_or_else(|| panic!("`{key}` is not an integer")))
    }

    /// A wall-clock budget (`budget_ms = B`) becomes `iterations = B / 8` (the ratios between
    /// conditions kept: Magic Land's 4 s, 500 iterations), and an iteration budget is cut a
    /// hundredfold (e7's 200 000 iterations, 2 000): a search under a wall-clock budget runs as
    /// many iterations as the machine manages at the moment, so two runs of one tier do not agree
    /// either (the CLI says so: "Not reproducible").
    fn iterations_for_wall_clock(search: &mut toml::Table) {
        if let Some(ms) = search.remove("budget_ms") {
            let ms = ms.as_integer().expect("budget_ms is an integer");
            search.insert("iterations".into(), toml::Value::Integer((ms / 8).max(1)));
        } else if let Some(n) = int(search, "iterations") {
            search.insert("iterations".into(), toml::Value::Integer((n / 100).max(1)));
        }
    }

    /// A play config: its search with `iterations_for_wall_clock`.
    fn play_short(t: &mut toml::Table) {
        iterations_for_wall_clock(section(t, "search"));
    }

    /// An experiment: 2 seeds per condition instead of 20 (two, so that the confidence intervals
    /// and Welch tests have numbers), its conditions' searches with `iterations_for_wall_clock`
    /// (and its base config with `play_short`, in `prepare`).
    fn experiment_short(t: &mut toml::Table) {
        section(t, "experiment").insert("seeds".into(), toml::Value::Integer(2));
        for c in each(t, "condition") {
            if let Some(s) = c.get_mut("search").and_then(|s| s.as_table_mut()) {
                iterations_for_wall_clock(s);
            }
        }
    }

    /// An optimizer comparison: 1 seed, 80 evaluations (two ES generations), 2 confirmation
    /// games per pair; every arm (es, cma, sa, sa-classic) still runs.
    fn compare_short(t: &mut toml::Table) {
        section(t, "compare").insert("seeds".into(), toml::Value::Integer(1));
        let o = section(t, "overrides");
        section(o, "balance").insert("max_evaluations".into(), toml::Value::Integer(80));
        section(o, "evaluation").insert("confirm_games".into(), toml::Value::Integer(2));
    }

    /// A generate config: 2 games per candidate, 4 per confirmation, each player's MCTS
    /// iterations per move cut 25-fold (at least 2). The rest (parameters, players' formulas,
    /// overlays, measures, targets, descriptors) as shipped; the wall-clock cap `budget_minutes`
    /// too, which a run of seconds never reaches.
    fn generate_short(t: &mut toml::Table) {
        let g = section(t, "generate");
        g.insert("games".into(), toml::Value::Integer(2));
        g.insert("confirm_games".into(), toml::Value::Integer(4));
        for p in each(t, "player") {
            if let Some(n) = int(p, "iterations") {
                p.insert("iterations".into(), toml::Value::Integer((n / 25).max(2)));
            }
        }
    }

    /// A persona config: 10 MCTS iterations a move, 4 games per generation, 6 held-out games, a
    /// population of 8 (2 elites, 3 mutants). The personas' measures and the reward as shipped.
    fn personas_short(t: &mut toml::Table) {
        let p = section(t, "personas");
        p.insert("iterations".into(), toml::Value::Integer(10));
        p.insert("games".into(), toml::Value::Integer(4));
        p.insert("held_out".into(), toml::Value::Integer(6));
        let gp = section(t, "gp");
        gp.insert("population".into(), toml::Value::Integer(8));
        gp.insert("elites".into(), toml::Value::Integer(2));
        gp.insert("mutants".into(), toml::Value::Integer(3));
    }

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// Reads a config as a table with its relative `game` and `base` paths made absolute (a copy
    /// lives elsewhere).
    fn load_anchored(path: &Path) -> toml::Table {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut t: toml::Table = text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let dir = path.parent().expect("a config's folder");
        for (_, v) in t.iter_mut() {
            if let Some(s) = v.as_table_mut() {
                for key in ["game", "base"] {
                    if let Some(p) = s.get(key).and_then(|p| p.as_str()).map(PathBuf::from)
                        && p.is_relative()
                    {
                        s.insert(key.into(), toml::Value::String(dir.join(p).display().to_string()));
                    }
                }
            }
        }
        t
    }

    /// The config file the pair runs: the shipped one, or its edited copy written into `pair`
    /// (an experiment's base config copied beside it with `play_short`).
    fn prepare(case: &Case, pair: &Path) -> PathBuf {
        let shipped = root().join(case.config);
        let Some(edit) = case.copy else { return shipped };
        let mut t = load_anchored(&shipped);
        edit(&mut t);
        if let Some(base) = t.get_mut("experiment").and_then(|e| e.as_table_mut()).filter(|e| e.contains_key("base")) {
            let from = PathBuf::from(base["base"].as_str().expect("an experiment's base is a path"));
            let mut b = load_anchored(&from);
            play_short(&mut b);
            let to = pair.join("base.toml");
            std::fs::write(&to, toml::to_string(&b).expect("a base config serializes")).expect("write the base's copy");
            base.insert("base".into(), toml::Value::String(to.display().to_string()));
        }
        let to = pair.join("config.toml");
        std::fs::write(&to, toml::to_string(&t).expect("a config serializes")).expect("write the config's copy");
        to
    }

    /// Every file under `dir`, by its path relative to `base`.
    fn tree(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.expect("a folder entry").path();
            if p.is_dir() {
                tree(base, &p, out);
            } else {
                let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                out.insert(p.strip_prefix(base).expect("under the run's folder").to_path_buf(), bytes);
            }
        }
    }

    /// Runs the case on `tier` in the fresh folder `dir`: its standard output, or why it failed.
    fn run(case: &Case, config: &Path, tier: &str, dir: &Path) -> Result<String, String> {
        std::fs::create_dir_all(dir).expect("create the run's folder");
        let o = Command::new(env!("CARGO_BIN_EXE_playforge"))
            .arg(case.command)
            .arg(config)
            .args(case.flags)
            .args(["--out", "out", "--quiet", "--tier", tier])
            .current_dir(dir)
            .output()
            .expect("start playforge");
        if !o.status.success() {
            return Err(format!(
                "--tier {tier}: {}\nstdout:\n{}\nstderr:\n{}",
                o.status,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        String::from_utf8(o.stdout).map_err(|e| format!("--tier {tier}: the standard output is not UTF-8: {e}"))
    }

    /// Two differing lines, or where they part in long ones (80 characters either side).
    fn window(a: &str, b: &str) -> (String, String) {
        if a.len() <= 240 && b.len() <= 240 {
            return (a.to_string(), b.to_string());
        }
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        let cut = |s: &[char]| {
            let near: String = s[at.saturating_sub(80).min(s.len())..(at + 80).min(s.len())].iter().collect();
            format!("(from character {}) …{near}…", at + 1)
        };
        (cut(&a), cut(&b))
    }

    /// The first line where `a` and `b` part (1-based), both lines; for binary files the first
    /// differing byte.
    fn first_difference(a: &[u8], b: &[u8]) -> String {
        match (std::str::from_utf8(a), std::str::from_utf8(b)) {
            (Ok(x), Ok(y)) => {
                let (mut xs, mut ys) = (x.lines(), y.lines());
                for n in 1.. {
                    match (xs.next(), ys.next()) {
                        (Some(l), Some(m)) if l == m => continue,
                        (l, m) => {
                            let (l, m) = (l.unwrap_or("(end)"), m.unwrap_or("(end)"));
                            let (l, m) = window(l, m);
                            return format!("line {n}:\n  interp:   {l}\n  compiled: {m}");
                        }
                    }
                }
                unreachable!()
            }
            _ => {
                let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
                format!("binary, first difference at byte {at} (sizes {} and {})", a.len(), b.len())
            }
        }
    }

    #[test]
    fn every_shipped_config_writes_the_same_outputs_on_both_tiers() {
        let _cores = crate::util::all_cores();
        let t0 = Instant::now();
        // Every config shipped, against the ones run and skipped.
        let mut seen = BTreeSet::new();
        for folder in ["configs", "configs/experiments"] {
            for e in std::fs::read_dir(root().join(folder)).expect("read configs/") {
                let name = e.expect("a folder entry").file_name().to_string_lossy().into_owned();
                if name.ends_with(".toml") {
                    seen.insert(format!("{folder}/{name}"));
                }
            }
        }
        let ran: BTreeSet<String> = CASES.iter().map(|c| c.config.to_string()).collect();
        let skipped: BTreeSet<String> = SKIPPED.iter().map(|(c, _)| c.to_string()).collect();
        assert_eq!(ran.len(), CASES.len(), "a config is listed twice in CASES");
        assert!(ran.is_disjoint(&skipped), "a config both run and skipped");
        let listed: BTreeSet<String> = ran.union(&skipped).cloned().collect();
        assert_eq!(seen, listed, "every shipped config must be run (CASES) or skipped with a reason (SKIPPED)");

        let work = std::env::temp_dir().join(format!("playforge-tier-outputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        let next = Mutex::new(CASES.iter());
        let failures = Mutex::new(Vec::<String>::new());
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    while let Some(case) = { next.lock().expect("the case list").next() } {
                        let started = Instant::now();
                        let pair = work.join(case.config.trim_end_matches(".toml").replace('/', "_"));
                        let (files, problems) = both_tiers(case, &pair);
                        let verdict = if problems.is_empty() { "the same" } else { "DIFFERENT" };
                        println!("{}: {files} files, {verdict}, {:.1} s", case.config, started.elapsed().as_secs_f64());
                        if problems.is_empty() {
                            let _ = std::fs::remove_dir_all(&pair);
                        } else {
                            let how = format!("{} {}", case.command, case.flags.join(" "));
                            let what = format!("{} ({}; {}kept in {})", case.config, how.trim_end(), copy_note(case), pair.display());
                            failures.lock().expect("the failure list").push(format!("{what}:\n{}", problems.join("\n")));
                        }
                    }
                });
            }
        });
        let failures = failures.into_inner().expect("the failure list");
        assert!(failures.is_empty(), "the tiers' outputs differ:\n\n{}", failures.join("\n\n"));
        let _ = std::fs::remove_dir_all(&work);
        println!("{} configs, the same outputs on both tiers, in {:.1} s", CASES.len(), t0.elapsed().as_secs_f64());
    }

    fn copy_note(case: &Case) -> &'static str {
        if case.copy.is_some() { "a copy of the config, " } else { "" }
    }

    /// Runs `case` on both tiers in `pair`; the files the interpreter's run wrote, and every
    /// difference (none: the tiers agree). The standard outputs are kept in `pair` on a
    /// difference.
    fn both_tiers(case: &Case, pair: &Path) -> (usize, Vec<String>) {
        std::fs::create_dir_all(pair).expect("create the pair's folder");
        let config = prepare(case, pair);
        let (a_dir, b_dir) = (pair.join("interp"), pair.join("compiled"));
        let (a_out, b_out) = match (run(case, &config, "interp", &a_dir), run(case, &config, "compiled", &b_dir)) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => return (0, [a.err(), b.err()].into_iter().flatten().collect()),
        };
        let mut problems = Vec::new();
        let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
        tree(&a_dir, &a_dir, &mut a);
        tree(&b_dir, &b_dir, &mut b);
        if a.is_empty() || b.is_empty() {
            problems.push(format!("no file written (interp {}, compiled {})", a.len(), b.len()));
        }
        let (ka, kb): (BTreeSet<_>, BTreeSet<_>) = (a.keys().collect(), b.keys().collect());
        for p in ka.symmetric_difference(&kb) {
            let by = if a.contains_key(*p) { "interp" } else { "compiled" };
            problems.push(format!("{}: written by {by} only", p.display()));
        }
        for (p, x) in &a {
            if let Some(y) = b.get(p) {
                let (x, y) = (normalize(p, x), normalize(p, y));
                if x != y {
                    problems.push(format!("{}: {}", p.display(), first_difference(&x, &y)));
                }
            }
        }
        let (x, y) = (crate::util::mask_wall_clock(&a_out), crate::util::mask_wall_clock(&b_out));
        if x != y {
            problems.push(format!("standard output: {}", first_difference(x.as_bytes(), y.as_bytes())));
        }
        if !problems.is_empty() {
            std::fs::write(pair.join("interp.stdout"), &a_out).expect("keep the standard output");
            std::fs::write(pair.join("compiled.stdout"), &b_out).expect("keep the standard output");
        }
        (a.len(), problems)
    }

    /// Masks the number after each `key` (and its `:`), up to the next character that cannot be
    /// part of a number.
    fn mask_after(text: &str, key: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find(key) {
            let after = &rest[i + key.len()..];
            let gap = after.len() - after.trim_start_matches([':', ' ']).len();
            let number = after[gap..].len() - after[gap..].trim_start_matches(|c: char| c.is_ascii_digit() || "+-.eE".contains(c)).len();
            out.push_str(&rest[..i + key.len() + gap]);
            if number > 0 {
                out.push_str("<wall clock>");
            }
            rest = &after[gap + number..];
        }
        out.push_str(rest);
        out
    }

    /// A CSV with the columns named in `columns` masked (fields may be quoted, with commas).
    fn mask_columns(text: &str, columns: &[&str]) -> String {
        fn fields(line: &str) -> Vec<&str> {
            let (mut out, mut start, mut quoted) = (Vec::new(), 0, false);
            for (i, c) in line.char_indices() {
                match c {
                    '"' => quoted = !quoted,
                    ',' if !quoted => {
                        out.push(&line[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            out.push(&line[start..]);
            out
        }
        let mut lines = text.lines();
        let header = lines.next().unwrap_or("");
        let masked: Vec<usize> = fields(header).iter().enumerate().filter(|(_, f)| columns.contains(f)).map(|(i, _)| i).collect();
        let mut out = format!("{header}\n");
        for line in lines {
            let row: Vec<&str> =
                fields(line).into_iter().enumerate().map(|(i, f)| if masked.contains(&i) { "<wall clock>" } else { f }).collect();
            out.push_str(&row.join(","));
            out.push('\n');
        }
        out
    }

    /// A file's bytes with the wall clock masked, the only content that may differ between two
    /// runs of one tier (found by running every case twice on the interpreter: nothing else
    /// differed). Nothing is left out: a file of wall clock alone keeps its name and line count.
    /// - `timing.csv` (balance, generate, personas, playtest, experiment): its `elapsed_s` or
    ///   `seconds` column, the time each iteration, generation, replicate or run finished or took.
    /// - `runs/*/rep-*.seconds` (playtest): one replicate's duration, the resume's copy of it.
    /// - `checkpoint.json` (balance, generate, personas): `"elapsed_s"`, overall and per history
    ///   row, so that a resumed run's timing.csv continues the clock.
    /// - `report.json` and the `report.html` that embeds it (play): `"seconds"`, the search's
    ///   duration.
    fn normalize(path: &Path, bytes: &[u8]) -> Vec<u8> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Ok(text) = std::str::from_utf8(bytes) else { return bytes.to_vec() };
        let text = if name == "timing.csv" {
            mask_columns(text, &["elapsed_s", "seconds"])
        } else if name.ends_with(".seconds") {
            text.lines().map(|_| "<wall clock>\n").collect()
        } else if name == "checkpoint.json" {
            mask_after(text, "\"elapsed_s\"")
        } else if name == "report.json" {
            mask_after(text, "\"seconds\"")
        } else if name == "report.html" {
            mask_after(text, "&quot;seconds&quot;")
        } else {
            return bytes.to_vec();
        };
        text.into_bytes()
    }
}
