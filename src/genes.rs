//! The declared parameters of a game as genes, shared by every generator (balance, generate):
//! a [`Gene`] maps a number in [0, 1] linearly onto a parameter's range and rounds whole-number
//! parameters; [`glob`] picks parameters by patterns with `*`; a [`LinearConstraint`] is a
//! config's validity rule over parameter values (`a.x + 2 <= b.y`); [`held_values`] checks a
//! config's `[parameters]` against a compiled program's declarations and [`game_hash`] names the
//! game a checkpoint or job belongs to. Plain data over a program's declarations, no games.

use crate::wgdl::Program;
use crate::wgdl::program::ParamInfo;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Gene {
    /// `description.attribute`.
    pub name: String,
    pub min: f64,
    pub max: f64,
    pub integer: bool,
}

impl Gene {
    pub fn decode(&self, g: f64) -> f64 {
        let v = self.min + g.clamp(0.0, 1.0) * (self.max - self.min);
        if self.integer { v.round().clamp(self.min.ceil(), self.max.floor()) } else { v }
    }
    pub fn encode(&self, v: f64) -> f64 {
        if self.max > self.min { ((v - self.min) / (self.max - self.min)).clamp(0.0, 1.0) } else { 0.0 }
    }
}

/// `a + 2 <= b`: sums of numbers and parameter names on both sides of a comparison.
#[derive(Clone, Debug)]
pub struct LinearConstraint {
    pub text: String,
    lhs: Vec<(f64, Option<usize>)>,
    op: String,
    rhs: Vec<(f64, Option<usize>)>,
}

impl LinearConstraint {
    pub fn parse(text: &str, names: &[String]) -> Result<LinearConstraint, String> {
        let ops = ["<=", ">=", "==", "!=", "<", ">"];
        let Some((at, op)) = ops.iter().filter_map(|op| text.find(op).map(|i| (i, *op))).min_by_key(|&(i, op)| (i, usize::MAX - op.len()))
        else {
            return Err("no comparison; expected `<=`, `<`, `>=`, `>`, `==` or `!=` between two sums".into());
        };
        let side = |s: &str| -> Result<Vec<(f64, Option<usize>)>, String> {
            let mut out = Vec::new();
            let s = s.replace('-', "+-");
            for term in s.split('+').map(str::trim).filter(|t| !t.is_empty()) {
                let (sign, t) = if let Some(t) = term.strip_prefix('-') { (-1.0, t.trim()) } else { (1.0, term) };
                let (coef, name) = match t.split_once('*') {
                    Some((c, n)) => (c.trim().parse::<f64>().map_err(|_| format!("`{c}` is not a number"))?, Some(n.trim())),
                    None => match t.parse::<f64>() {
                        Ok(v) => (v, None),
                        Err(_) => (1.0, Some(t)),
                    },
                };
                let idx = match name {
                    Some(n) => {
                        Some(names.iter().position(|x| x == n).ok_or_else(|| format!("`{n}` is not a declared parameter of the game"))?)
                    }
                    None => None,
                };
                out.push((sign * coef, idx));
            }
            if out.is_empty() {
                return Err("an empty side; expected numbers and parameter names joined by + or -".into());
            }
            Ok(out)
        };
        Ok(LinearConstraint { text: text.to_string(), lhs: side(&text[..at])?, op: op.to_string(), rhs: side(&text[at + op.len()..])? })
    }

    pub fn holds(&self, values: &[f64]) -> bool {
        let sum = |s: &[(f64, Option<usize>)]| s.iter().map(|&(c, i)| c * i.map_or(1.0, |i| values[i])).sum::<f64>();
        let (a, b) = (sum(&self.lhs), sum(&self.rhs));
        match self.op.as_str() {
            "<=" => a <= b + 1e-9,
            ">=" => a + 1e-9 >= b,
            "<" => a < b,
            ">" => a > b,
            "==" => (a - b).abs() < 1e-9,
            _ => (a - b).abs() >= 1e-9,
        }
    }
}

/// Every declared parameter's value: the file's, or the one a config's `[parameters]` holds it
/// at. An error names the offending key and says what was expected (its caller adds where).
pub fn held_values(params: &[ParamInfo], held: &BTreeMap<String, f64>) -> Result<Vec<f64>, (String, String)> {
    let mut values: Vec<f64> = params.iter().map(|p| p.default).collect();
    for (name, &v) in held {
        let Some(i) = params.iter().position(|p| &p.name == name) else {
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            return Err((name.clone(), format!("`{name}` is not a declared parameter; expected one of: {}", names.join(", "))));
        };
        let p = &params[i];
        if v < p.min || v > p.max || (p.integer && v.fract() != 0.0) {
            let kind = if p.integer { "a whole number" } else { "a number" };
            return Err((name.clone(), format!("{name} = {v}; expected {kind} from {} to {}", p.min, p.max)));
        }
        values[i] = v;
    }
    Ok(values)
}

/// A hash of a game's text and its compiled map: what a checkpoint and a job belong to.
pub fn game_hash(text: &str, program: &Program) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let map = program.hex.as_ref().map(|m| m.render(|_| None)).unwrap_or_default();
    for b in text.bytes().chain(map.bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `pattern` with `*` standing for any run of characters (`red*`, `*.maxHp`) matches `name`.
pub fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head) && name.len() >= head.len() && {
                let rest = &name[head.len()..];
                (0..=rest.len()).any(|i| rest.is_char_boundary(i) && glob(tail, &rest[i..]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_prefixes_and_infixes() {
        assert!(glob("red*", "red1a.dmg"));
        assert!(glob("*.maxHp", "blue2.maxHp"));
        assert!(glob("red1a.dmg", "red1a.dmg"));
        assert!(!glob("red*", "blue1.maxHp"));
        assert!(!glob("*.maxHp", "blue2.maxAp"));
    }

    #[test]
    fn genes_decode_into_range_and_round() {
        let g = Gene { name: "x".into(), min: 5.0, max: 30.0, integer: true };
        assert_eq!(g.decode(0.0), 5.0);
        assert_eq!(g.decode(1.0), 30.0);
        assert_eq!(g.decode(0.5), 18.0); // 17.5 rounds to even-away: 18
        assert_eq!(g.decode(2.0), 30.0);
        assert!((g.encode(g.decode(0.52)) - 0.52).abs() < 0.03);
    }

    #[test]
    fn linear_constraints_parse_and_hold() {
        let names = vec!["a.x".to_string(), "b.y".to_string()];
        let c = LinearConstraint::parse("a.x + 2 <= b.y", &names).unwrap();
        assert!(c.holds(&[3.0, 5.0]));
        assert!(!c.holds(&[4.0, 5.0]));
        let c = LinearConstraint::parse("2*a.x - b.y > 0", &names).unwrap();
        assert!(c.holds(&[3.0, 5.0]));
        assert!(!c.holds(&[2.0, 5.0]));
        assert!(LinearConstraint::parse("a.x <= c.z", &names).unwrap_err().contains("c.z"));
        assert!(LinearConstraint::parse("a.x", &names).is_err());
    }
}
