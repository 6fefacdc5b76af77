//! `report.html`: one self-contained page per run folder, written at the end of every command that
//! writes a run folder and by `playforge report RUN_DIR`. It reads only the folder (and the game
//! files its outputs name), so any run, old or new, gets one. In order: what the run found (its
//! Markdown summaries: win rates with intervals, held-out persona tables, Mann-Whitney tests,
//! verify and landscape reports), its charts (the SVG twins of the PNGs, the archive's heatmap
//! among them; a PNG without a twin is embedded as data), the best content with its parameters
//! and its start drawn by `view`, a replay viewer stepping through the recorded games on the
//! board view (WGDL replays, and GDL match records drawn from their facts), the CSV tables, the config, and every file. Nothing is fetched: styles and the
//! viewer's script are inline, and the page opens from disk with no network.
//!
//! Nothing in a run folder is trusted. Files are read only where they really lie inside the
//! folder (a symbolic link out of it is not followed) and are regular files within the size
//! limit, SVG files are inlined only as rebuilt by [`super::sanitize`], every text is escaped,
//! and the games that replays and records name are read only under the roots a caller gives
//! ([`render_confined`]: `serve` gives its games folder). A run that has not finished says so
//! at the top (the [`INTERRUPTED`] mark, or a lock another process holds).

use super::html::{self, escape, markdown, section};
use crate::drive::content::Content;
use crate::players::ai::Replay;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// At most this many replays are drawn into one report.
const MAX_REPLAYS: usize = 6;
/// At most this many CSV files are shown as tables (the rest are listed).
const MAX_TABLES: usize = 16;
/// Body rows shown per CSV table.
const TABLE_ROWS: usize = 60;
/// How deep the folder is walked (a personas run keeps one folder per persona).
const MAX_DEPTH: usize = 3;
/// Files larger than this are linked, never read into the page.
const MAX_READ: u64 = 8 << 20;

/// The mark of a run that ended interrupted (Ctrl-C: its checkpoint saved, `--resume` goes on);
/// the command line writes it, and removes it when a run of the folder ends whole.
pub const INTERRUPTED: &str = ".interrupted";

/// Why the run of `dir` has not finished, if it has not: it ended interrupted, or another
/// process holds its lock (running now, or killed before its end).
fn unfinished(reader: &Reader) -> Option<String> {
    if reader.dir.join(INTERRUPTED).exists() {
        return Some("This run was interrupted before its end: what is shown is what it had done by then. `--resume` continues it.".into());
    }
    use crate::report::run_dir::{Holder, LOCK};
    let holder = Holder::parse(&reader.read(Path::new(LOCK))?)?;
    if holder.pid == std::process::id() {
        return None;
    }
    Some(if holder.alive() {
        format!("This run has not finished: it is running now (process {}). What is shown is what it has done so far.", holder.pid)
    } else {
        "This run has not finished: it was stopped before its end (killed, or its machine went down). What is shown is what it had done by then; `--resume` continues it.".to_string()
    })
}

/// Where a report may read: its run folder, and games only under `games` (any game when `None`;
/// a server gives its games folder alone, since a game can name files of its own, a hex map, that
/// the compiler reads beside it).
struct Reader<'a> {
    dir: PathBuf,
    games: Option<&'a [PathBuf]>,
}

impl Reader<'_> {
    /// `rel`'s bytes, if it lies inside the run folder (links resolved) and is a regular file
    /// (no pipe or device, which could block or never end) of at most [`MAX_READ`] bytes.
    fn bytes(&self, rel: &Path) -> Option<Vec<u8>> {
        use std::io::Read;
        let p = self.dir.join(rel).canonicalize().ok()?;
        if !p.starts_with(&self.dir) || !std::fs::metadata(&p).ok()?.is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        std::fs::File::open(p).ok()?.take(MAX_READ + 1).read_to_end(&mut bytes).ok()?;
        (bytes.len() as u64 <= MAX_READ).then_some(bytes)
    }

    /// `rel`'s text, as [`Reader::bytes`] reads it, if it is UTF-8.
    fn read(&self, rel: &Path) -> Option<String> {
        String::from_utf8(self.bytes(rel)?).ok()
    }

    /// The game file `named` (as a replay or game.txt names it), found from `near`, if it lies
    /// under the roots games may be read from.
    fn game(&self, named: &Path, near: &Path) -> Result<PathBuf> {
        let found = super::replay::find_game(named, near)
            .and_then(|p| p.canonicalize().ok())
            .ok_or_else(|| anyhow::anyhow!("the game {} was not found (from here or above {})", named.display(), near.display()))?;
        match self.games {
            Some(roots) if !roots.iter().any(|r| found.starts_with(r)) => {
                anyhow::bail!("the game {} lies outside the folders this server reads", named.display())
            }
            _ => Ok(found),
        }
    }

    /// `rep` played again into frames, its game found and confined first.
    fn frames(&self, rep: &Replay, near: &Path, title: &str) -> Result<super::replay::Frames> {
        let game = self.game(&rep.game, near)?;
        super::replay::frames(&Replay { game, ..rep.clone() }, near, title)
    }
}

/// Writes `dir/report.html` (atomically) and returns its path.
pub fn write(dir: &Path) -> Result<PathBuf> {
    let page = render(dir)?;
    let out = dir.join("report.html");
    crate::report::write_atomic(&out, page.as_bytes()).with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}

/// Every file under `dir` (relative paths, sorted), down to [`MAX_DEPTH`], leaving out our own
/// bookkeeping (`.playforge`, `.lock`, temporary files, `executor.txt`) and the report itself,
/// so that a run on Ray reports what the same run here does.
fn files(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, rel: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(root.join(rel)) else { return };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().to_string();
            // `executor.txt` says where the games ran (a Ray run writes it): not what they computed.
            if name.starts_with('.') || name.contains(".tmp") || (depth == 0 && (name == "report.html" || name == "executor.txt")) {
                continue;
            }
            let r = rel.join(&name);
            match e.file_type() {
                Ok(t) if t.is_dir() && depth < MAX_DEPTH => walk(root, &r, depth + 1, out),
                Ok(t) if t.is_file() => out.push(r),
                _ => {}
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, Path::new(""), 0, &mut v);
    v
}

fn ext(p: &Path) -> &str {
    p.extension().and_then(|e| e.to_str()).unwrap_or("")
}

fn name(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// Standard base64 (for a PNG chart without an SVG twin).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// The content's start, drawn: a content file (`best_encounter.toml`, a generated `best.toml`,
/// read by [`Content`]) names a game and every parameter.
fn content_board(reader: &Reader, path: &Path, text: &str) -> Option<String> {
    let c = Content::parse(path, text).ok()?;
    let rep = Replay {
        game: c.game,
        turn_order: c.turn_order,
        params: c.values,
        players: Vec::new(),
        moves: Vec::new(),
        result: String::new(),
        chance_seed: 0,
        overlays: Vec::new(),
    };
    let f = reader.frames(&rep, &reader.dir, "the content's start").ok()?;
    f.svgs.into_iter().next()
}

/// One recorded game as the viewer reads it.
fn viewer_entry(p: &Path, f: super::replay::Frames) -> serde_json::Value {
    serde_json::json!({
        "title": format!("{} ({})", name(p), f.players.join(" vs ")),
        "moves": f.moves, "svgs": f.svgs, "result": f.result, "note": f.note,
    })
}

/// The viewer's script: a replay chosen from a list, stepped by buttons, a slider, the move list
/// or the arrow keys; frames come from the page's own JSON block.
const VIEWER_JS: &str = r#"
(function(){
 const el=document.getElementById('replay-data'); if(!el) return;
 const reps=JSON.parse(el.textContent); let r=0,k=0,timer=null;
 const sel=document.getElementById('rp-pick'), board=document.getElementById('rp-board'),
   slider=document.getElementById('rp-slider'), info=document.getElementById('rp-info'), list=document.getElementById('rp-moves');
 reps.forEach((x,i)=>{const o=document.createElement('option');o.value=i;o.textContent=x.title;sel.appendChild(o);});
 function load(i){r=i;k=0;slider.max=reps[r].svgs.length-1;list.innerHTML='';
   const d0=document.createElement('div');d0.textContent='start';d0.onclick=()=>show(0);list.appendChild(d0);
   reps[r].moves.forEach((m,j)=>{const d=document.createElement('div');d.textContent=(j+1)+'. '+m;d.onclick=()=>show(j+1);list.appendChild(d);});
   show(0);}
 function show(j){const x=reps[r];k=Math.max(0,Math.min(j,x.svgs.length-1));board.innerHTML=x.svgs[k];slider.value=k;
   info.textContent='move '+k+' of '+(x.svgs.length-1)+(x.result?' — result: '+x.result:'')+(x.note?' ('+x.note+')':'');
   [...list.children].forEach((c,i)=>c.className=i==k?'on':''); const on=list.children[k]; if(on) on.scrollIntoView({block:'nearest'});}
 sel.onchange=()=>load(+sel.value); slider.oninput=()=>show(+slider.value);
 document.getElementById('rp-first').onclick=()=>show(0);
 document.getElementById('rp-prev').onclick=()=>show(k-1);
 document.getElementById('rp-next').onclick=()=>show(k+1);
 document.getElementById('rp-last').onclick=()=>show(1e9);
 document.getElementById('rp-play').onclick=()=>{if(timer){clearInterval(timer);timer=null;return;}
   timer=setInterval(()=>{if(k>=reps[r].svgs.length-1){clearInterval(timer);timer=null;}else show(k+1);},400);};
 document.addEventListener('keydown',e=>{if(e.target.tagName==='INPUT'&&e.target.type!=='range')return;
   if(e.key==='ArrowRight'){show(k+1);e.preventDefault();} if(e.key==='ArrowLeft'){show(k-1);e.preventDefault();}});
 load(0);
})();
"#;

/// The page for the run folder `dir` (its games read from wherever its outputs name them).
pub fn render(dir: &Path) -> Result<String> {
    render_with(dir, None)
}

/// The page for the run folder `dir`, reading games only under `games` (a server's folders).
pub fn render_confined(dir: &Path, games: &[PathBuf]) -> Result<String> {
    render_with(dir, Some(games))
}

fn render_with(dir: &Path, games: Option<&[PathBuf]>) -> Result<String> {
    let not_a_run = || {
        anyhow::anyhow!(
            "{}: not a folder; expected a run folder (one a playforge command wrote, such as outputs/<name>/seed-1)",
            dir.display()
        )
    };
    if !dir.is_dir() {
        return Err(not_a_run());
    }
    let reader = Reader { dir: dir.canonicalize().map_err(|_| not_a_run())?, games };
    let all = files(dir);
    let mut body = String::new();
    let mut nav: Vec<(String, String)> = Vec::new();
    let mut add = |body: &mut String, id: &str, title: &str, inner: String| {
        if !inner.is_empty() {
            body.push_str(&section(id, title, &inner));
            nav.push((id.to_string(), title.to_string()));
        }
    };

    // What the run found: its Markdown reports, top level first.
    let mut found = match unfinished(&reader) {
        Some(why) => format!("<p class=\"err\" id=\"unfinished\"><b>Unfinished.</b> {}</p>\n", html::inline(&why)),
        None => String::new(),
    };
    let mut mds: Vec<&PathBuf> = all.iter().filter(|p| ext(p) == "md").collect();
    mds.sort_by_key(|p| (p.components().count(), p.to_path_buf()));
    for p in &mds {
        if let Some(t) = reader.read(p) {
            found.push_str(&format!("<h3>{}</h3>\n{}", escape(&name(p)), markdown(&t)));
        }
    }
    for p in all.iter().filter(|p| p.file_name().is_some_and(|n| n == "report.json")) {
        if let Some(t) = reader.read(p) {
            found.push_str(&format!("<h3>{}</h3><pre>{}</pre>\n", escape(&name(p)), escape(&t)));
        }
    }
    add(&mut body, "found", "What the run found", found);

    // Charts: each SVG inline as rebuilt from the allow-list; a PNG without an SVG twin as data.
    let mut charts = String::new();
    for p in all.iter().filter(|p| ext(p) == "svg") {
        if let Some(t) = reader.read(p) {
            match super::sanitize::svg(&t) {
                Some(svg) => charts.push_str(&format!("<h3>{}</h3><div class=\"chart\">{svg}</div>\n", escape(&name(p)))),
                None => charts.push_str(&format!("<p class=\"err\">{}: not drawn (not plain SVG markup)</p>\n", escape(&name(p)))),
            }
        }
    }
    for p in all.iter().filter(|p| ext(p) == "png" && !all.contains(&p.with_extension("svg"))) {
        if let Some(bytes) = reader.bytes(p) {
            charts.push_str(&format!(
                "<h3>{}</h3><div class=\"chart\"><img alt=\"{}\" src=\"data:image/png;base64,{}\"></div>\n",
                escape(&name(p)),
                escape(&name(p)),
                base64(&bytes)
            ));
        }
    }
    add(&mut body, "charts", "Charts", charts);

    // The best content.
    let mut best = String::new();
    for p in all.iter().filter(|p| {
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        matches!(n, "best_encounter.toml" | "best.toml" | "best_dna.txt" | "best_formula.txt")
    }) {
        if let Some(t) = reader.read(p) {
            best.push_str(&format!("<h3>{}</h3>", escape(&name(p))));
            let board = if ext(p) == "toml" { content_board(&reader, &reader.dir.join(p), &t) } else { None };
            match board {
                Some(svg) => {
                    best.push_str(&format!("<div class=\"row\"><pre>{}</pre><div class=\"board\">{svg}</div></div>\n", escape(&t)))
                }
                None => best.push_str(&format!("<pre>{}</pre>\n", escape(&t))),
            }
        }
    }
    let elites: Vec<&PathBuf> = all.iter().filter(|p| p.starts_with("elites") && ext(p) == "toml").collect();
    if !elites.is_empty() {
        best.push_str(&format!("<details><summary>{} elites (elites/*.toml)</summary>", elites.len()));
        for p in elites.iter().take(40) {
            if let Some(t) = reader.read(p) {
                best.push_str(&format!("<h3>{}</h3><pre>{}</pre>", escape(&name(p)), escape(&t)));
            }
        }
        best.push_str("</details>\n");
    }
    add(&mut body, "best", "Best content", best);

    // Recorded games.
    let mut reps = Vec::new();
    let mut rep_notes = String::new();
    for p in all.iter().filter(|p| p.starts_with("replays") && ext(p) == "json").take(MAX_REPLAYS) {
        let Some(t) = reader.read(p) else { continue };
        let made = serde_json::from_str::<Replay>(&t)
            .map_err(anyhow::Error::from)
            .and_then(|rep| reader.frames(&rep, dir.join(p).parent().unwrap_or(dir), &name(p)));
        match made {
            Ok(f) => reps.push(viewer_entry(p, f)),
            Err(e) => rep_notes.push_str(&format!("<p class=\"err\">{}: {}</p>\n", escape(&name(p)), escape(&format!("{e:#}")))),
        }
    }
    // GDL match records (`gdl-match`, `ggp match`): the game named in game.txt, the first few.
    if let Some(game) = reader.read(Path::new("game.txt")).map(|t| PathBuf::from(t.trim())) {
        let mut records: Vec<(u64, &PathBuf)> = all
            .iter()
            .filter_map(|p| {
                let file = p.file_name()?.to_str()?;
                // gdl-match's match-N.moves, ggp match's match.moves.
                let n = if file == "match.moves" { 0 } else { file.strip_prefix("match-")?.strip_suffix(".moves")?.parse().ok()? };
                Some((n, p))
            })
            .collect();
        records.sort();
        let found = reader.game(&game, dir);
        for (_, p) in records.into_iter().take(MAX_REPLAYS) {
            let made = match (&found, reader.read(p)) {
                (Ok(g), Some(t)) => super::replay::gdl_frames(g, &t, &name(p)),
                (Err(e), _) => Err(anyhow::anyhow!("game.txt: {e:#}")),
                (_, None) => continue,
            };
            match made {
                Ok(f) => reps.push(viewer_entry(p, f)),
                Err(e) => rep_notes.push_str(&format!("<p class=\"err\">{}: {}</p>\n", escape(&name(p)), escape(&format!("{e:#}")))),
            }
        }
    }
    let n_replays = all.iter().filter(|p| p.starts_with("replays") && ext(p) == "json").count();
    let mut script = String::new();
    if !reps.is_empty() || !rep_notes.is_empty() {
        let mut inner = rep_notes;
        if !reps.is_empty() {
            inner.push_str(
                "<p><select id=\"rp-pick\"></select> <button id=\"rp-first\">« first</button><button id=\"rp-prev\">‹ back</button>\
<button id=\"rp-play\">play</button><button id=\"rp-next\">next ›</button><button id=\"rp-last\">last »</button> \
<input id=\"rp-slider\" type=\"range\" min=\"0\" value=\"0\" style=\"width:320px\"> <span id=\"rp-info\" class=\"muted\"></span></p>\
<p class=\"muted\">Arrow keys step; click a move to jump.</p>\
<div class=\"row\"><div id=\"rp-moves\" class=\"moves\"></div><div id=\"rp-board\" class=\"board\"></div></div>\n",
            );
            inner.push_str(&format!(
                "<script type=\"application/json\" id=\"replay-data\">{}</script>\n",
                html::script_json(&serde_json::Value::Array(reps))
            ));
            script.push_str(VIEWER_JS);
        }
        if n_replays > MAX_REPLAYS {
            inner.push_str(&format!("<p class=\"muted\">{MAX_REPLAYS} of {n_replays} replays drawn; the others are in replays/.</p>"));
        }
        add(&mut body, "replays", "Replays", inner);
    }

    // Tables.
    let mut tables = String::new();
    // timing.csv holds the wall clock: listed under Files, never read, so that the page is the
    // same on every rerun and resume of the same run.
    let csvs: Vec<&PathBuf> = all.iter().filter(|p| ext(p) == "csv" && !p.ends_with("timing.csv")).collect();
    for (i, p) in csvs.iter().enumerate() {
        if i >= MAX_TABLES {
            tables.push_str(&format!("<p class=\"muted\">{} more CSV files are listed under Files.</p>", csvs.len() - MAX_TABLES));
            break;
        }
        if let Some(t) = reader.read(p) {
            let rows = html::csv_rows(&t);
            let open = if i < 2 { " open" } else { "" };
            tables.push_str(&format!(
                "<details{open}><summary>{} ({} rows)</summary>{}</details>\n",
                escape(&name(p)),
                rows.len().saturating_sub(1),
                html::table(&rows, TABLE_ROWS)
            ));
        }
    }
    add(&mut body, "tables", "Tables", tables);

    // The config and every file.
    if let Some(t) = reader.read(Path::new("config.toml")) {
        add(&mut body, "config", "Config", format!("<pre>{}</pre>\n", escape(&t)));
    }
    let list: String =
        all.iter().map(|p| format!("<div><a href=\"./{}\">{}</a></div>", html::url_path(&name(p)), escape(&name(p)))).collect();
    add(&mut body, "files", "Files", list);

    let title =
        format!("playforge report — {}", dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().to_string()));
    let parent = dir.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let sub = format!(
        "{}{} · written by playforge {} · a self-contained page: open it from disk, nothing is fetched",
        escape(&parent),
        if parent.is_empty() {
            String::new()
        } else {
            format!("/{}", escape(&dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()))
        },
        env!("CARGO_PKG_VERSION")
    );
    Ok(html::page(&title, &sub, &nav, &body, &script))
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
    }
}
