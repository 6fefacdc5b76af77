//! The built-in functions' run time: `max`, `min`, `abs` and the hex map's functions.

use crate::wgdl::fast::Env;
use crate::wgdl::program::{Builtin, Program, RtKind, RuntimeError, rt};

impl Program {
    pub(in crate::wgdl) fn builtin(&self, env: &Env, b: Builtin, args: &[i64], op_index: usize) -> Result<i64, RuntimeError> {
        let d = |v: i64| f64::from_bits(v as u64);
        let bits = |v: f64| v.to_bits() as i64;
        Ok(match b {
            Builtin::MaxL => args[0].max(args[1]),
            Builtin::MinL => args[0].min(args[1]),
            Builtin::AbsL => {
                args[0].checked_abs().ok_or_else(|| rt(RtKind::Overflow { a: 0, op: "-", b: args[0] }, self.spans[op_index]))?
            }
            Builtin::MaxD => bits(d(args[0]).max(d(args[1]))),
            Builtin::MinD => bits(d(args[0]).min(d(args[1]))),
            Builtin::AbsD => bits(d(args[0]).abs()),
            Builtin::HexCells => self.hex.as_ref().map_or(0, |h| h.len() as i64),
            _ => {
                let h = self.hex.as_ref().expect("the compiler requires a hexmap for hex built-ins");
                match b {
                    Builtin::HexDistance => h.distance(self.cell(args[0], op_index)?, self.cell(args[1], op_index)?),
                    Builtin::HexWalk => h.walk(self.cell(args[0], op_index)?, self.cell(args[1], op_index)?),
                    Builtin::HexSees => h.sees(self.cell(args[0], op_index)?, self.cell(args[1], op_index)?) as i64,
                    Builtin::HexWall => h.wall[self.cell(args[0], op_index)?] as i64,
                    Builtin::HexFree => {
                        let c = self.cell(args[0], op_index)?;
                        (!h.wall[c] && !self.occupied(env, c)?) as i64
                    }
                    Builtin::HexStart => {
                        let (side, k) = (args[0], args[1]);
                        let have = h.starts.get(side.max(0) as usize).map_or(0, |v| v.len());
                        if side < 0 || k < 0 || k as usize >= have {
                            return Err(rt(RtKind::NoStartPoint { side, k, have }, self.spans[op_index]));
                        }
                        h.starts[side as usize][k as usize] as i64
                    }
                    Builtin::HexHidden => {
                        let c = self.cell(args[0], op_index)?;
                        self.hidden(env, h, c, args[1])? as i64
                    }
                    Builtin::HexApproach => {
                        // The nearest free cell (by walk, then number) other than `from` within
                        // the budget from which the target is in range and in sight: cells in
                        // walk order, stopping at the first.
                        let from = self.cell(args[0], op_index)?;
                        let target = self.cell(args[1], op_index)?;
                        let found = h.approach(from, target, args[2], args[3], |c| Ok::<_, RuntimeError>(!self.occupied(env, c)?))?;
                        found.map_or(-1, |c| c as i64)
                    }
                    Builtin::HexStepToward => {
                        let from = self.cell(args[0], op_index)?;
                        let to = self.cell(args[1], op_index)?;
                        let mut err = None;
                        let found = h.step_toward(from, to, args[2], |c| match self.occupied(env, c) {
                            Ok(o) => !o,
                            Err(e) => {
                                err = Some(e);
                                true
                            }
                        });
                        if let Some(e) = err {
                            return Err(e);
                        }
                        found.map_or(-1, |c| c as i64)
                    }
                    _ => unreachable!("handled above"),
                }
            }
        })
    }
}
