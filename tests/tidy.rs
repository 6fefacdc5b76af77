//! Tidiness checks on the source tree itself: every file opens with a `//!` paragraph and stays
//! under the line limit; imports between top-level modules follow the layers of ARCHITECTURE.md
//! (down, or sideways without a circle), apart from the known exceptions listed here, which may
//! only shrink; imports between files close no circle; the first pages a newcomer reads stay
//! short.

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
const MAX_LINES: usize = 800;

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
    ("bridge", 4),
    ("exec", 5),
    ("drive", 6),
    ("experiment", 7),
    ("balance", 7),
    ("persona", 7),
    ("playtest", 7),
    ("generate", 7),
    ("web", 7),
    ("doors", 7),
    ("cli", 8),
    ("jobs", 8),
    ("python", 9),
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

/// The pages a newcomer reads first stay short (issue 56): ARCHITECTURE.md a map, not a manual
/// (a module in a few lines; files explain themselves in their `//!` paragraphs), and
/// docs/speed.md the generated tables with what made them faster (the dated rounds live in
/// docs/speed-log.md).
#[test]
fn the_first_pages_stay_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (page, limit) in [("ARCHITECTURE.md", 10_000), ("docs/speed.md", 15_000)] {
        let n = std::fs::read_to_string(root.join(page)).expect("the page").chars().count();
        assert!(n < limit, "{page} has {n} characters; expected under {limit} (move detail to docs/internals.md or a log)");
    }
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

/// Source text with comments, string and character literals blanked out (so that a path inside
/// a message or a comment is not read as an import), cut before the unit-test module
/// (`#[cfg(test)] mod …`): unit tests are not part of the import graph.
fn code_only(text: &str) -> String {
    // The unit-test module only: a `#[cfg(test)]` on a single item elsewhere is not the cut.
    let cut = text.match_indices("#[cfg(test)]").map(|(at, _)| at).find(|&at| {
        let rest = text[at + "#[cfg(test)]".len()..].trim_start();
        rest.starts_with("mod ") || rest.starts_with("pub mod ") || rest.starts_with("pub(crate) mod ")
    });
    let text = match cut {
        Some(at) => &text[..at],
        None => text,
    };
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !b.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string r"…" / r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (b.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A character literal ('x', '\n', '\u{..}'); a lifetime ('a) has no closing quote.
            i += 1;
            while i < b.len() && b[i] != '\'' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The paths a file names, each as its segments: `use a::{b, c::{d, self}}` gives `a::b`,
/// `a::c::d` and `a::c`; a path in code (`super::spec::lower(…)`) gives itself. Visibility
/// restrictions (`pub(in crate::wgdl)`) are not paths to a file.
fn named_paths(code: &str) -> Vec<(Vec<String>, usize)> {
    let b: Vec<char> = code.chars().collect();
    let ident_start = |c: char| c.is_ascii_alphabetic() || c == '_';
    let ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    fn skip_ws(b: &[char], mut i: usize) -> usize {
        while i < b.len() && b[i].is_whitespace() {
            i += 1;
        }
        i
    }
    // Parses `seg (:: seg)* (:: { tree, … })?` at i; pushes every full path; returns the end.
    fn tree(b: &[char], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut path = prefix;
        loop {
            i = skip_ws(b, i);
            if i < b.len() && b[i] == '{' {
                i += 1;
                loop {
                    i = skip_ws(b, i);
                    if i >= b.len() {
                        return i;
                    }
                    if b[i] == '}' {
                        return i + 1;
                    }
                    if b[i] == ',' {
                        i += 1;
                        continue;
                    }
                    let before = i;
                    i = tree(b, i, path.clone(), out);
                    if i == before {
                        i += 1;
                    }
                }
            }
            let start = i;
            while i < b.len() && ident_char(b[i]) {
                i += 1;
            }
            if i == start {
                if !path.is_empty() {
                    out.push(path);
                }
                return i;
            }
            let seg: String = b[start..i].iter().collect();
            if seg != "self" || path.is_empty() {
                path.push(seg);
            }
            let j = skip_ws(b, i);
            if b.get(j) == Some(&':') && b.get(j + 1) == Some(&':') {
                i = j + 2;
                continue;
            }
            out.push(path);
            return i;
        }
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if ident_start(b[i]) && (i == 0 || !(ident_char(b[i - 1]) || (b[i - 1] == ':' && i >= 2 && b[i - 2] == ':'))) {
            // `pub(in path)`: skip the restriction.
            let word: String = b[i..].iter().take_while(|c| ident_char(**c)).collect();
            if word == "in" {
                let back: String = b[..i].iter().rev().filter(|c| !c.is_whitespace()).take(4).collect();
                if back.starts_with('(') && back[1..].starts_with("bup") {
                    i += 2;
                    while i < b.len() && b[i] != ')' {
                        i += 1;
                    }
                    continue;
                }
            }
            let line = b[..i].iter().filter(|c| **c == '\n').count() + 1;
            let mut paths = Vec::new();
            let end = tree(&b, i, Vec::new(), &mut paths);
            for p in paths {
                if p.len() > 1 || matches!(p[0].as_str(), "crate" | "super") {
                    found.push((p, line));
                }
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    found
}

/// Every import between files under `src/`: (from, to) → the first place, both as paths
/// relative to `src/`. A path is resolved from `crate`, `super`, `self` or a child module the
/// file declares, segment by segment, to the file that defines its item: through child modules
/// (`a/b.rs`, `a/b/mod.rs`) and through the names a file brings in with `use` (a façade's
/// `pub use run::{fast, jit}` makes `crate::wgdl::fast::X` an import of `wgdl/run/fast/mod.rs`).
/// Edges between a folder's `mod.rs` (its façade, which declares and re-exports its files) and
/// the files inside that folder are not counted, nor are `lib.rs` and `main.rs`. A glob
/// re-export (`pub use ops::*`) is not followed: a name it brings in resolves to the façade.
fn file_imports(root: &Path) -> std::collections::BTreeMap<(String, String), String> {
    use std::collections::BTreeMap;
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let file_of = |segs: &[String]| -> Option<String> {
        let p = segs.join("/");
        if segs.is_empty() {
            Some("lib.rs".to_string())
        } else if src.join(format!("{p}.rs")).is_file() {
            Some(format!("{p}.rs"))
        } else if src.join(&p).join("mod.rs").is_file() {
            Some(format!("{p}/mod.rs"))
        } else {
            None
        }
    };
    // Per file: its module path, and every path it names made absolute (from the crate root),
    // with the line.
    struct Named {
        module: Vec<String>,
        paths: Vec<(Vec<String>, usize)>,
    }
    let mut named: BTreeMap<String, Named> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src").to_string_lossy().replace('\\', "/");
        if rel == "main.rs" {
            continue;
        }
        // The file's module path: a/b.rs → [a, b]; a/mod.rs → [a]; lib.rs → [].
        let mut module: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
        if module.last().is_some_and(|m| m == "mod" || m == "lib") {
            module.pop();
        }
        let code = code_only(&std::fs::read_to_string(&f).expect("utf-8 source"));
        let mut paths = Vec::new();
        for (path, line) in named_paths(&code) {
            let mut segs = match path[0].as_str() {
                "crate" => Vec::new(),
                "self" | "super" => module.clone(),
                first if file_of(&[module.clone(), vec![first.to_string()]].concat()).is_some() => module.clone(),
                _ => continue,
            };
            let mut rest = &path[..];
            if matches!(rest[0].as_str(), "crate" | "self") {
                rest = &rest[1..];
            }
            while rest.first().is_some_and(|s| s == "super") {
                segs.pop();
                rest = &rest[1..];
            }
            segs.extend(rest.iter().cloned());
            paths.push((segs, line));
        }
        named.insert(rel, Named { module, paths });
    }
    // The file that defines the item an absolute path names.
    fn resolve(
        abs: &[String],
        named: &BTreeMap<String, Named>,
        file_of: &dyn Fn(&[String]) -> Option<String>,
        depth: u32,
    ) -> Option<String> {
        let mut cur: Vec<String> = Vec::new();
        for (k, s) in abs.iter().enumerate() {
            let mut cand = cur.clone();
            cand.push(s.clone());
            if file_of(&cand).is_some() {
                cur = cand;
                continue;
            }
            let here = file_of(&cur)?;
            // A name the file brings in with `use` (not the file's own item of that name).
            if depth < 8
                && let Some(n) = named.get(&here)
                && let Some((target, _)) =
                    n.paths.iter().find(|(p, _)| p.last() == Some(s) && (p.len() > cur.len() + 1 || p[..p.len() - 1] != cur[..]))
            {
                let mut longer = target.clone();
                longer.extend(abs[k + 1..].iter().cloned());
                return resolve(&longer, named, file_of, depth + 1);
            }
            break;
        }
        file_of(&cur)
    }
    let mut edges = BTreeMap::new();
    for (rel, n) in &named {
        if rel == "lib.rs" {
            continue;
        }
        let _ = &n.module;
        for (segs, line) in &n.paths {
            let Some(to) = resolve(segs, &named, &file_of, 0) else { continue };
            let inside = |file: &str, facade: &str| facade.ends_with("mod.rs") && file.starts_with(facade.trim_end_matches("mod.rs"));
            if &to == rel || to == "lib.rs" || inside(rel, &to) || inside(&to, rel) {
                continue;
            }
            edges.entry((rel.clone(), to)).or_insert_with(|| format!("src/{rel}:{line}"));
        }
    }
    edges
}

/// The circles among imports between files: each strongly connected set of two or more files,
/// with one of its edges' places.
fn file_circles<'a>(edges: &'a std::collections::BTreeMap<(String, String), String>) -> Vec<String> {
    let mut nodes: Vec<&str> = edges.keys().flat_map(|(a, b)| [a.as_str(), b.as_str()]).collect();
    nodes.sort();
    nodes.dedup();
    let reach = |from: &'a str| -> std::collections::BTreeSet<&'a str> {
        let mut seen = std::collections::BTreeSet::from([from]);
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            for (a, b) in edges.keys() {
                if a == at && seen.insert(b.as_str()) {
                    stack.push(b.as_str());
                }
            }
        }
        seen
    };
    let reaches: std::collections::BTreeMap<&str, _> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut done = std::collections::BTreeSet::new();
    let mut circles = Vec::new();
    for &n in &nodes {
        if done.contains(n) {
            continue;
        }
        let set: Vec<&str> = nodes.iter().copied().filter(|m| reaches[n].contains(m) && reaches[m].contains(n)).collect();
        done.extend(set.iter().copied());
        if set.len() > 1 {
            let places: Vec<String> = edges
                .iter()
                .filter(|((a, b), _)| set.contains(&a.as_str()) && set.contains(&b.as_str()))
                .map(|((a, b), at)| format!("{a} -> {b} ({at})"))
                .collect();
            circles.push(format!("a circle of {} files: {}", set.len(), places.join("; ")));
        }
    }
    circles
}

#[test]
fn no_circle_between_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let edges = file_imports(root);
    assert!(edges.len() > 100, "found only {} imports between files", edges.len());
    let circles = file_circles(&edges);
    assert!(circles.is_empty(), "imports between files under src/ close circles (ARCHITECTURE.md, \"Layers\"):\n{}", circles.join("\n"));
}

#[test]
fn the_file_circle_check_reads_use_trees_and_finds_a_circle() {
    let code = code_only(
        "use crate::wgdl::{run::{fast::Env, jit}, self};\n// use crate::nope;\nlet s = \"crate::nope\";\npub(in crate::wgdl) fn f() { super::spec::lower(x); }\n#[cfg(test)]\nmod tests { use crate::late; }",
    );
    let paths: Vec<String> = named_paths(&code).into_iter().map(|(p, _)| p.join("::")).collect();
    assert_eq!(paths, ["crate::wgdl::run::fast::Env", "crate::wgdl::run::jit", "crate::wgdl", "super::spec::lower"]);
    let mut edges = file_imports(Path::new(env!("CARGO_MANIFEST_DIR")));
    edges.insert(("genes.rs".into(), "rng.rs".into()), "src/genes.rs:1".into());
    edges.insert(("rng.rs".into(), "genes.rs".into()), "src/rng.rs:1".into());
    let circles = file_circles(&edges);
    assert!(circles.iter().any(|c| c.contains("genes.rs -> rng.rs") && c.contains("rng.rs -> genes.rs")), "{circles:?}");
}
