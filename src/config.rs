//! Shared pieces of the TOML configs: counts read within a range (with the value's line and
//! column when out of it) and TOML errors rendered as `file:line:column: message` with the
//! offending line, the same shape as a game's errors.

/// Counts in configs (games, iterations, threads, replays, budgets): read as a whole number in
/// `LO..=HI`, else a deserialization error, which the TOML reader reports with the value's line
/// and column. Use as `#[serde(deserialize_with = "crate::config::count::<_, _, 1, 1000>")]`.
pub fn count<'de, D, T, const LO: u64, const HI: u64>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Copy + TryInto<u64>,
{
    let v = T::deserialize(d)?;
    check_count::<D::Error, LO, HI>(v)?;
    Ok(v)
}

/// [`count`] for an optional field (also give it `#[serde(default)]`).
pub fn opt_count<'de, D, T, const LO: u64, const HI: u64>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Copy + TryInto<u64>,
{
    let v = T::deserialize(d)?;
    check_count::<D::Error, LO, HI>(v)?;
    Ok(Some(v))
}

fn check_count<E: serde::de::Error, const LO: u64, const HI: u64>(v: impl TryInto<u64>) -> Result<(), E> {
    match v.try_into() {
        Ok(x) if (LO..=HI).contains(&x) => Ok(()),
        Ok(x) => Err(E::custom(format!("{x} is out of range; expected a whole number from {LO} to {HI}"))),
        Err(_) => Err(E::custom(format!("expected a whole number from {LO} to {HI}"))),
    }
}

/// Reads TOML text into `T`; an error names `name:line:column` (of the offending key or value)
/// first, then what was expected, then the line with a caret — the same shape as a game's
/// errors.
pub fn toml<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T, String> {
    toml::from_str(text).map_err(|e| toml_error(name, text, &e))
}

/// A TOML error rendered as `name:line:column: message` with the offending line.
pub fn toml_error(name: &str, text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(span) = e.span() else { return format!("{name}: {message}") };
    let file = crate::wgdl::SourceFile::new(name, text);
    let (line, col) = file.line_col(span.start as u32);
    let rendered = crate::wgdl::diag::render(&file, crate::wgdl::Span::new(span.start, span.end.max(span.start + 1)), "error", message);
    // `render` starts with "error: message\n --> name:line:col"; lead with the location.
    let excerpt: String = rendered.lines().skip(2).collect::<Vec<_>>().join("\n");
    format!("{name}:{line}:{col}: {message}\n{excerpt}")
}
