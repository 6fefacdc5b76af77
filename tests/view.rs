//! The state view (`playforge::view`): every shipped WGDL game, and every overlay-free variant
//! that changes its boards, draws its start and a mid-game state as a well-formed SVG whose
//! boards match the description (one tile per grid cell, one hex per map cell, one disc per live
//! occupant), and text from the game is escaped.

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
            // One board per grid, plus the hex map; each drawn cell by cell.
            assert_eq!(sc.boards.len(), program.grids.len() + program.hex.is_some() as usize, "{name}");
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
            // The panel lists every live object and every goal.
            assert_eq!(sc.panel.objects.len(), st.objects.iter().filter(|o| o.alive).count(), "{name}");
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
