//! Shared pieces of the TOML configs: counts read within a range (with the value's line and
//! column when out of it), TOML errors rendered as `file:line:column: message` with the
//! offending line (the same shape as a game's errors), keys located for checks made after
//! parsing, paths resolved against the config file, the run names that become output folders
//! ([`FolderName`]), and the `[cma]` table balance and generate share ([`CmaConfig`]).

use std::path::{Path, PathBuf};

/// Counts in configs (games, iterations, threads, replays, budgets): read as a whole number in
/// `LO..=HI`, else a deserialization error, which the TOML reader reports with the value's line
/// and column. Use as `#[serde(deserialize_with = "crate::config::count::<_, _, 1, 1000>")]`.
pub fn count<'de, D, T, const LO: u64, const HI: u64>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Copy + TryInto<u64>,
{
    use serde::de::Error;
    let v = T::deserialize(d)?;
    match v.try_into() {
        Ok(x) if (LO..=HI).contains(&x) => Ok(v),
        Ok(x) => Err(D::Error::custom(format!("{x} is out of range; expected a whole number from {LO} to {HI}"))),
        Err(_) => Err(D::Error::custom(format!("expected a whole number from {LO} to {HI}"))),
    }
}

/// [`count`] for an optional field (also give it `#[serde(default)]`). An explicit null (JSON,
/// as a job's context carries a config) is `None`.
pub fn opt_count<'de, D, T, const LO: u64, const HI: u64>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Copy + TryInto<u64>,
{
    use serde::de::Error;
    match <Option<T> as serde::Deserialize>::deserialize(d)? {
        None => Ok(None),
        Some(v) => match v.try_into() {
            Ok(x) if (LO..=HI).contains(&x) => Ok(Some(v)),
            Ok(x) => Err(D::Error::custom(format!("{x} is out of range; expected a whole number from {LO} to {HI}"))),
            Err(_) => Err(D::Error::custom(format!("expected a whole number from {LO} to {HI}"))),
        },
    }
}

/// Reads TOML text into `T`; an error names `name:line:column` (of the offending key or value)
/// first, then what was expected, then the line with a caret — the same shape as a game's
/// errors.
///
/// A float that is not finite (`nan`, `inf`, `-inf`) is refused wherever it stands (no key of any
/// config means "infinitely many" or "not a number"), and so is a string longer than
/// [`MAX_CONFIG_STRING`] bytes.
pub fn toml<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T, String> {
    let value = toml::from_str(text).map_err(|e| toml_error(name, text, &e))?;
    if let Some((span, message)) = bad_value(text) {
        return Err(located(name, text, span, &message));
    }
    Ok(value)
}

/// The longest string value a config may hold: 64 KiB, room for a pasted evolved formula (511
/// terms at GP's default height, long constants: about 10 KB) or a long target expression; the
/// shipped configs' longest is 98 bytes. Messages quote a clipped window of any value.
pub const MAX_CONFIG_STRING: usize = 64 * 1024;

/// The first value of `text` (TOML that parsed) that no config accepts, a float that is `nan`
/// or infinite or a string past [`MAX_CONFIG_STRING`]: its byte span and what is wrong. The
/// values are walked with a stack of their own, not recursion.
fn bad_value(text: &str) -> Option<(std::ops::Range<usize>, String)> {
    use toml::de::{DeTable, DeValue};
    let table = DeTable::parse(text).ok()?;
    let mut stack: Vec<&toml::Spanned<DeValue<'_>>> = table.get_ref().values().collect();
    let mut found: Option<(std::ops::Range<usize>, String)> = None;
    let mut keep = |span: std::ops::Range<usize>, message: String| {
        if found.as_ref().is_none_or(|(s, _)| span.start < s.start) {
            found = Some((span, message));
        }
    };
    while let Some(v) = stack.pop() {
        match v.get_ref() {
            DeValue::Float(f) if !f.as_str().parse::<f64>().is_ok_and(f64::is_finite) => {
                keep(v.span(), format!("{} is not a finite number; expected a finite number", clip_value(f.as_str())));
            }
            DeValue::String(t) if t.len() > MAX_CONFIG_STRING => {
                let start: String = t.chars().take(40).collect();
                keep(v.span(), format!("a string of {} bytes (starting {start:?}); expected at most {MAX_CONFIG_STRING} bytes", t.len()))
            }
            DeValue::Array(a) => stack.extend(a.iter()),
            DeValue::Table(t) => stack.extend(t.values()),
            _ => {}
        }
    }
    found
}

/// A TOML error rendered as `name:line:column: message` with the offending line.
pub fn toml_error(name: &str, text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(span) = e.span() else { return format!("{name}: {}", clip_message(message)) };
    located(name, text, span, message)
}

/// `name:line:column: message` for the byte span `span` of `text`, then the line with a caret.
/// A message longer than [`SHOWN_VALUE`] characters (one that quotes a long value) is cut in
/// the middle, so that what was expected, at its end, is kept.
fn located(name: &str, text: &str, span: std::ops::Range<usize>, message: &str) -> String {
    let message = clip_message(message);
    let file = crate::wgdl::SourceFile::new(name, text);
    let (line, col) = file.line_col(span.start as u32);
    let rendered = crate::wgdl::diag::render(&file, crate::wgdl::Span::new(span.start, span.end.max(span.start + 1)), "error", &message);
    // `render` starts with "error: message\n --> name:line:col"; lead with the location.
    let excerpt: String = rendered.lines().skip(2).collect::<Vec<_>>().join("\n");
    format!("{name}:{line}:{col}: {message}\n{excerpt}")
}

/// The most characters of a value (or of a message quoting one) an error echoes (200); a
/// longer one is cut and its size given (`…(10485760 bytes)`), so that a 10 MB value in a
/// config never comes back whole in a message.
pub const SHOWN_VALUE: usize = 200;

/// A number as a message shows it: in scientific notation when it is very large or very small
/// (`1e308`, not its 309 digits).
pub fn show_number(x: f64) -> String {
    if x.is_finite() && x != 0.0 && (x.abs() >= 1e15 || x.abs() < 1e-6) { format!("{x:e}") } else { format!("{x}") }
}

/// A message of more than [`SHOWN_VALUE`] characters cut in the middle: its start, `…(N bytes
/// cut)…` and its last 80 characters (where a TOML message says what it expected).
pub fn clip_message(text: &str) -> String {
    let n = text.chars().count();
    if n <= SHOWN_VALUE {
        return text.to_string();
    }
    let head = text.char_indices().nth(SHOWN_VALUE - 80).map_or(text.len(), |(i, _)| i);
    let tail = text.char_indices().nth(n - 80).map_or(text.len(), |(i, _)| i);
    format!("{}…({} bytes cut)…{}", &text[..head], tail - head, &text[tail..])
}

/// `text` cut to [`SHOWN_VALUE`] characters, with `…(N bytes)` where it was cut.
pub fn clip_value(text: &str) -> String {
    match text.char_indices().nth(SHOWN_VALUE) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…({} bytes)", &text[..at], text.len()),
    }
}

/// A path written in a config, resolved against the config file's folder (so a config works
/// from any working directory). An older config whose path only holds from the working
/// directory still works, with a warning naming the fix.
pub fn resolve_path(config_path: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let dir = config_path.parent().unwrap_or(Path::new(""));
    let beside = dir.join(p);
    if beside.exists() || dir.as_os_str().is_empty() {
        return beside;
    }
    if p.exists() {
        eprintln!(
            "warning: {}: `{}` is not beside the config; it was found from the working directory. Paths in a config are relative to the config file: write `{}`",
            config_path.display(),
            p.display(),
            relative_from(dir, p).display()
        );
        return p.to_path_buf();
    }
    beside
}

/// `p` (relative to the working directory) written relative to `dir` (also relative to it).
fn relative_from(dir: &Path, p: &Path) -> PathBuf {
    let ups = dir.components().filter(|c| matches!(c, std::path::Component::Normal(_))).count();
    let mut out = PathBuf::new();
    for _ in 0..ups {
        out.push("..");
    }
    out.join(p)
}

/// Merges `over` into `base`, recursively for tables (an experiment condition's overrides).
pub fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Rewrites `[section] game` of a config read as a table from `config_path` so that it holds
/// from the working directory (a base config merged into another keeps its own game).
pub fn anchor_game(table: &mut toml::Table, section: &str, config_path: &Path) {
    if let Some(toml::Value::Table(t)) = table.get_mut(section)
        && let Some(toml::Value::String(g)) = t.get("game")
    {
        let p = resolve_path(config_path, Path::new(g));
        t.insert("game".into(), toml::Value::String(p.display().to_string()));
    }
}

/// `file:line:column` of `key` in table `table` (its `nth` occurrence for arrays of tables;
/// `""` is the top level), for messages about values that parsed but make no sense.
pub fn locate(path: &Path, text: &str, table: &str, nth: usize, key: &str) -> String {
    let mut seen: usize = 0;
    let mut in_target = table.is_empty();
    // The key inside an inline table of the target (`parameters = { rooms = 12 }`), if no line
    // of the table starts with it.
    let mut inline: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        // A header is `[name]` or `[[name]]` on its own; `["a", "b"],` inside a value is not.
        let bare = t.split('#').next().unwrap_or("").trim_end();
        let header = bare.starts_with('[') && bare.ends_with(']') && !bare.contains(',') && !bare.contains('=');
        if let Some(h) = t.strip_prefix('[').filter(|_| header) {
            let array = h.starts_with('[');
            let name = h.trim_start_matches('[').split(']').next().unwrap_or("").trim().to_string();
            in_target = name == table && {
                if array {
                    seen += 1;
                    seen == nth + 1
                } else {
                    true
                }
            };
            if key.is_empty() && in_target {
                return format!("{}:{}:1", path.display(), i + 1);
            }
            continue;
        }
        if in_target {
            let k = t.split('=').next().unwrap_or("").trim().trim_matches(['"', '\'']);
            if t.contains('=') && k == key {
                let col = line.len() - t.len() + 1;
                return format!("{}:{}:{}", path.display(), i + 1, col);
            }
            if inline.is_none() && !key.is_empty() && line.contains('{') {
                let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
                inline = line
                    .match_indices(key)
                    .find(|&(at, _)| {
                        !line[..at].ends_with(word) && line[at + key.len()..].trim_start().starts_with('=') && line[..at].contains('{')
                    })
                    .map(|(at, _)| format!("{}:{}:{}", path.display(), i + 1, line[..at].chars().count() + 1));
            }
        }
    }
    inline.unwrap_or_else(|| format!("{} ([{table}] {key})", path.display()))
}

/// A name that becomes a folder under the output folder (`outputs/<name>/`): not empty, no
/// path separator, not starting with `.` (so no `..`), no control character, at most 100
/// bytes. Checked as the config is read, so the error carries the config's line and column;
/// a name can never write outside the output folder.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct FolderName(String);

impl FolderName {
    /// The name when it is a valid folder name, else what is wrong with it.
    pub fn new(s: &str) -> Result<FolderName, String> {
        if s.is_empty() || s.len() > 100 || s.contains(['/', '\\']) || s.starts_with('.') || s.chars().any(char::is_control) {
            return Err(format!(
                "name {}; expected a folder name for the outputs: 1 to 100 characters, no `/` or `\\`, not starting with `.`",
                clip_value(&format!("{s:?}"))
            ));
        }
        Ok(FolderName(s.to_string()))
    }
}

impl<'de> serde::Deserialize<'de> for FolderName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        FolderName::new(&s).map_err(serde::de::Error::custom)
    }
}

impl std::ops::Deref for FolderName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<Path> for FolderName {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl std::fmt::Display for FolderName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `[cma]`: (separable) CMA-ES's settings, the same table in balance and generate configs.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CmaConfig {
    /// Samples per generation (default 4 + ⌊3 ln n⌋).
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 2, 100_000>")]
    pub lambda: Option<usize>,
    /// Initial step size in gene units.
    #[serde(default = "sigma0")]
    pub sigma0: f64,
    /// Restart (from a random point, or for an emitter from an elite) when σ falls below this.
    #[serde(default = "sigma_min")]
    pub sigma_min: f64,
}

fn sigma0() -> f64 {
    0.2
}
fn sigma_min() -> f64 {
    0.005
}

impl Default for CmaConfig {
    fn default() -> Self {
        toml::from_str("").expect("every cma key has a default")
    }
}

impl CmaConfig {
    /// The checks serde cannot make: 0 < sigma0 ≤ 1 and 0 ≤ sigma_min < sigma0; `at` locates a
    /// key of the `[cma]` table.
    pub fn check(&self, at: &dyn Fn(&str) -> String) -> Result<(), String> {
        if !(self.sigma0 > 0.0 && self.sigma0 <= 1.0) {
            return Err(format!("{}: sigma0 = {}; expected 0 < sigma0 ≤ 1", at("sigma0"), self.sigma0));
        }
        if !(self.sigma_min >= 0.0 && self.sigma_min < self.sigma0) {
            return Err(format!("{}: sigma_min = {}; expected 0 ≤ sigma_min < sigma0 ({})", at("sigma_min"), self.sigma_min, self.sigma0));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::locate;
    use std::path::Path;

    #[test]
    fn locate_finds_a_key_at_its_line_or_inside_an_inline_table() {
        let text = "[a]\nx = 1\n\n[[v]]\nname = \"p\"\n\n[[v]]\nname = \"q\"\nparameters = { rooms = 12, hp = 3 }\n";
        let p = Path::new("c.toml");
        assert_eq!(locate(p, text, "a", 0, "x"), "c.toml:2:1");
        assert_eq!(locate(p, text, "v", 1, "name"), "c.toml:8:1");
        assert_eq!(locate(p, text, "v", 1, "hp"), "c.toml:9:28");
        assert_eq!(locate(p, text, "v", 1, "rooms"), "c.toml:9:16");
        // Not in the first [[v]], and not a key at all: the table and key instead.
        assert_eq!(locate(p, text, "v", 0, "rooms"), "c.toml ([v] rooms)");
        assert_eq!(locate(p, text, "v", 1, "oom"), "c.toml ([v] oom)");
    }
}
