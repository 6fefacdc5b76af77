//! The state view (`playforge::view`): every shipped WGDL game, and every overlay-free variant
//! that changes its boards, draws its start and a mid-game state as a well-formed SVG whose
//! boards match the description (one tile per grid cell, one hex per map cell, one disc per live
//! occupant); every shipped GDL game does too, with a grid where its facts make one; the `view`
//! lines do what games/README.md says, and a bad one is an error with its place; text from the
//! game is escaped.

use playforge::game::{Game, WgdlGame};
use playforge::view::{Board, render_svg, scene, svg::escape};
use playforge::wgdl::{self, CompileOptions};
use rand::{RngExt, SeedableRng};
use std::path::Path;

/// Tags open and close in order (a small check instead of an XML dependency).
fn well_formed(svg: &str) -> Result<(), String> {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let j = rest[i..].find('>').ok_or("an unclosed tag")? + i;
        let tag = &rest[i + 1..j];
        rest = &rest[j + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        } else if !tag.ends_with('/') {
            stack.push(tag.split_whitespace().next().unwrap_or("").to_string());
        }
    }
    if stack.is_empty() { Ok(()) } else { Err(format!("left open: {stack:?}")) }
}

#[test]
fn every_shipped_game_draws_its_start_and_a_mid_game_state() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut games: Vec<(std::path::PathBuf, Vec<String>)> = std::fs::read_dir(root.join("games"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgdl"))
        .map(|p| (p, vec![]))
        .collect();
    games.sort();
    games.push((root.join("games/stacker.wgdl"), vec!["tiny".to_string()]));
    assert!(games.len() >= 8, "{games:?}");
    for (path, overlays) in games {
        let opts = CompileOptions { overlays: overlays.clone(), ..CompileOptions::default() };
        let program = wgdl::load_with(&path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display())).program;
        let game = WgdlGame::new(program.clone());
        let mut st = game.initial().unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut legal = Vec::new();
        for step in 0..2 {
            if step == 1 {
                for _ in 0..30 {
                    game.legal(&st, &mut legal).unwrap();
                    if legal.is_empty() || game.status(&st, &legal) != playforge::game::Status::Running {
                        break;
                    }
                    let m = legal[rng.random_range(0..legal.len())];
                    game.apply(&mut st, m).unwrap();
                }
            }
            let name = format!("{} {overlays:?} step {step}", path.display());
            let svg = render_svg(&program, &st, "a <title> & more");
            well_formed(&svg).unwrap_or_else(|e| panic!("{name}: {e}\n{svg}"));
            assert!(svg.starts_with("<svg") && !svg.contains("NaN"), "{name}");
            assert!(svg.contains("a &lt;title&gt; &amp; more"), "{name}: the title is escaped");
            let sc = scene(&program, &st, "");
            // One board per grid not hidden by a `view` line, plus the hex map; each drawn cell by cell.
            let shown_grids = program.views.grids.iter().filter(|g| !g.hide).count();
            assert_eq!(sc.boards.len(), shown_grids + program.hex.is_some() as usize, "{name}");
            for b in &sc.boards {
                match b {
                    Board::Grid(g) => {
                        assert_eq!(g.cells.len() as u32, g.width * g.height);
                        let tiles = svg.matches(&format!(r#"<title>({}, {}) = "#, g.width - 1, g.height - 1)).count();
                        assert!(tiles >= 1, "{name}: grid {} has its corner tile", g.name);
                    }
                    Board::Hex(h) => {
                        assert_eq!(svg.matches("<polygon").count(), h.cells.len(), "{name}");
                        assert_eq!(svg.matches(r#"class="piece""#).count(), h.pieces.len(), "{name}");
                        let live = st
                            .objects
                            .iter()
                            .filter(|o| o.alive && program.occupants.as_ref().is_some_and(|oc| program.is_sub(o.class, oc.class)))
                            .count();
                        assert_eq!(h.pieces.len(), live, "{name}: a disc per live occupant");
                    }
                }
            }
            // The panel lists every live object (of a class not hidden) and every goal.
            let shown = st.objects.iter().filter(|o| o.alive && !program.views.classes[o.class as usize].hide).count();
            assert_eq!(sc.panel.objects.len(), shown, "{name}");
            assert_eq!(sc.panel.goals.len(), program.goals.len(), "{name}");
        }
    }
}

#[test]
fn text_is_escaped_and_a_tile_grid_is_drawn_bottom_up() {
    assert_eq!(escape(r#"<a & "b">"#), "&lt;a &amp; &quot;b&quot;&gt;");
    let program = wgdl::load_with(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/games/connect_four.wgdl")), &CompileOptions::default())
        .unwrap()
        .program;
    let game = WgdlGame::new(program.clone());
    let mut st = game.initial().unwrap();
    let mut legal = Vec::new();
    game.legal(&st, &mut legal).unwrap();
    game.apply(&mut st, legal[0]).unwrap();
    let sc = scene(&program, &st, "c4");
    let Some(Board::Grid(board)) = sc.boards.first() else { panic!("connect four has a grid") };
    // The first disc lies on the bottom row (y = 0), drawn lowest: the largest y on the page.
    let x = (0..board.width).find(|&x| board.cells[x as usize] != 0).expect("a disc on the bottom row");
    let svg = render_svg(&program, &st, "c4");
    let at = svg.find(&format!("<title>({x}, 0) = ")).unwrap();
    let y_of = |s: &str| -> f64 {
        let i = s.find(" y=\"").unwrap() + 4;
        s[i..s[i..].find('"').unwrap() + i].parse().unwrap()
    };
    let top_row = svg.find(&format!("<title>({x}, {}) = ", board.height - 1)).unwrap();
    assert!(y_of(&svg[at..]) > y_of(&svg[top_row..]), "row 0 is drawn below row {}", board.height - 1);
}

/// Every GDL game the project ships or tests with, its start and a state after a few random
/// joint moves: a well-formed picture listing every true fact, with a grid for the board games.
#[test]
fn every_gdl_game_draws_its_start_and_a_mid_game_state() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<std::path::PathBuf> = ["games/gdl", "tests/data/gdl"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "kif"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 7, "{paths:?}");
    for path in paths {
        let game = playforge::gdl::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut st = game.initial().unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let mut legal = Vec::new();
        let mut moves = 0;
        for step in 0..2 {
            if step == 1 {
                for _ in 0..5 {
                    game.legal(&st, &mut legal).unwrap();
                    if legal.is_empty() || game.status(&st, &legal) != playforge::game::Status::Running {
                        break;
                    }
                    let m = legal[rng.random_range(0..legal.len())];
                    game.apply(&mut st, m).unwrap();
                    moves += 1;
                }
            }
            let name = format!("{} step {step}", path.display());
            let sc = game.scene(&st, "<gdl>", moves);
            let svg = playforge::view::svg::svg(&sc);
            well_formed(&svg).unwrap_or_else(|e| panic!("{name}: {e}\n{svg}"));
            assert!(svg.contains("&lt;gdl&gt;"), "{name}");
            let facts = game.show_state(&st);
            assert_eq!(sc.panel.facts, facts, "{name}");
            for f in &facts {
                assert!(svg.contains(&escape(f)), "{name}: fact {f} is listed");
            }
            let stem = path.file_stem().unwrap().to_str().unwrap();
            let grids: Vec<&str> =
                sc.boards.iter().filter_map(|b| if let Board::Grid(g) = b { Some(g.name.as_str()) } else { None }).collect();
            let want: &[&str] = match stem {
                "tictactoe" | "connect_four" => &["cell"],
                "lightsout" => &["on"],
                _ => &[],
            };
            for w in want {
                assert!(grids.contains(w), "{name}: a `{w}` grid in {grids:?}");
            }
            if stem == "connect_four" {
                let Some(Board::Grid(g)) = sc.boards.iter().find(|b| matches!(b, Board::Grid(g) if g.name == "cell")) else {
                    unreachable!()
                };
                assert_eq!((g.width, g.height), (7, 6), "{name}");
                let marked = g.cells.iter().filter(|&&v| v != 0).count();
                assert_eq!(marked, moves as usize, "{name}: a disc per move, blanks left empty");
            }
        }
    }
}

fn load_text(name: &str, text: &str) -> Result<std::sync::Arc<playforge::wgdl::Program>, String> {
    let dir = std::env::temp_dir().join(format!("pf_view_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.wgdl"));
    std::fs::write(&path, text).unwrap();
    wgdl::load_with(&path, &CompileOptions::default()).map(|l| l.program).map_err(|e| e.to_string())
}

/// The hex arena's `view mage bar …` lines give every disc two bars out of the class constants,
/// a mage whose `while` condition fails is faded, and the replay's ASCII board shows the bars.
#[test]
fn view_lines_give_bars_from_class_constants_and_fade_occupants_that_no_longer_count() {
    let program = wgdl::load_with(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/games/hex_arena.wgdl")), &CompileOptions::default())
        .unwrap()
        .program;
    let game = WgdlGame::new(program.clone());
    let mut st = game.initial().unwrap();
    let sc = scene(&program, &st, "");
    let Some(Board::Hex(h)) = sc.boards.iter().find(|b| matches!(b, Board::Hex(_))) else { panic!("a hex board") };
    assert!(!h.pieces.is_empty());
    for p in &h.pieces {
        let names: Vec<&str> = p.bars.iter().map(|b| b.0.as_str()).collect();
        assert_eq!(names, ["hp", "ap"], "{p:?}");
        assert!(p.bars.iter().all(|b| b.2 > 0.0 && b.1 <= b.2), "{p:?}");
        assert!(!p.faded);
    }
    // Kill the first mage by hand: its hp slot to 0.
    let hp = program.classes[st.objects[0].class as usize].attrs.iter().position(|a| a.name == "hp").unwrap();
    let first = (0..st.objects.len()).find(|&i| program.classes[st.objects[i].class as usize].name == "mage").unwrap();
    let slot = st.objects[first].base as usize + hp;
    st.slots[slot] = 0;
    let sc = scene(&program, &st, "");
    let Some(Board::Hex(h)) = sc.boards.iter().find(|b| matches!(b, Board::Hex(_))) else { unreachable!() };
    assert_eq!(h.pieces.iter().filter(|p| p.faded).count(), 1, "{:?}", h.pieces);
    assert!(render_svg(&program, &st, "").contains(r#"opacity="0.35""#));
}

#[test]
fn grid_hints_set_glyphs_colours_and_hide_and_a_subclass_inherits_class_hints() {
    let text = "players a b\ngrid board 2 2\ngrid aux 1 1\nview board glyphs \" XO\"\nview board colour \"#fff #f00 blue\"\nview aux hide\n\
class thing\nattribute thing name string \"t\"\nclass sub : thing\nview thing label name\nview thing hide\nobject s is sub\nattribute s name \"Sam\"\ninitial s\ngoal 1 board[0, 0] > 3\n";
    let program = load_text("hints", text).unwrap();
    let sub = program.classes.iter().position(|c| c.name == "sub").unwrap();
    assert!(program.views.classes[sub].hide && program.views.classes[sub].label.is_some(), "inherited from thing");
    let game = WgdlGame::new(program.clone());
    let st = game.initial().unwrap();
    let sc = scene(&program, &st, "");
    assert_eq!(sc.boards.len(), 1, "aux is hidden");
    let Board::Grid(g) = &sc.boards[0] else { panic!() };
    assert_eq!(g.glyphs, [" ", "X", "O"]);
    assert_eq!(g.colours, ["#fff", "#f00", "blue"]);
    assert!(sc.panel.objects.is_empty(), "the hidden class is out of the panel");
}

#[test]
fn a_bad_view_line_is_an_error_at_its_place() {
    let head = "players a b\ngrid board 2 2\nclass thing\nattribute thing name string \"t\"\nattribute thing hp long 3\n";
    assert!(load_text("hints", &format!("{head}goal 1 board[0, 0] > 3\n")).is_ok(), "the file without the view line compiles");
    let cases: &[(&str, &str, &str)] = &[
        ("view nothing hide", "hints.wgdl:6:6", "class or grid"),
        ("view board colour \"red;x\"", "hints.wgdl:6:19", "a colour name"),
        ("view thing colour \"url(x)\"", "hints.wgdl:6:19", "a colour name"),
        ("view thing bar name 10", "hints.wgdl:6:16", "long or double"),
        ("view thing bar hp 0", "hints.wgdl:6:1", "above 0"),
        ("view thing bar hp nope", "hints.wgdl:6:19", "nope"),
        ("view thing glyphs \"ab\"", "hints.wgdl:6:19", "for grids"),
        ("view board label name", "hints.wgdl:6:6", "for a grid"),
        ("view thing wobble", "hints.wgdl:6:12", "a view hint"),
        ("view thing glyph \"toolong\"", "hints.wgdl:6:18", "one to three"),
    ];
    for (line, at, says) in cases {
        let err = load_text("hints", &format!("{head}{line}\ngoal 1 board[0, 0] > 3\n")).expect_err(line);
        assert!(err.contains(at) && err.contains(says) && err.contains("1 error(s)"), "{line}: expected {at} and `{says}` alone in\n{err}");
    }
}

/// `run --board` prints the grids as text at the start and after every move, and `replay` prints
/// them under each turn: Breakthrough's start as OpenSpiel prints it.
#[test]
fn run_board_and_replay_print_the_grids_as_text() {
    let bin = env!("CARGO_BIN_EXE_playforge");
    let dir = std::env::temp_dir().join(format!("playforge-board-text-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("game.json");
    let cmd = |args: &[&str]| {
        let o = std::process::Command::new(bin).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let start = "8bbbbbbbb\n7bbbbbbbb\n6........\n5........\n4........\n3........\n2wwwwwwww\n1wwwwwwww\n abcdefgh\n";
    let ran = cmd(&["run", "games/breakthrough.wgdl", "--random", "2", "--board", "--record", rec.to_str().unwrap()]);
    assert!(ran.starts_with(start), "{ran}");
    // Two moves, each followed by its board: three boards in all, the last two not the start.
    assert_eq!(ran.matches(" abcdefgh\n").count(), 3, "{ran}");
    assert_eq!(ran.matches(start).count(), 1, "the moves change the board: {ran}");
    let quiet = cmd(&["run", "games/breakthrough.wgdl", "--random", "2", "--board", "-q"]);
    assert_eq!(quiet.matches(" abcdefgh\n").count(), 1, "--quiet: the last position only: {quiet}");
    let replayed = cmd(&["replay", rec.to_str().unwrap()]);
    let indented: String = start.lines().map(|l| format!("    {l}\n")).collect();
    assert!(replayed.contains(&indented), "{replayed}");
    assert_eq!(replayed.matches("     abcdefgh\n").count(), 3, "the start, the second turn, the end: {replayed}");
    let _ = std::fs::remove_dir_all(&dir);
}
