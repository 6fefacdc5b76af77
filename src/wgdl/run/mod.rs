//! The run time: the compiled [`program::Program`] and its [`program::State`], the closures the
//! bytecode is lowered to (`fast`), the read/write sets that decide what to re-check after a
//! move (`deps`), and the generic built-ins named after their geometry: hex maps ([`hex`]) and
//! who stands on them (`occupants`), tile grids (`tiles`, `groups`, `lines`), boards'
//! directions, step tables and notation ([`board`]), aggregates over
//! objects (`aggregates`), turn order and outcomes (`turns`), move filters and policies
//! (`filters`); `builtins` runs the built-in functions. [`probe`] reads a program's goals and
//! values for the balance tools.

pub(in crate::wgdl) mod aggregates;
pub mod board;
pub(in crate::wgdl) mod builtins;
pub(in crate::wgdl) mod cells;
pub(in crate::wgdl) mod chance;
pub(in crate::wgdl) mod deps;
pub(in crate::wgdl) mod fast;
pub(in crate::wgdl) mod filters;
pub mod hex;
#[cfg(feature = "compiled")]
pub(in crate::wgdl) mod jit;
pub(in crate::wgdl) mod lines;
pub(in crate::wgdl) mod links;
pub(in crate::wgdl) mod occupancy;
pub(in crate::wgdl) mod occupants;
pub(in crate::wgdl) mod parts;
pub mod probe;
pub mod program;
pub(in crate::wgdl) mod tier;
pub(in crate::wgdl) mod tiles;
pub(in crate::wgdl) mod turns;
