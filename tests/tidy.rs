//! Tidiness checks on the source tree itself: every file opens with a `//!` paragraph, and
//! imports between top-level modules follow the layers of ARCHITECTURE.md (down, or sideways
//! without a circle), apart from the known exceptions listed here, which may only shrink.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["src", "tests", "benches"] {
        rust_files(&root.join(d), &mut files);
    }
    assert!(files.len() > 10, "found only {} files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).expect("utf-8 source");
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a `//!` paragraph: {missing:?}");
}

/// The longest a file under `src/` may be. A file holds one job a reader can name from its
/// path; past this, split it by pass or phase (ARCHITECTURE.md, "Rooms").
const MAX_LINES: usize = 1000;

#[test]
fn no_source_file_is_over_the_line_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).expect("utf-8 source").lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", f.strip_prefix(root).unwrap_or(f).display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}

/// The layers of ARCHITECTURE.md, bottom (0) to top: a module may name (`crate::x`) modules
/// of a lower layer, or of its own layer as long as that closes no circle.
const LAYERS: &[(&str, u32)] = &[
    ("rng", 0),
    ("input", 0),
    ("report", 0),
    ("status", 0),
    ("wgdl", 1),
    ("config", 2),
    ("game", 2),
    ("genes", 2),
    ("view", 2),
    ("search", 3),
    ("evolve", 4),
    ("gdl", 4),
    ("players", 4),
    ("exec", 5),
    ("experiment", 5),
    ("balance", 5),
    ("persona", 5),
    ("playtest", 5),
    ("generate", 5),
    ("web", 5),
    ("doors", 5),
    ("cli", 6),
    ("jobs", 6),
    ("python", 7),
];

/// Imports that still break the layering (ARCHITECTURE.md, "Known exceptions"): each is to be
/// removed, and the test fails once one is gone so that the list only shrinks.
const KNOWN_EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// Every `crate::<module>` a top-level module's files name (comments left out), with one place
/// each.
fn module_imports(root: &Path) -> std::collections::BTreeMap<(String, String), String> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut edges = std::collections::BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(root.join("src")).expect("under src").to_string_lossy().replace('\\', "/");
        let module = rel.split('/').next().expect("a path").trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("utf-8 source");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != module {
                    edges.entry((module.clone(), name)).or_insert_with(|| format!("src/{rel}:{}", i + 1));
                }
            }
        }
    }
    edges
}

/// The layering check of [`imports_point_down_the_layers`] on a set of imports: the problems
/// found (imports up a layer, circles within a layer, modules missing from the map, known
/// exceptions no longer present).
fn layering_problems(edges: &std::collections::BTreeMap<(String, String), String>) -> Vec<String> {
    let layer = |m: &str| LAYERS.iter().find(|(n, _)| *n == m).map(|&(_, l)| l);
    let mut problems = Vec::new();
    let mut same: Vec<(&str, &str)> = Vec::new();
    for ((from, to), at) in edges {
        if KNOWN_EXCEPTIONS.iter().any(|&(a, b, _)| a == from && b == to) {
            continue;
        }
        match (layer(from), layer(to)) {
            (None, _) => problems.push(format!("{at}: module `{from}` is not in the layer map (tests/tidy.rs LAYERS)")),
            (_, None) => problems.push(format!("{at}: module `{to}` is not in the layer map (tests/tidy.rs LAYERS)")),
            (Some(a), Some(b)) if b > a => problems.push(format!("{at}: `{from}` (layer {a}) imports `{to}` (layer {b}), up a layer")),
            (Some(a), Some(b)) if a == b => same.push((from, to)),
            _ => {}
        }
    }
    for &(a, b, why) in KNOWN_EXCEPTIONS {
        if !edges.contains_key(&(a.to_string(), b.to_string())) {
            problems.push(format!("the known exception `{a}` -> `{b}` ({why}) is gone: remove it from KNOWN_EXCEPTIONS"));
        }
    }
    // Circles among imports within a layer: depth-first search from every module.
    for &(start, _) in &same {
        let mut stack = vec![(start, vec![start])];
        while let Some((at, path)) = stack.pop() {
            for &(_, next) in same.iter().filter(|(f, _)| *f == at) {
                if next == start {
                    let circle = format!("{} -> {start}", path.join(" -> "));
                    if !problems.iter().any(|p| p.ends_with(&circle)) {
                        problems.push(format!("imports close a circle: {circle}"));
                    }
                } else if !path.contains(&next) {
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push((next, longer));
                }
            }
        }
    }
    problems
}

#[test]
fn imports_point_down_the_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let edges = module_imports(root);
    assert!(edges.len() > 20, "found only {} imports", edges.len());
    let problems = layering_problems(&edges);
    assert!(problems.is_empty(), "layering (ARCHITECTURE.md):\n{}", problems.join("\n"));
}

#[test]
fn the_layering_check_catches_an_upward_import_and_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut edges = module_imports(root);
    // The circle issue 20 found: the game contract taking a type from a searcher.
    edges.insert(("game".into(), "search".into()), "src/game.rs:1".into());
    // Two drivers naming each other.
    edges.insert(("persona".into(), "playtest".into()), "src/persona/run.rs:1".into());
    edges.insert(("playtest".into(), "persona".into()), "src/playtest/run.rs:1".into());
    let problems = layering_problems(&edges);
    assert!(problems.iter().any(|p| p.contains("`game` (layer 2) imports `search` (layer 3), up a layer")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("circle") && p.contains("persona") && p.contains("playtest")), "{problems:?}");
}

/// docs/speed.md's figures are the bench's own output (`cargo bench --bench speed --
/// --write-docs` writes them between these markers); the page must keep the markers and one
/// run's output between them.
#[test]
fn the_speed_page_holds_a_generated_run() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/speed.md")).expect("docs/speed.md");
    let begin = page.find("<!-- BEGIN generated by `cargo bench --bench speed -- --write-docs`").expect("the BEGIN marker");
    let end = page.find("<!-- END generated -->").expect("the END marker");
    assert!(begin < end, "the markers are out of order");
    let generated = &page[begin..end];
    assert!(generated.contains("_Written by `cargo bench --bench speed") && generated.contains("Machine: "), "{generated}");
}
