//! Connected groups on tile grids (games/README.md §9.15): `group`, `groupLead`, `groups`,
//! `groupDistinct` and `do clearGroup` pinned on crafted boards under tolerance 0 and 1, the
//! empty-cell and out-of-range cases, and a property check over seeded random boards against a
//! naive flood fill written here.

use crate::util;
use playforge::wgdl::probe::ValueRef;
use playforge::wgdl::{Program, RtKind, State};
use rand::RngExt;
use std::sync::Arc;

/// A crafted game over a `w` × `h` board: `probe(c)` writes `group(c, tol)` to `size[c, 0]` and
/// `groupDistinct(c, tol)` to `kinds[c, 0]`; `lead(c)` is legal when `groupLead(c, tol, min)`;
/// `tally` writes `groups(tol, min)` to `me.count`; `clear(c)` clears c's group and lets the
/// tiles fall. `me.tol` and `me.min` are set from the test.
struct Groups {
    p: Arc<Program>,
    w: usize,
    h: usize,
    base: usize,
    size: usize,
    kinds: usize,
    tol: ValueRef,
    min: ValueRef,
    count: ValueRef,
}

fn groups_game(w: usize, h: usize) -> Groups {
    let n = w * h;
    let last = n - 1;
    let src = format!(
        "grid board {w} {h}
grid size {n} 1
grid kinds {n} 1
class player
attribute player tol long 0
attribute player min long 1
attribute player count long 0
object me is player
initial me
action player probe forEveryNumber c 0 {last}
consequence measure direct size[c, 0] = board.group(c, this.tol)
consequence measureKinds direct kinds[c, 0] = board.groupDistinct(c, this.tol)
hasConsequence probe measure
hasConsequence probe measureKinds
action player lead forEveryNumber c 0 {last}
condition lead board.groupLead(c, this.tol, this.min)
action player tally
consequence counted direct this.count = board.groups(this.tol, this.min)
hasConsequence tally counted
action player clear forEveryNumber c 0 {last}
consequence wipe do board.clearGroup(c, this.tol)
consequence drop do board.fall()
hasConsequence clear wipe
hasConsequence clear drop
"
    );
    let p = util::compile(&src).program;
    Groups {
        w,
        h,
        base: p.grids[0].base as usize,
        size: p.grids[1].base as usize,
        kinds: p.grids[2].base as usize,
        tol: p.value_ref("me.tol").unwrap(),
        min: p.value_ref("me.min").unwrap(),
        count: p.value_ref("me.count").unwrap(),
        p,
    }
}

impl Groups {
    fn cells(&self) -> usize {
        self.w * self.h
    }

    /// A state showing `board` (row 0, the bottom row, first) with `me.tol` and `me.min` set.
    fn state(&self, board: &[i64], tol: i64, min: i64) -> State {
        assert_eq!(board.len(), self.cells());
        let mut st = self.p.initial_state().unwrap();
        st.slots[self.base..self.base + self.cells()].copy_from_slice(board);
        for (v, x) in [(self.tol, tol), (self.min, min)] {
            let ValueRef::Attr { obj, off, .. } = v else { panic!("an attribute") };
            st.slots[(st.objects[obj as usize].base + off) as usize] = x;
        }
        st.touch();
        st
    }

    fn board(&self, st: &State) -> Vec<i64> {
        st.slots[self.base..self.base + self.cells()].to_vec()
    }

    /// The legal moves of action `name` (its bound numbers, in order).
    fn numbers(&self, st: &State, name: &str) -> Vec<usize> {
        let prefix = format!("{name}(");
        util::legal(&self.p, st).into_iter().filter(|&a| self.p.action_name(st, a).starts_with(&prefix)).map(|a| a.bound as usize).collect()
    }

    fn play(&self, st: &mut State, name: &str, c: usize) {
        let a = *util::legal(&self.p, st)
            .iter()
            .find(|&&a| self.p.action_name(st, a).starts_with(&format!("{name}(")) && (name == "tally" || a.bound as usize == c))
            .unwrap_or_else(|| panic!("`{name}` {c} is not legal"));
        self.p.apply(st, a).unwrap_or_else(|e| panic!("{}", e.render(&self.p)));
    }

    /// `group(c, tol)` and `groupDistinct(c, tol)` for every cell.
    fn sizes_and_kinds(&self, board: &[i64], tol: i64) -> (Vec<i64>, Vec<i64>) {
        let mut st = self.state(board, tol, 1);
        for c in 0..self.cells() {
            self.play(&mut st, "probe", c);
        }
        let n = self.cells();
        (st.slots[self.size..self.size + n].to_vec(), st.slots[self.kinds..self.kinds + n].to_vec())
    }

    fn groups(&self, board: &[i64], tol: i64, min: i64) -> i64 {
        let mut st = self.state(board, tol, min);
        self.play(&mut st, "tally", 0);
        self.p.read(&st, self.count) as i64
    }

    fn leaders(&self, board: &[i64], tol: i64, min: i64) -> Vec<usize> {
        self.numbers(&self.state(board, tol, min), "lead")
    }
}

/// Rows written top row first (as the board looks), returned bottom row first (index order).
fn rows(top_first: &[&[i64]]) -> Vec<i64> {
    top_first.iter().rev().flat_map(|r| r.iter().copied()).collect()
}

/// A 5 × 4 board:
/// ```text
/// y=3:  1 1 0 3 3
/// y=2:  2 0 0 3 9
/// y=1:  3 2 1 0 9
/// y=0:  3 3 2 1 5
/// ```
fn crafted() -> Vec<i64> {
    rows(&[&[1, 1, 0, 3, 3], &[2, 0, 0, 3, 9], &[3, 2, 1, 0, 9], &[3, 3, 2, 1, 5]])
}

#[test]
fn group_sizes_under_tolerance_0_and_1() {
    let g = groups_game(5, 4);
    let b = crafted();
    let (size0, kinds0) = g.sizes_and_kinds(&b, 0);
    // Equal values only: the 3s at the bottom left (3 cells), the 3s top right (3), the 9s (2),
    // the 1s top left (2); every other tile alone; empty cells 0.
    #[rustfmt::skip]
    let want0 = rows(&[
        &[2, 2, 0, 3, 3],
        &[1, 0, 0, 3, 2],
        &[3, 1, 1, 0, 2],
        &[3, 3, 1, 1, 1],
    ]);
    assert_eq!(size0, want0);
    let want_kinds0: Vec<i64> = b.iter().map(|&v| (v != 0) as i64).collect();
    assert_eq!(kinds0, want_kinds0, "under tolerance 0 a group holds one value");

    // |a − b| ≤ 1: the 1-2-3 chains on the left join (1 1 / 2 / 3 2 1 / 3 3 2 1: 10 cells),
    // the 3s top right stay apart from the 1 at (3, 0) (the empty (3, 1) separates them), the 9s
    // and the 5 are not within 1.
    #[rustfmt::skip]
    let want1 = rows(&[
        &[10, 10, 0, 3, 3],
        &[10, 0, 0, 3, 2],
        &[10, 10, 10, 0, 2],
        &[10, 10, 10, 10, 1],
    ]);
    let (size1, kinds1) = g.sizes_and_kinds(&b, 1);
    assert_eq!(size1, want1);
    #[rustfmt::skip]
    let want_kinds1 = rows(&[
        &[3, 3, 0, 1, 1],
        &[3, 0, 0, 1, 1],
        &[3, 3, 3, 0, 1],
        &[3, 3, 3, 3, 1],
    ]);
    assert_eq!(kinds1, want_kinds1, "the big group holds 1, 2 and 3");

    // A wide tolerance joins every orthogonally connected tile: 9 and 3 are 6 apart.
    let (size6, kinds6) = g.sizes_and_kinds(&b, 6);
    assert_eq!(size6[4 + 2 * 5], 16, "(4, 2) joins the 3s above-left and the 5 below under tol 6");
    assert_eq!(kinds6[4 + 2 * 5], 5, "1, 2, 3, 5 and 9");
    // A negative tolerance connects nothing.
    let (size_neg, _) = g.sizes_and_kinds(&b, -1);
    assert_eq!(size_neg, want_kinds0);
}

#[test]
fn one_leader_per_group_of_at_least_min_and_groups_counts_them() {
    let g = groups_game(5, 4);
    let b = crafted();
    // Tolerance 0: groups (leader → size): 0 → 3 (3 3 at the bottom, 3 above), 2 → 1, 3 → 1,
    // 4 → 1, 6 → 1, 7 → 1, 9 → 2 (the 9s), 10 → 1, 13 → 3 (the 3s top right), 15 → 2 (the 1s).
    assert_eq!(g.leaders(&b, 0, 1), vec![0, 2, 3, 4, 6, 7, 9, 10, 13, 15]);
    assert_eq!(g.leaders(&b, 0, 2), vec![0, 9, 13, 15]);
    assert_eq!(g.leaders(&b, 0, 3), vec![0, 13]);
    assert_eq!(g.leaders(&b, 0, 4), Vec::<usize>::new());
    assert_eq!(g.groups(&b, 0, 1), 10);
    assert_eq!(g.groups(&b, 0, 2), 4);
    assert_eq!(g.groups(&b, 0, 3), 2);
    assert_eq!(g.groups(&b, 0, 4), 0);
    assert_eq!(g.groups(&b, 0, 0), 10, "min ≤ 1 counts every group");
    // Tolerance 1: the left chain (leader 0, 10 cells), the 5 (4), the 9s (9), the 3s (13).
    assert_eq!(g.leaders(&b, 1, 1), vec![0, 4, 9, 13]);
    assert_eq!(g.leaders(&b, 1, 3), vec![0, 13]);
    assert_eq!(g.leaders(&b, 1, 10), vec![0]);
    assert_eq!(g.leaders(&b, 1, 11), Vec::<usize>::new());
    assert_eq!(g.groups(&b, 1, 1), 4);
    assert_eq!(g.groups(&b, 1, 3), 2);
    assert_eq!(g.groups(&b, 1, 10), 1);
    // Cell 2 has no tile to its left or below, but its group reaches cell 0 over the top: the
    // arch has one leader, 0.
    let g3 = groups_game(3, 3);
    let n = rows(&[&[7, 7, 7], &[7, 0, 7], &[7, 0, 7]]);
    assert_eq!(g3.leaders(&n, 0, 1), vec![0], "cell 2 is reached from 0 over the top");
    assert_eq!(g3.groups(&n, 0, 7), 1);
}

#[test]
fn an_empty_board_has_no_groups() {
    let g = groups_game(5, 4);
    let empty = vec![0; 20];
    let (size, kinds) = g.sizes_and_kinds(&empty, 0);
    assert!(size.iter().chain(&kinds).all(|&v| v == 0));
    assert_eq!(g.leaders(&empty, 0, 1), Vec::<usize>::new());
    assert_eq!(g.groups(&empty, 5, 1), 0);
}

#[test]
fn clear_group_empties_the_group_then_the_tiles_fall() {
    let g = groups_game(5, 4);
    let b = crafted();
    // Tolerance 0 at (0, 0): the three 3s go; column 0 keeps 2 and 1, which fall to the bottom;
    // column 1 loses its bottom 3, its 2 falls.
    let mut st = g.state(&b, 0, 1);
    g.play(&mut st, "clear", 0);
    // Column 3 had a gap under its 3s: they fall too.
    #[rustfmt::skip]
    let want = rows(&[
        &[0, 0, 0, 0, 3],
        &[0, 0, 0, 3, 9],
        &[1, 1, 1, 3, 9],
        &[2, 2, 2, 1, 5],
    ]);
    assert_eq!(g.board(&st), want);
    // Tolerance 1 from any cell of the left chain clears all 10 of its cells.
    let mut st = g.state(&b, 1, 1);
    g.play(&mut st, "clear", 16);
    #[rustfmt::skip]
    let want = rows(&[
        &[0, 0, 0, 0, 3],
        &[0, 0, 0, 0, 9],
        &[0, 0, 0, 3, 9],
        &[0, 0, 0, 3, 5],
    ]);
    assert_eq!(g.board(&st), want);
    // An empty cell has no group: clearing it changes nothing (the fall has nothing to do on a
    // settled board).
    let settled = rows(&[&[0, 0, 0, 0, 0], &[0, 0, 0, 0, 9], &[1, 0, 0, 3, 9], &[3, 3, 2, 1, 5]]);
    let mut st = g.state(&settled, 0, 1);
    g.play(&mut st, "clear", 11);
    assert_eq!(g.board(&st), settled);
}

#[test]
fn a_cell_off_the_grid_is_a_runtime_error() {
    let base = "grid board 3 2
class player
object me is player
initial me
";
    for (line, c) in [
        ("action player tap\ncondition tap board.group(6, 0) > 0\n", 6),
        ("action player tap\ncondition tap board.groupLead(-1, 0, 1)\n", -1),
        ("action player tap\ncondition tap board.groupDistinct(99, 1) > 0\n", 99),
    ] {
        let p = util::compile(&format!("{base}{line}")).program;
        let st = p.initial_state().unwrap();
        let e = p.legal_actions(&st, &mut Vec::new()).expect_err("off the grid");
        assert_eq!(e.kind, RtKind::BadCell { grid: "board".into(), c, last: 5 }, "{line}");
        let text = e.render(&p);
        assert!(text.contains(&format!("cell {c} is not on grid `board`; expected 0 ≤ c ≤ 5")), "{text}");
    }
    let p =
        util::compile(&format!("{base}action player tap\nconsequence wipe do board.clearGroup(6, 0)\nhasConsequence tap wipe\n")).program;
    let mut st = p.initial_state().unwrap();
    let a = util::legal(&p, &st)[0];
    let e = p.apply(&mut st, a).expect_err("off the grid");
    assert_eq!(e.kind, RtKind::BadCell { grid: "board".into(), c: 6, last: 5 });
    // `groups` takes no cell: nothing to be off the grid.
    let p = util::compile(&format!("{base}action player tap\ncondition tap board.groups(0, 1) == 0\n")).program;
    assert_eq!(util::legal(&p, &p.initial_state().unwrap()).len(), 1);
}

/// Every cell's group by a plain flood fill with a fresh visited list per cell: (its lowest
/// cell, its size, how many distinct values it holds); (0, 0, 0) for an empty cell.
fn naive_groups(b: &[i64], w: usize, h: usize, tol: i64) -> Vec<(usize, i64, i64)> {
    (0..w * h)
        .map(|c| {
            if b[c] == 0 {
                return (0, 0, 0);
            }
            let mut seen = vec![false; w * h];
            let mut todo = vec![c];
            let mut members = Vec::new();
            seen[c] = true;
            while let Some(i) = todo.pop() {
                members.push(i);
                let (x, y) = ((i % w) as i64, (i / w) as i64);
                for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                        continue;
                    }
                    let j = (ny * w as i64 + nx) as usize;
                    if !seen[j] && b[j] != 0 && (b[i] - b[j]).abs() <= tol {
                        seen[j] = true;
                        todo.push(j);
                    }
                }
            }
            let mut values: Vec<i64> = members.iter().map(|&i| b[i]).collect();
            values.sort();
            values.dedup();
            (*members.iter().min().unwrap(), members.len() as i64, values.len() as i64)
        })
        .collect()
}

#[test]
fn random_boards_agree_with_a_naive_flood_fill() {
    let mut rng = playforge::rng::stream(15, 0, 0, 0);
    let mut boards = 0;
    for (w, h) in [(6, 5), (1, 7), (7, 1), (4, 4), (9, 6)] {
        let g = groups_game(w, h);
        for _ in 0..80 {
            let values = rng.random_range(1..=5i64);
            let empty = rng.random_range(0..=3u32);
            let b: Vec<i64> = (0..w * h).map(|_| if rng.random_range(0..10) < empty { 0 } else { rng.random_range(1..=values) }).collect();
            let tol = rng.random_range(0..=2i64);
            let what = format!("{w}×{h} tol {tol}: {b:?}");
            let naive = naive_groups(&b, w, h, tol);
            let (size, kinds) = g.sizes_and_kinds(&b, tol);
            assert_eq!(size, naive.iter().map(|n| n.1).collect::<Vec<_>>(), "group, {what}");
            assert_eq!(kinds, naive.iter().map(|n| n.2).collect::<Vec<_>>(), "groupDistinct, {what}");
            // Leaders are exactly the lowest cells of the groups, and with min = 1 their groups
            // cover every tile once.
            let leaders = g.leaders(&b, tol, 1);
            let lowest: Vec<usize> = (0..w * h).filter(|&c| b[c] != 0 && naive[c].0 == c).collect();
            assert_eq!(leaders, lowest, "groupLead, {what}");
            let tiles = b.iter().filter(|&&v| v != 0).count() as i64;
            assert_eq!(leaders.iter().map(|&c| size[c]).sum::<i64>(), tiles, "{what}");
            let min = rng.random_range(1..=4i64);
            let want = leaders.iter().filter(|&&c| size[c] >= min).count() as i64;
            assert_eq!(g.groups(&b, tol, min), want, "groups, min {min}, {what}");
            assert_eq!(g.leaders(&b, tol, min).len() as i64, want, "groupLead, min {min}, {what}");
            // Clearing a leader's group empties exactly its cells (on a 1-high board the fall
            // moves nothing).
            if h == 1
                && let Some(&c) = leaders.first()
            {
                let mut st = g.state(&b, tol, 1);
                g.play(&mut st, "clear", c);
                let want: Vec<i64> = (0..w).map(|i| if b[i] != 0 && naive[i].0 == c { 0 } else { b[i] }).collect();
                assert_eq!(g.board(&st), want, "clearGroup, {what}");
            }
            boards += 1;
        }
    }
    assert_eq!(boards, 400);
}
