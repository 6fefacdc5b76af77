//! Reading a compiled game from outside: game values named by their WGDL path (`global.coins`,
//! `game.missions.done.sum`, `game.time`) for result formulas and charts, and the player profile
//! (sessions, session length, pause) applied on top of a game's own declarations.
//!
//! Resolution happens once ([`Program::value_ref`]); reading a value is then a slot load.

use crate::wgdl::program::{GoalInfo, Op, Program, State, Ty};

/// A resolved game value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef {
    /// An instance attribute of an initial object (its index) at an offset.
    Attr {
        obj: u32,
        off: u32,
        ty: Ty,
    },
    Const {
        value: i64,
        ty: Ty,
    },
    StoreOwn(u32),
    StoreSum(u32),
    Time,
    SessionTime,
    Sessions,
    Moves,
}

impl Program {
    /// Resolves `obj.attr` (an object description with an `initial` instance) or
    /// `game.<name | path[.sum] | time | sessionTime | sessionsFinished | moves>`.
    pub fn value_ref(&self, path: &str) -> Result<ValueRef, String> {
        let segs: Vec<&str> = path.split('.').collect();
        if segs.len() < 2 {
            return Err(format!("`{path}`: expected `object.attribute` or `game.<value>`"));
        }
        if segs[0] == "game" {
            let rest = &segs[1..];
            if rest.len() == 1 {
                match rest[0] {
                    "time" => return Ok(ValueRef::Time),
                    "sessionTime" => return Ok(ValueRef::SessionTime),
                    "sessionsFinished" => return Ok(ValueRef::Sessions),
                    "moves" => return Ok(ValueRef::Moves),
                    _ => {}
                }
            }
            let (sum, rest) = match rest.last() {
                Some(&"sum") => (true, &rest[..rest.len() - 1]),
                _ => (false, rest),
            };
            // A defined name (`game missionsDone missions . done`) or a dotted store path.
            let mut full: Vec<String> = match self.game_values.iter().find(|(n, _)| n == rest[0]) {
                Some((_, p)) => p.split('.').map(String::from).collect(),
                None => vec![rest[0].to_string()],
            };
            full.extend(rest[1..].iter().map(|s| s.to_string()));
            let joined = full.join(".");
            let node = self.store.paths.iter().position(|p| *p == joined).ok_or_else(|| {
                let known: Vec<&str> = self.store.paths.iter().skip(1).map(|s| s.as_str()).take(20).collect();
                format!(
                    "`{path}`: no game value store path `{joined}` in this game (known: {})",
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                )
            })? as u32;
            return Ok(if sum { ValueRef::StoreSum(node) } else { ValueRef::StoreOwn(node) });
        }
        if segs.len() != 2 {
            return Err(format!("`{path}`: expected `object.attribute` (one level)"));
        }
        let god =
            self.gods.iter().position(|g| g.name == segs[0]).ok_or_else(|| format!("`{path}`: no object description `{}`", segs[0]))?;
        let obj = self
            .initial
            .iter()
            .position(|&g| g as usize == god)
            .ok_or_else(|| format!("`{path}`: `{}` has no `initial` instance", segs[0]))? as u32;
        let class = &self.classes[self.gods[god].class as usize];
        if let Some(off) = class.attrs.iter().position(|a| a.name == segs[1]) {
            return Ok(ValueRef::Attr { obj, off: off as u32, ty: class.attrs[off].ty });
        }
        if let Some(i) = class.consts.iter().position(|a| a.name == segs[1]) {
            return Ok(ValueRef::Const { value: self.gods[god].consts[i], ty: class.consts[i].ty });
        }
        let known: Vec<&str> = class.attrs.iter().chain(&class.consts).map(|a| a.name.as_str()).collect();
        Err(format!("`{path}`: `{}` has no attribute `{}` (it has: {})", segs[0], segs[1], known.join(", ")))
    }

    /// The value as a number (booleans 0/1; strings and objects by their index).
    pub fn read(&self, st: &State, v: ValueRef) -> f64 {
        let num = |ty: Ty, raw: i64| if ty == Ty::Double { f64::from_bits(raw as u64) } else { raw as f64 };
        match v {
            ValueRef::Attr { obj, off, ty } => match st.objects.get(obj as usize) {
                Some(o) if o.alive => num(ty, st.slots[(o.base + off) as usize]),
                _ => 0.0,
            },
            ValueRef::Const { value, ty } => num(ty, value),
            ValueRef::StoreOwn(n) => st.slots[n as usize] as f64,
            ValueRef::StoreSum(n) => (st.slots[self.n_store_nodes() + n as usize] - st.slots[n as usize]) as f64,
            ValueRef::Time => st.clock as f64,
            ValueRef::SessionTime => (st.clock - st.sessions * (self.session_length + self.session_pause)).max(0) as f64,
            ValueRef::Sessions => st.sessions as f64,
            ValueRef::Moves => st.moves as f64,
        }
    }

    /// A copy of the program with its declared parameters set to `values` (one per parameter, in
    /// declaration order): the same game as compiling the text with these values as overrides,
    /// without compiling anything (every parameter is read from its description at run time).
    /// A value outside its range, or not whole for a whole-number parameter, is an error.
    pub fn with_parameters(&self, values: &[f64]) -> Result<Program, String> {
        if values.len() != self.params.len() {
            return Err(format!("{} parameter values; expected {}, one per declared parameter", values.len(), self.params.len()));
        }
        if self.board.structural.iter().any(|&k| self.params[k].value != values[k]) {
            return self.recompiled(values);
        }
        let mut p = self.clone();
        for (info, &v) in p.params.iter_mut().zip(values) {
            if v < info.min || v > info.max || (info.integer && v.fract() != 0.0) || !v.is_finite() {
                let want = if info.integer { "a whole number in the parameter's range" } else { "a value in the parameter's range" };
                return Err(format!("{} = {v} is outside {} to {}; expected {want}", info.name, info.min, info.max));
            }
            let raw = if info.integer { v as i64 } else { v.to_bits() as i64 };
            let god = &mut p.gods[info.god as usize];
            if info.is_const {
                god.consts[info.idx as usize] = raw;
            } else {
                god.init[info.idx as usize] = raw;
            }
            info.value = v;
        }
        // A parameter may be a side.
        p.turn_order = p.fixed_turn_order();
        // Consequences decided on class constants are decided again.
        p.fast.forget_plans();
        Ok(p)
    }

    /// The game compiled again with every parameter at `values` (some size a grid).
    fn recompiled(&self, values: &[f64]) -> Result<Program, String> {
        let mut opts = self.board.options.clone();
        opts.overrides = self.params.iter().zip(values).map(|(p, &v)| (p.name.clone(), v)).collect();
        let c = crate::wgdl::compile_str_with(&self.source.name, &self.source.text, &opts).map_err(|d| d.to_string())?;
        let mut p = std::sync::Arc::unwrap_or_clone(c.program);
        p.fast = p.fast.for_tier(self.fast.tier());
        Ok(p)
    }

    /// A copy of the program with the player profile applied: session length and pause
    /// replaced when given, and with `sessions = N` the goals replaced by "session k finished"
    /// for k = 1..N (so the game ends after N sessions).
    pub fn with_profile(&self, sessions: Option<u32>, length: Option<i64>, pause: Option<i64>) -> Result<Program, String> {
        let mut p = self.clone();
        if let Some(l) = length {
            if l <= 0 {
                return Err(format!("session length {l}: expected seconds > 0"));
            }
            p.session_length = l;
        }
        if let Some(x) = pause {
            if x < 0 {
                return Err(format!("pause {x}: expected seconds ≥ 0"));
            }
            p.session_pause = x;
        }
        if let Some(n) = sessions {
            if n == 0 {
                return Err("sessions = 0: expected at least 1".into());
            }
            p.goals.clear();
            let span = Default::default();
            for k in 1..=n {
                let start = p.code.len() as u32;
                for op in [Op::Sessions, Op::Const(k as i64), Op::GeL] {
                    p.code.push(op);
                    p.spans.push(span);
                }
                p.goals.push(GoalInfo {
                    k,
                    expr: crate::wgdl::program::ExprId { start, len: 3 },
                    text: format!("game.sessionsFinished >= long {k}"),
                    reads: crate::wgdl::parts::SESSIONS,
                });
            }
            p.fast.resize(p.code.len());
        }
        Ok(p)
    }
}
