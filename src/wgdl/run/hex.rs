//! Hex maps: the geometry behind the `hex.…` built-ins (extension). A map is read once, from a
//! small text file, and everything the built-ins ask is precomputed for every pair of cells:
//! hex distance, walking distance over non-wall cells, the next step of a shortest walk, and line
//! of sight; and, as rows of cell bits, the cells at each walking distance from a cell, within
//! each hex distance of it, and that see it, so that `hex.approach` tests a whole ring of cells
//! at once. Nothing here knows a game; occupancy (who stands where) is the interpreter's job.
//!
//! File format (`games/maps/*.hexmap`), pointy-top rows from r = −R (top) to +R:
//!
//! ```text
//! // comment
//! radius 2
//!   . # .
//!  A . . .
//! . . # . B
//!  . . . .
//!   . . .
//! ```
//!
//! `.` is an empty cell, `#` a wall, a capital letter an empty cell that is a start point of
//! side 0 (`A`), 1 (`B`), …; start points of one side are numbered in reading order. Cells are
//! numbered in reading order too (row by row, q ascending), and that number is what a WGDL
//! expression holds for a cell. Coordinates are axial (q, r), as in Red Blob Games' guide.

/// "No path": the walking distance between cells that cannot reach each other.
pub const UNREACHABLE: i64 = 1_000_000;

#[derive(Clone, Debug)]
pub struct HexMap {
    pub radius: i32,
    pub q: Vec<i32>,
    pub r: Vec<i32>,
    pub wall: Vec<bool>,
    /// Start cells per side, in reading order.
    pub starts: Vec<Vec<u32>>,
    n: usize,
    dist: Vec<u8>,
    walk: Vec<u16>,
    /// `parent[a * n + b]`: b's parent in the breadth-first search from a (`u16::MAX`: none), so
    /// the walk from a to b is the parent chain from b, reversed.
    parent: Vec<u16>,
    sees: Vec<u64>,
    /// `by_walk[a * n ..][.. n − walls]`: the non-wall cells in order of walking distance from
    /// a, then cell number (cells a cannot reach last): the order in which searches for the
    /// nearest cell with some property can stop at the first hit.
    by_walk: Vec<u16>,
    /// Line of sight as rows of whole words: row a (the cells a sees) is
    /// `sees_rows[a * words .. (a + 1) * words]`, for unions over several viewers.
    sees_rows: Vec<u64>,
    words: usize,
    /// Bit tables for [`HexMap::approach`] (`None` on maps where they would pass
    /// [`APPROACH_TABLE_WORDS`]: the search then scans [`HexMap::by_walk`]).
    approach: Option<ApproachTables>,
}

/// The most words the bit tables of [`HexMap::approach`] may take on one map (16 MiB); on the
/// arena's map they take a few thousand.
pub const APPROACH_TABLE_WORDS: usize = 1 << 21;

/// What [`HexMap::approach`] reads instead of scanning cells: rows of cell bits.
#[derive(Clone, Debug)]
struct ApproachTables {
    /// Finite walking distances are 0 … `rings` − 1; ring `rings` holds the cells not reachable.
    rings: usize,
    /// `[a][d]`: the non-wall cells at walking distance d from a (d = `rings`: unreachable).
    ring_bits: Vec<u64>,
    /// Hex distances are 0 … `dists` − 1.
    dists: usize,
    /// `[b][r]`: the cells within hex distance r of b.
    within: Vec<u64>,
    /// `[b]`: the cells that see b.
    seen_to: Vec<u64>,
}

/// A problem in a map file: 1-based line and column, and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct MapError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

/// The six neighbour offsets, in the order a breadth-first search visits them (HexMage's).
pub const DIRS: [(i32, i32); 6] = [(-1, 0), (1, 0), (0, -1), (0, 1), (1, -1), (-1, 1)];

impl HexMap {
    pub fn parse(text: &str) -> Result<HexMap, MapError> {
        let err = |line: usize, col: usize, msg: String| MapError { line, col, msg };
        let mut radius: Option<i32> = None;
        let mut cells: Vec<(i32, i32, u8)> = Vec::new();
        let mut row = 0i32;
        let mut last_line = 0;
        for (ln, raw) in text.lines().enumerate() {
            let line = ln + 1;
            last_line = line;
            let body = raw.split("//").next().unwrap_or("");
            if body.trim().is_empty() {
                continue;
            }
            let Some(rad) = radius else {
                let mut words = body.split_whitespace();
                let col = body.find(|c: char| !c.is_whitespace()).unwrap_or(0) + 1;
                match (words.next(), words.next(), words.next()) {
                    (Some("radius"), Some(v), None) => match v.parse::<i32>() {
                        Ok(v) if (1..=20).contains(&v) => radius = Some(v),
                        _ => return Err(err(line, col, format!("a radius from 1 to 20, found `{v}`"))),
                    },
                    _ => return Err(err(line, col, format!("`radius <n>` as the first line, found `{}`", body.trim()))),
                }
                continue;
            };
            if row > 2 * rad {
                let col = body.find(|c: char| !c.is_whitespace()).unwrap_or(0) + 1;
                return Err(err(line, col, format!("only {} rows for radius {rad}; this row is one too many", 2 * rad + 1)));
            }
            let r = row - rad;
            let (qlo, qhi) = ((-rad).max(-rad - r), rad.min(rad - r));
            let want = (qhi - qlo + 1) as usize;
            let mut got = 0usize;
            for (ci, ch) in body.char_indices() {
                if ch.is_whitespace() {
                    continue;
                }
                let col = ci + 1;
                if got == want {
                    return Err(err(line, col, format!("{want} cells in row r = {r}; `{ch}` is one too many")));
                }
                let kind = match ch {
                    '.' => 0u8,
                    '#' => 1,
                    'A'..='Z' => 2 + (ch as u8 - b'A'),
                    _ => return Err(err(line, col, format!("`.` (empty), `#` (wall) or a capital letter (start point), found `{ch}`"))),
                };
                cells.push((qlo + got as i32, r, kind));
                got += 1;
            }
            if got < want {
                return Err(err(line, body.trim_end().len() + 1, format!("{want} cells in row r = {r}, found {got}")));
            }
            row += 1;
        }
        let Some(rad) = radius else { return Err(err(last_line.max(1), 1, "`radius <n>` and the map's rows".into())) };
        if row != 2 * rad + 1 {
            return Err(err(last_line + 1, 1, format!("{} rows for radius {rad}, found {row}", 2 * rad + 1)));
        }
        let n = cells.len();
        let mut map = HexMap {
            radius: rad,
            q: cells.iter().map(|c| c.0).collect(),
            r: cells.iter().map(|c| c.1).collect(),
            wall: cells.iter().map(|c| c.2 == 1).collect(),
            starts: Vec::new(),
            n,
            dist: vec![0; n * n],
            walk: vec![u16::MAX; n * n],
            parent: vec![u16::MAX; n * n],
            sees: vec![0; (n * n).div_ceil(64)],
            by_walk: Vec::new(),
            sees_rows: Vec::new(),
            words: n.div_ceil(64),
            approach: None,
        };
        for (i, c) in cells.iter().enumerate() {
            if c.2 >= 2 {
                let side = (c.2 - 2) as usize;
                if map.starts.len() <= side {
                    map.starts.resize(side + 1, Vec::new());
                }
                map.starts[side].push(i as u32);
            }
        }
        map.precompute();
        Ok(map)
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The cell at axial (q, r), if it is on the map.
    pub fn cell(&self, q: i32, r: i32) -> Option<usize> {
        let rad = self.radius;
        if q.abs() > rad || r.abs() > rad || (q + r).abs() > rad {
            return None;
        }
        // Rows before r, then the offset within the row.
        let mut idx = 0i32;
        for rr in -rad..r {
            idx += 2 * rad + 1 - rr.abs();
        }
        let qlo = (-rad).max(-rad - r);
        Some((idx + q - qlo) as usize)
    }

    fn precompute(&mut self) {
        let n = self.n;
        for a in 0..n {
            for b in 0..n {
                let (dq, dr) = (self.q[a] - self.q[b], self.r[a] - self.r[b]);
                self.dist[a * n + b] = ((dq.abs() + dr.abs() + (dq + dr).abs()) / 2) as u8;
            }
        }
        // Breadth-first search from every cell a over non-wall cells: walk[a][x] and x's parent
        // (its first discoverer, neighbours in DIRS order).
        let mut queue = Vec::with_capacity(n);
        for a in 0..n {
            if self.wall[a] {
                continue;
            }
            self.walk[a * n + a] = 0;
            queue.clear();
            queue.push(a);
            let mut head = 0;
            while head < queue.len() {
                let c = queue[head];
                head += 1;
                let d = self.walk[a * n + c];
                for (dq, dr) in DIRS {
                    if let Some(x) = self.cell(self.q[c] + dq, self.r[c] + dr)
                        && !self.wall[x]
                        && self.walk[a * n + x] == u16::MAX
                    {
                        self.walk[a * n + x] = d + 1;
                        self.parent[a * n + x] = c as u16;
                        queue.push(x);
                    }
                }
            }
        }
        self.sees_rows = vec![0; n * self.words];
        for a in 0..n {
            for b in 0..n {
                if self.line_clear(a, b) {
                    let k = a * n + b;
                    self.sees[k / 64] |= 1 << (k % 64);
                    self.sees_rows[a * self.words + b / 64] |= 1 << (b % 64);
                }
            }
        }
        let open: Vec<u16> = (0..n as u16).filter(|&c| !self.wall[c as usize]).collect();
        self.by_walk = Vec::with_capacity(n * open.len());
        for a in 0..n {
            let mut order = open.clone();
            order.sort_by_key(|&c| (self.walk(a, c as usize), c));
            self.by_walk.extend(order);
        }
        self.approach = self.approach_tables();
    }

    /// The rings, disks and sight columns of [`ApproachTables`], if they fit.
    fn approach_tables(&self) -> Option<ApproachTables> {
        let (n, words) = (self.n, self.words);
        let rings = self.walk.iter().filter(|&&w| w != u16::MAX).map(|&w| w as usize + 1).max().unwrap_or(0);
        let dists = self.dist.iter().map(|&d| d as usize + 1).max().unwrap_or(0);
        if n * (rings + 1 + dists + 1) * words > APPROACH_TABLE_WORDS {
            return None;
        }
        let set = |v: &mut Vec<u64>, row: usize, c: usize| v[row * words + c / 64] |= 1 << (c % 64);
        let mut t = ApproachTables {
            rings,
            ring_bits: vec![0; n * (rings + 1) * words],
            dists,
            within: vec![0; n * dists * words],
            seen_to: vec![0; n * words],
        };
        for a in 0..n {
            for c in (0..n).filter(|&c| !self.wall[c]) {
                let d = match self.walk(a, c) {
                    UNREACHABLE => rings,
                    d => d as usize,
                };
                set(&mut t.ring_bits, a * (rings + 1) + d, c);
            }
        }
        for b in 0..n {
            for c in 0..n {
                for r in self.distance(c, b) as usize..dists {
                    set(&mut t.within, b * dists + r, c);
                }
                if self.sees(c, b) {
                    set(&mut t.seen_to, b, c);
                }
            }
        }
        Some(t)
    }

    /// HexMage's approach search: the first cell c, in walking order from `from` (walking
    /// distance, then cell number), other than `from`, at most `budget` steps away, from which
    /// `target` is within hex distance `range` and in sight, and for which `free(c)` holds;
    /// `free` is asked only about cells that pass the rest, in that order, and the search stops
    /// at its first error. With the map's bit tables each walking distance is one AND
    /// of bit rows per word; otherwise the cells are scanned in [`HexMap::by_walk`] order.
    pub fn approach<E>(
        &self,
        from: usize,
        target: usize,
        budget: i64,
        range: i64,
        mut free: impl FnMut(usize) -> Result<bool, E>,
    ) -> Result<Option<usize>, E> {
        let Some(t) = &self.approach else {
            for &c in self.by_walk(from) {
                let c = c as usize;
                if self.walk(from, c) > budget {
                    break;
                }
                if c == from || self.distance(c, target) > range || !self.sees(c, target) {
                    continue;
                }
                if free(c)? {
                    return Ok(Some(c));
                }
            }
            return Ok(None);
        };
        if budget < 0 || range < 0 {
            return Ok(None);
        }
        let words = self.words;
        let r = (range as usize).min(t.dists.max(1) - 1);
        let within = &t.within[(target * t.dists + r) * words..][..words];
        let seen = &t.seen_to[target * words..][..words];
        let last = (budget as usize).min(t.rings.saturating_sub(1));
        // The rings within the budget, then the cells not reachable if the budget says so.
        let unreachable = (budget >= UNREACHABLE).then_some(t.rings);
        for d in (0..=last).chain(unreachable) {
            let ring = &t.ring_bits[(from * (t.rings + 1) + d) * words..][..words];
            for w in 0..words {
                let mut x = ring[w] & within[w] & seen[w];
                while x != 0 {
                    let c = w * 64 + x.trailing_zeros() as usize;
                    x &= x - 1;
                    if c != from && free(c)? {
                        return Ok(Some(c));
                    }
                }
            }
        }
        Ok(None)
    }

    /// The non-wall cells by walking distance from `a`, ties by cell number; cells `a` cannot
    /// reach come last.
    pub fn by_walk(&self, a: usize) -> &[u16] {
        let k = self.by_walk.len() / self.n.max(1);
        &self.by_walk[a * k..(a + 1) * k]
    }

    /// Words in a row of cell bits ([`HexMap::sees_row`], occupancy sets).
    pub fn words(&self) -> usize {
        self.words
    }

    /// The cells `a` sees, as bits.
    pub fn sees_row(&self, a: usize) -> &[u64] {
        &self.sees_rows[a * self.words..(a + 1) * self.words]
    }

    /// HexMage's line of sight: the line from a to b in cube coordinates (q, −q−r, r), sampled
    /// at N + 1 points (N = hex distance, both ends included); each sample's q and r are nudged
    /// (+1e-6, −2e-6, so that lines along cell edges fall to one side) and rounded on their own
    /// (half to even). b is visible from a when no sample is a wall. Directional, like HexMage's.
    fn line_clear(&self, a: usize, b: usize) -> bool {
        if self.wall[a] || self.wall[b] {
            return false;
        }
        let nd = self.dist[a * self.n + b] as i32;
        let (aq, ar) = (self.q[a] as f64, self.r[a] as f64);
        let (bq, br) = (self.q[b] as f64, self.r[b] as f64);
        for i in 0..=nd {
            let t = if nd == 0 { 0.0 } else { i as f64 / nd as f64 };
            let q = (aq + (bq - aq) * t + 1e-6).round_ties_even() as i32;
            let r = (ar + (br - ar) * t - 2e-6).round_ties_even() as i32;
            match self.cell(q, r) {
                Some(c) if !self.wall[c] => {}
                _ => return false,
            }
        }
        true
    }

    pub fn distance(&self, a: usize, b: usize) -> i64 {
        self.dist[a * self.n + b] as i64
    }

    /// Steps over non-wall cells from a to b, or [`UNREACHABLE`].
    pub fn walk(&self, a: usize, b: usize) -> i64 {
        match self.walk[a * self.n + b] {
            u16::MAX => UNREACHABLE,
            d => d as i64,
        }
    }

    /// b's parent on the breadth-first search from a: the cell before b on the walk a → b.
    pub fn parent(&self, a: usize, b: usize) -> Option<usize> {
        match self.parent[a * self.n + b] {
            u16::MAX => None,
            x => Some(x as usize),
        }
    }

    /// HexMage's walk towards a target: along the shortest walk from a to b (HexMage's path,
    /// the target excluded), the furthest cell at most `budget` steps away for which `free`
    /// holds; `None` if there is none.
    pub fn step_toward(&self, a: usize, b: usize, budget: i64, mut free: impl FnMut(usize) -> bool) -> Option<usize> {
        let d = self.walk(a, b);
        if !(2..UNREACHABLE).contains(&d) || budget < 1 {
            return None;
        }
        // Cells on the walk at distance k = 1 … d-1 from a; walk back from b's parent.
        let mut at = self.parent(a, b)?;
        let mut k = d - 1;
        while k > budget {
            at = self.parent(a, at)?;
            k -= 1;
        }
        while k >= 1 {
            if free(at) {
                return Some(at);
            }
            if k == 1 {
                break;
            }
            at = self.parent(a, at)?;
            k -= 1;
        }
        None
    }

    pub fn sees(&self, a: usize, b: usize) -> bool {
        let k = a * self.n + b;
        self.sees[k / 64] & (1 << (k % 64)) != 0
    }

    /// The map as rows of text, with `label(cell)` (if any) in place of the cell's own mark.
    pub fn render(&self, label: impl Fn(usize) -> Option<char>) -> String {
        let mut out = String::new();
        let rad = self.radius;
        let mut i = 0;
        for r in -rad..=rad {
            out.push_str(&" ".repeat(r.unsigned_abs() as usize));
            let count = (2 * rad + 1 - r.abs()) as usize;
            for k in 0..count {
                if k > 0 {
                    out.push(' ');
                }
                out.push(label(i).unwrap_or(if self.wall[i] { '#' } else { '.' }));
                i += 1;
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "radius 2\n  . # .\n A . . .\n. . # . B\n . . . .\n  . . .\n";

    #[test]
    fn parses_cells_walls_and_starts() {
        let m = HexMap::parse(SMALL).unwrap();
        assert_eq!(m.len(), 19);
        assert_eq!(m.wall.iter().filter(|w| **w).count(), 2);
        assert_eq!(m.starts, vec![vec![3], vec![11]]);
        assert_eq!(m.cell(0, -2), Some(0));
        assert_eq!(m.cell(2, 0), Some(11));
        assert_eq!((m.q[11], m.r[11]), (2, 0));
    }

    #[test]
    fn walls_lengthen_walks_and_block_sight() {
        let m = HexMap::parse(SMALL).unwrap();
        let (a, b) = (m.cell(-1, 0).unwrap(), m.cell(1, 0).unwrap());
        assert_eq!(m.distance(a, b), 2);
        assert!(m.walk(a, b) > 2, "the wall at (0,0) is in the way");
        assert!(!m.sees(a, b));
        let c = m.cell(-1, 1).unwrap();
        assert!(m.sees(a, c) && m.sees(c, a));
        // Following parents from b reaches a in exactly walk() steps, over non-walls.
        let mut at = b;
        let mut steps = 0;
        while at != a {
            at = m.parent(a, at).unwrap();
            assert!(!m.wall[at]);
            steps += 1;
        }
        assert_eq!(steps, m.walk(a, b));
        // Stepping towards b with a budget of 1 lands next to a, on the walk.
        let s = m.step_toward(a, b, 1, |_| true).unwrap();
        assert_eq!((m.walk(a, s), m.walk(s, b)), (1, m.walk(a, b) - 1));
        assert_eq!(m.step_toward(a, b, 100, |_| true).map(|c| m.walk(c, b)), Some(1), "stops next to the target");
    }

    #[test]
    fn walk_order_and_sight_rows_agree_with_the_tables() {
        let m = HexMap::parse(SMALL).unwrap();
        for a in 0..m.len() {
            let order = m.by_walk(a);
            assert_eq!(order.len(), m.wall.iter().filter(|w| !**w).count());
            for w in order.windows(2) {
                let (x, y) = (w[0] as usize, w[1] as usize);
                assert!((m.walk(a, x), x) < (m.walk(a, y), y), "from {a}: {x} before {y}");
            }
            for b in 0..m.len() {
                assert_eq!(m.sees_row(a)[b / 64] >> (b % 64) & 1 == 1, m.sees(a, b));
            }
        }
    }

    /// The bit-table search against the cell scan it replaces, on the arena map and on a
    /// walled one: every source, target, budget (−1 … beyond the longest walk, and
    /// "unreachable" too) and range, with cells made busy at random.
    #[test]
    fn approach_by_bits_is_the_cell_scan() {
        let arena = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/games/maps/arena5.hexmap")).unwrap();
        for text in [SMALL, arena.as_str()] {
            let m = HexMap::parse(text).unwrap();
            assert!(m.approach.is_some());
            let mut scan = m.clone();
            scan.approach = None;
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            for from in 0..m.len() {
                for target in 0..m.len() {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let busy = seed;
                    let free = |c: usize| -> Result<bool, ()> { Ok(busy >> (c % 64) & 1 == 0 || c.is_multiple_of(3)) };
                    for budget in [-1, 0, 1, 2, 3, 5, 8, 40, UNREACHABLE] {
                        for range in -1..=(2 * m.radius as i64 + 1) {
                            let (a, b) = (m.approach(from, target, budget, range, free), scan.approach(from, target, budget, range, free));
                            assert_eq!(a, b, "from {from} to {target}, budget {budget}, range {range}");
                        }
                    }
                }
            }
            // `free` is asked in walking order and the search stops at its first error.
            let (from, target) = (m.starts[0][0] as usize, m.starts[1][0] as usize);
            let mut asked = (Vec::new(), Vec::new());
            let _ = m.approach(from, target, 50, 1, |c| -> Result<bool, ()> {
                asked.0.push(c);
                Ok(false)
            });
            let _ = scan.approach(from, target, 50, 1, |c| -> Result<bool, ()> {
                asked.1.push(c);
                Ok(false)
            });
            assert!(!asked.0.is_empty());
            assert_eq!(asked.0, asked.1);
            assert_eq!(m.approach(from, target, 50, 1, |c| if c == asked.0[0] { Err(c) } else { Ok(false) }), Err(asked.0[0]));
        }
    }

    #[test]
    fn bad_maps_name_line_and_column() {
        let e = HexMap::parse("radius 2\n  . # .\n A . x .\n").unwrap_err();
        assert_eq!((e.line, e.col), (3, 6));
        assert!(e.msg.contains("found `x`"), "{}", e.msg);
        let e = HexMap::parse("radius 2\n  . # . .\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("one too many"), "{}", e.msg);
        let e = HexMap::parse("radius 2\n  . # .\n").unwrap_err();
        assert!(e.msg.contains("5 rows"), "{}", e.msg);
        let e = HexMap::parse("size 2\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 1));
    }
}
