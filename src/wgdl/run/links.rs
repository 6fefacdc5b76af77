//! Connections kept up to date (the union–find): `board.joins(v, dirs, a, b)` asks
//! whether the cells holding v join edge a to edge b. Searching that from scratch costs a flood
//! fill per question, and Hex asks it twice a move. Instead, for each grid a program asks it of
//! and each direction list it asks along (a [`Link`]), the state carries the groups of equal,
//! non-zero neighbouring cells as a union–find forest with the edges each group touches
//! (`State::links`), and a copy of the cells it was made from.
//!
//! [`Link::sync`] brings the forest up to date after every move (`Program::sync_links`, in
//! `board/play.rs`, runs it on each link's cells): cells that went from
//! 0 to a value are joined to their equal neighbours (a placement, the common case); any other
//! change of a cell builds the forest again. A question then costs a look at the cells of edge a.
//! A state whose cells differ from the copy (a state written other than by a move) is answered
//! by the flood fill, so an answer never depends on whether the forest is fresh, and a question
//! about empty cells (v = 0) is always a flood fill.
//!
//! Only the grid's cells and the forest's words are read here, never the program or the state,
//! so that [`super::board::Boards`] (below the program) can hold the links.

/// One tracked (grid, direction list) and where its forest lives in `State::links`: the cells'
/// copy, then each cell's parent, then each root's edge bits and size (`edges | size << 8`).
#[derive(Clone, Debug, Default)]
pub struct Link {
    pub grid: u16,
    pub dirs: Vec<(i32, i32)>,
    /// Where its three runs of `n` start in `State::links`.
    pub off: usize,
    pub n: usize,
    /// Per cell, its neighbours along `dirs` (`u32::MAX` off the grid), `dirs.len()` a cell.
    neighbours: Vec<u32>,
    /// Per cell, the edges it lies on (bit e for edge e, numbered as `board.joins` numbers them).
    edges: Vec<u8>,
    /// Per edge, its cells.
    edge_cells: [Vec<u32>; 4],
}

impl Link {
    /// The link of grid `grid` (`w` × `h`) along `dirs`, its forest at `off`.
    pub fn new(grid: u16, w: u32, h: u32, dirs: &[(i32, i32)], off: usize) -> Link {
        let n = (w * h) as usize;
        let (w, h) = (w as i64, h as i64);
        let mut l = Link { grid, dirs: dirs.to_vec(), off, n, ..Default::default() };
        for c in 0..n as i64 {
            let (x, y) = (c % w, c / w);
            for &(dx, dy) in dirs {
                let (nx, ny) = (x + dx as i64, y + dy as i64);
                let on = nx >= 0 && ny >= 0 && nx < w && ny < h;
                l.neighbours.push(if on { (ny * w + nx) as u32 } else { u32::MAX });
            }
            let mut e = 0u8;
            for (k, on) in [y == h - 1, x == w - 1, y == 0, x == 0].into_iter().enumerate() {
                if on {
                    e |= 1 << k;
                    l.edge_cells[k].push(c as u32);
                }
            }
            l.edges.push(e);
        }
        l
    }

    /// How many words of `State::links` it takes.
    pub fn words(&self) -> usize {
        3 * self.n
    }
}

/// The root of cell `c` (no path shortening: the state is only read).
#[inline(always)]
fn root(parent: &[i64], mut c: usize) -> usize {
    while parent[c] as usize != c {
        c = parent[c] as usize;
    }
    c
}

/// The root of cell `c`, halving the path on the way.
#[inline(always)]
fn root_mut(parent: &mut [i64], mut c: usize) -> usize {
    while parent[c] as usize != c {
        let up = parent[parent[c] as usize];
        parent[c] = up;
        c = up as usize;
    }
    c
}

/// Joins the groups of cells a and b (the larger keeps its root; edge bits add up).
#[inline(always)]
fn union(parent: &mut [i64], info: &mut [i64], a: usize, b: usize) {
    let (ra, rb) = (root_mut(parent, a), root_mut(parent, b));
    if ra == rb {
        return;
    }
    let (big, small) = if info[ra] >> 8 >= info[rb] >> 8 { (ra, rb) } else { (rb, ra) };
    parent[small] = big as i64;
    let (edges, size) = ((info[big] | info[small]) & 0xff, (info[big] >> 8) + (info[small] >> 8));
    info[big] = edges | size << 8;
}

impl Link {
    /// Brings this link's forest (`words`, its [`Link::words`] of `State::links`) up to date
    /// with its grid's `cells` (see the module's opening paragraph). Allocates nothing.
    #[inline]
    pub(in crate::wgdl) fn sync(&self, cells: &[i64], words: &mut [i64]) {
        let l = self;
        let (seen, rest) = words.split_at_mut(l.n);
        let (parent, info) = rest.split_at_mut(l.n);
        let d = l.dirs.len();
        // Cells that went from 0 to a value start a group of their own and join their equal
        // neighbours that are known already (old ones, and new ones met earlier in the
        // pass; a later one joins this one when its turn comes). Runs of equal cells are
        // passed over sixteen at a time.
        let mut rebuild = false;
        let mut k = 0;
        'chunks: while k < l.n {
            let end = (k + 16).min(l.n);
            if seen[k..end] == cells[k..end] {
                k = end;
                continue;
            }
            for c in k..end {
                if seen[c] == cells[c] {
                    continue;
                }
                if seen[c] != 0 {
                    rebuild = true;
                    break 'chunks;
                }
                seen[c] = cells[c];
                parent[c] = c as i64;
                info[c] = l.edges[c] as i64 | 1 << 8;
                for &nb in &l.neighbours[c * d..(c + 1) * d] {
                    let nb = nb as usize;
                    if nb != u32::MAX as usize && cells[nb] == cells[c] && seen[nb] == cells[nb] {
                        union(parent, info, c, nb);
                    }
                }
            }
            k = end;
        }
        if rebuild {
            seen.copy_from_slice(cells);
            for c in 0..l.n {
                parent[c] = c as i64;
                info[c] = l.edges[c] as i64 | 1 << 8;
            }
            for c in 0..l.n {
                if cells[c] != 0 {
                    for &nb in &l.neighbours[c * d..(c + 1) * d] {
                        if nb != u32::MAX && (nb as usize) < c && cells[nb as usize] == cells[c] {
                            union(parent, info, c, nb as usize);
                        }
                    }
                }
            }
        }
    }

    /// `board.joins(v, dirs, a, b)` from this link's forest (`words`) over its grid's `cells`:
    /// `None` when there is none to read (v = 0, or cells that are not those the forest was made
    /// from) — the caller searches instead.
    #[inline]
    pub(in crate::wgdl) fn joins(&self, cells: &[i64], words: &[i64], v: i64, a: i64, b: i64) -> Option<bool> {
        if v == 0 || !(0..4).contains(&a) || !(0..4).contains(&b) {
            return None;
        }
        let (seen, rest) = words.split_at(self.n);
        if seen != cells {
            return None;
        }
        let (parent, info) = rest.split_at(self.n);
        let bit = 1i64 << b;
        Some(self.edge_cells[a as usize].iter().any(|&c| cells[c as usize] == v && info[root(parent, c as usize)] & bit != 0))
    }
}

#[cfg(test)]
mod tests {
    use crate::wgdl::program::{Program, State};
    use rand::{RngExt, SeedableRng};

    /// Every question `board.joins` can be asked of `st` (both stones, every pair of edges):
    /// the forest's answer, which must exist, equals the flood fill's.
    fn same_answers(p: &Program, st: &State) {
        let dirs = p.board.links[0].dirs.clone();
        for v in 1..=2 {
            for a in 0..4 {
                for b in 0..4 {
                    let linked = p.joins_linked(st, 0, v, &dirs, a, b).expect("a fresh forest after each move");
                    assert_eq!(linked, p.joins_searched(st, 0, v, &dirs, a, b), "v {v}, edges {a} {b}, cells {:?}", &st.slots);
                }
            }
        }
    }

    /// Random games of `text`: the forest agrees with the search in every state reached.
    fn random_games(text: &str, games: u64) {
        let p = crate::wgdl::compile_str("links.wgdl", text).expect("compiles").program;
        assert_eq!(p.board.links.len(), 1, "one grid, one direction set");
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut legal = Vec::new();
        for _ in 0..games {
            let mut st = p.initial_state().unwrap();
            same_answers(&p, &st);
            loop {
                p.legal_actions(&st, &mut legal).unwrap();
                if legal.is_empty() || st.outcome != 0 {
                    break;
                }
                p.apply(&mut st, legal[rng.random_range(0..legal.len())]).unwrap();
                same_answers(&p, &st);
            }
        }
    }

    const PLACE: &str = "players black white\nturn player side\ngrid board 5 4\nclass player\n\
        attribute player side long 0\nattribute player stone long 1\nobject black is player\n\
        object white is player\nattribute white side 1\nattribute white stone 2\ninitial black\n\
        initial white\naction player place forEveryCell c board\ncondition place this == game.actor\n\
        condition place board[c] == 0\nconsequence put direct board[c] = this.stone\n\
        consequence done endTurn\nhasConsequence place put done\n";

    #[test]
    fn placements_keep_the_forest_equal_to_the_search() {
        random_games(&format!("{PLACE}winner black board.joins(1, hex, south, north)\n"), 200);
    }

    /// Stones also lifted and turned over: each such move builds the forest again.
    #[test]
    fn lifts_and_changes_build_the_forest_again() {
        let text = format!(
            "{PLACE}action player lift forEveryCell c board\ncondition lift this == game.actor\n\
             condition lift board[c] == this.stone\nconsequence clear direct board[c] = 0\n\
             hasConsequence lift clear done\naction player turn forEveryCell c board\n\
             condition turn this == game.actor\ncondition turn board[c] != 0\ncondition turn board[c] != this.stone\n\
             consequence mine direct board[c] = this.stone\nhasConsequence turn mine done\n\
             draw game.moves >= 60\nwinner black board.joins(1, orthogonal, west, east)\n"
        );
        random_games(&text, 100);
    }

    /// A state written other than by a move (its cells no longer those of the forest) is not
    /// read from the forest: the caller searches.
    #[test]
    fn a_stale_forest_is_not_read() {
        let p = crate::wgdl::compile_str("links.wgdl", &format!("{PLACE}winner black board.joins(1, hex, south, north)\n"))
            .expect("compiles")
            .program;
        let mut st = p.initial_state().unwrap();
        let dirs = p.board.links[0].dirs.clone();
        let base = p.grids[0].base as usize;
        for y in 0..4 {
            st.slots[base + y * 5] = 1;
        }
        assert_eq!(p.joins_linked(&st, 0, 1, &dirs, 2, 0), None);
        assert!(p.joins(&st, 0, 1, &dirs, 2, 0), "a column of black joins south to north");
        p.sync_links(&mut st);
        assert_eq!(p.joins_linked(&st, 0, 1, &dirs, 2, 0), Some(true));
    }
}
