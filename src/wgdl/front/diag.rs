//! Diagnostics as data: every problem found while reading a game is a [`Diagnostic`] — a
//! [`Span`] plus a structured [`DiagKind`] — and the front end never stops at the first one.
//!
//! Passes push diagnostics into a `Vec`; one renderer at the edge ([`render`]) prints
//! `file:line:column`, the offending line, a caret under the span and what was expected. Tests
//! match on the kind, not on the wording. Runtime errors ([`crate::wgdl::RuntimeError`]) carry a span
//! too and are rendered by the same function.

use std::fmt;

/// A byte range in one source file. `lo..hi`, half-open; `hi == lo` marks a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(lo: usize, hi: usize) -> Span {
        Span { lo: lo as u32, hi: hi as u32 }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }
}

/// A source text with its name, able to turn byte offsets into line and column.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile { name: name.into(), text, line_starts }
    }

    /// 1-based line and column (column counted in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = (offset as usize).min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.text[start..offset].chars().count() + 1;
        (line + 1, col)
    }

    /// The text of a 1-based line without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1];
        let end = self.line_starts.get(line).map_or(self.text.len(), |&e| e - 1);
        self.text[start..end].trim_end_matches('\r')
    }

    pub fn slice(&self, span: Span) -> &str {
        &self.text[span.lo as usize..(span.hi as usize).min(self.text.len())]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem in a game description.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub span: Span,
    pub severity: Severity,
    pub kind: DiagKind,
}

impl Diagnostic {
    pub fn error(span: Span, kind: DiagKind) -> Diagnostic {
        Diagnostic { span, severity: Severity::Error, kind }
    }
    pub fn warning(span: Span, kind: DiagKind) -> Diagnostic {
        Diagnostic { span, severity: Severity::Warning, kind }
    }
}

/// What went wrong. Each variant names the fields a test or a tool may want to inspect; the
/// `Display` text always ends with what was expected instead.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum DiagKind {
    #[error("unexpected character `{found}`; expected a name, a number, an operator or a comment")]
    BadCharacter { found: char },
    #[error("unterminated block comment; expected `*/` before the end of the file")]
    UnterminatedComment,
    #[error("unterminated string; expected a closing `\"` on the same line")]
    UnterminatedString,
    #[error("unknown declaration `{found}`; expected one of: {expected}")]
    UnknownDeclaration { found: String, expected: &'static str },
    #[error("unexpected {found}; expected {expected}")]
    Unexpected { found: String, expected: String },
    #[error("bad {ty} literal `{text}`; expected {expected}")]
    BadLiteral { ty: &'static str, text: String, expected: &'static str },
    #[error("unknown {what} `{name}`; expected {expected}")]
    UnknownName { what: &'static str, name: String, expected: String },
    #[error("{what} `{name}` is declared twice (first at line {first_line}); expected it declared once")]
    Duplicate { what: &'static str, name: String, first_line: usize },
    #[error("type mismatch: expected {expected}, found {found}")]
    TypeMismatch { expected: String, found: String },
    #[error("wrong number of arguments to `{what}`: expected {expected}, found {found}")]
    WrongArity { what: String, expected: String, found: usize },
    #[error("class inheritance is cyclic: {cycle}; expected a single-parent tree")]
    CyclicInheritance { cycle: String },
    #[error("class `{class}` has no attribute `{attr}`; expected one of: {known}")]
    UnknownAttribute { class: String, attr: String, known: String },
    #[error("`{attr}` is a class constant of `{class}` and cannot be assigned; expected an instance attribute")]
    AssignToConstant { class: String, attr: String },
    #[error("{what}; expected {expected}")]
    Invalid { what: String, expected: String },
    #[error("consequence `{name}` is part of a cycle ({cycle}); expected conditional/timed targets that end")]
    ConsequenceCycle { name: String, cycle: String },
    #[error("this condition can never hold: {why}")]
    NeverHolds { why: String },
    #[error("goal {k} is unreachable: {why}")]
    UnreachableGoal { k: u32, why: String },
    #[error("{0}")]
    Lint(String),
}

/// The most errors, and separately the most warnings, one file keeps and shows (100 each): the
/// first ones each stage finds (the lexer's, then the parser's, then each pass's, in that order)
/// are shown and the rest only counted (`… and 19900 more errors`). Each
/// stage stops keeping (and stops building the text of) diagnostics past it, so a file of
/// 16 MiB of bad characters or unknown names costs time and memory linear in its size.
pub const MAX_SHOWN: usize = 100;

/// Counts the diagnostics one file keeps, so that each stage keeps at most [`MAX_SHOWN`] errors
/// and [`MAX_SHOWN`] warnings and only counts the rest (each counted once).
#[derive(Debug, Default)]
pub struct Cap {
    errors: usize,
    warnings: usize,
    /// Errors and warnings found past the limit, counted but not kept.
    pub hidden_errors: usize,
    pub hidden_warnings: usize,
    /// Hashes of the diagnostics pushed with `dedup`, so that a problem found twice is kept or
    /// counted once.
    seen: std::collections::HashSet<u64>,
}

impl Cap {
    /// A cap that starts from what `diags` already holds.
    pub fn after(diags: &[Diagnostic]) -> Cap {
        let mut cap = Cap::default();
        cap.sync(diags);
        cap
    }

    /// Recounts what `diags` holds (after a stage that pushed without the cap).
    pub fn sync(&mut self, diags: &[Diagnostic]) {
        self.errors = diags.iter().filter(|d| d.severity == Severity::Error).count();
        self.warnings = diags.len() - self.errors;
    }

    /// Whether no more diagnostics of this severity are kept (their text need not be built).
    pub fn full(&self, severity: Severity) -> bool {
        match severity {
            Severity::Error => self.errors >= MAX_SHOWN,
            Severity::Warning => self.warnings >= MAX_SHOWN,
        }
    }

    /// Keeps `d` in `diags`, or counts it if its severity's limit is reached. With `dedup`, a
    /// diagnostic equal to one already kept or counted is dropped (a hash of each is kept, so
    /// the check costs no pass over `diags` unless the hashes match).
    pub fn push(&mut self, diags: &mut Vec<Diagnostic>, d: Diagnostic, dedup: bool) {
        let full = self.full(d.severity);
        if dedup {
            use std::hash::{BuildHasher, BuildHasherDefault};
            let h = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(&d);
            let new = self.seen.insert(h);
            // A kept diagnostic is compared exactly; a counted one by its hash alone.
            if !new && (full || diags.contains(&d)) {
                return;
            }
        }
        let (kept, hidden) = match d.severity {
            Severity::Error => (&mut self.errors, &mut self.hidden_errors),
            Severity::Warning => (&mut self.warnings, &mut self.hidden_warnings),
        };
        if full {
            *hidden += 1;
        } else {
            *kept += 1;
            diags.push(d);
        }
    }
}

/// The whole outcome of reading a game: errors and warnings, with the source to render them.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    pub file: SourceFile,
    /// The diagnostics kept, at most [`MAX_SHOWN`] errors and [`MAX_SHOWN`] warnings, in the
    /// order of the file.
    pub items: Vec<Diagnostic>,
    /// Errors found past [`MAX_SHOWN`]: counted, not kept.
    pub hidden_errors: usize,
    /// Warnings found past [`MAX_SHOWN`]: counted, not kept.
    pub hidden_warnings: usize,
}

impl Diagnostics {
    /// The diagnostics of `file`, sorted by position; past [`MAX_SHOWN`] of a severity, the
    /// later ones in the file are counted instead of kept (with the ones `cap` counted already).
    pub fn new(file: SourceFile, mut items: Vec<Diagnostic>, cap: &Cap) -> Diagnostics {
        items.sort_by_key(|d| (d.span.lo, d.span.hi));
        let (mut errors, mut warnings) = (0, 0);
        let (mut hidden_errors, mut hidden_warnings) = (cap.hidden_errors, cap.hidden_warnings);
        items.retain(|d| {
            let (kept, hidden) = match d.severity {
                Severity::Error => (&mut errors, &mut hidden_errors),
                Severity::Warning => (&mut warnings, &mut hidden_warnings),
            };
            if *kept < MAX_SHOWN {
                *kept += 1;
                true
            } else {
                *hidden += 1;
                false
            }
        });
        Diagnostics { file, items, hidden_errors, hidden_warnings }
    }

    pub fn has_errors(&self) -> bool {
        self.hidden_errors > 0 || self.items.iter().any(|d| d.severity == Severity::Error)
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Error)
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Warning)
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.items {
            let sev = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            f.write_str(&render(&self.file, d.span, sev, &d.kind.to_string()))?;
        }
        let (hidden_e, hidden_w) = (self.hidden_errors, self.hidden_warnings);
        if hidden_e + hidden_w > 0 {
            let mut more = Vec::new();
            if hidden_e > 0 {
                more.push(format!("{hidden_e} more error(s)"));
            }
            if hidden_w > 0 {
                more.push(format!("{hidden_w} more warning(s)"));
            }
            writeln!(f, "… and {} not shown (the first {MAX_SHOWN} of each kind are)", more.join(" and "))?;
        }
        let n_err = self.errors().count() + hidden_e;
        if n_err > 0 {
            writeln!(f, "{}: {} error(s), {} warning(s)", self.file.name, n_err, self.warnings().count() + hidden_w)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Renders one message the way every playforge error looks:
///
/// ```text
/// error: unknown class `hous`; expected a declared class (house, building)
///   --> games/x.wgdl:12:8
///    |
/// 12 | object poor is hous
///    |                ^^^^
/// ```
pub fn render(file: &SourceFile, span: Span, severity: &str, message: &str) -> String {
    let (line, col) = file.line_col(span.lo);
    let full = file.line_text(line);
    let gutter = line.to_string().len();
    let mut width = {
        let (end_line, end_col) = file.line_col(span.hi);
        if end_line == line && end_col > col { end_col - col } else { 1 }
    };
    // A long line is shown as a window around the caret, marked with `…` where it is cut.
    let n = full.chars().count();
    let (from, to) = if n <= SHOWN_LINE {
        (0, n)
    } else {
        let from = (col - 1).saturating_sub(SHOWN_LINE / 3);
        (from, (from + SHOWN_LINE).min(n))
    };
    let mut text: String = full.chars().skip(from).take(to - from).collect();
    let mut lead = col - 1 - from;
    if from > 0 {
        text.insert(0, '…');
        lead += 1;
    }
    if to < n {
        text.push('…');
    }
    width = width.min(to.saturating_sub(col - 1).max(1));
    let pad: String = text.chars().take(lead).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    let message = clip(message, SHOWN_MESSAGE);
    format!(
        "{severity}: {message}\n{:gutter$}--> {}:{line}:{col}\n{:gutter$} |\n{line} | {text}\n{:gutter$} | {pad}{}\n",
        "",
        file.name,
        "",
        "",
        "^".repeat(width),
    )
}

/// `text` cut to about `max` characters, with `…` where it was cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

/// The most characters of a source line an error shows (a window around the caret).
const SHOWN_LINE: usize = 240;
/// The most characters of an error message (a message can quote a token).
const SHOWN_MESSAGE: usize = 2000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_and_render() {
        let f = SourceFile::new("t.wgdl", "class a\nobject o is hous\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(20), (2, 13));
        let out = render(&f, Span::new(20, 24), "error", "unknown class");
        assert!(out.contains("t.wgdl:2:13"), "{out}");
        assert!(out.contains("2 | object o is hous"), "{out}");
        assert!(out.contains("^^^^"), "{out}");
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_caret() {
        let line = format!("{}bad{}", "a ".repeat(100_000), " b".repeat(100_000));
        let f = SourceFile::new("t.wgdl", &line);
        let out = render(&f, Span::new(200_000, 200_003), "error", &"m".repeat(10_000));
        assert!(out.len() < 3_000, "{} bytes", out.len());
        assert!(out.contains("t.wgdl:1:200001"), "{out}");
        let shown = out.lines().nth(3).unwrap();
        let caret = out.lines().nth(4).unwrap();
        // The caret stands under `bad` in the window.
        let at = caret.chars().position(|c| c == '^').unwrap();
        assert_eq!(shown.chars().skip(at).take(3).collect::<String>(), "bad", "{out}");
        assert!(shown.contains('…'));
    }
}
