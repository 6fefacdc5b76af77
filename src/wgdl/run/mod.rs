//! The run time: the compiled [`program::Program`] and its [`program::State`] (with what their
//! expressions run as, `program/closures.rs`), the closures the bytecode is lowered to (`fast`),
//! the compiled tier (`jit`, cargo feature `compiled`) and the choice between them (`tier`), the
//! parts of a state (`parts`) and the read/write sets that decide what to re-check after a move
//! (`deps`), and the generic built-ins named after their geometry: hex maps ([`hex`]) and who
//! stands on them (`occupancy`, `occupants`), tile grids (`tiles`, `lines`), boards' directions,
//! step tables and notation ([`board`]) with their connections (`links`) and cell tests
//! (`cells`), aggregates over objects (`aggregates`), turn order and outcomes (`turns`), move
//! filters and policies (`filters`), chance moves (`chance`); `builtins` runs the built-in
//! functions. [`probe`] reads a program's goals and values for the balance tools.
//!
//! Files name only what lies below them: the data a program holds (`program/ids.rs`,
//! `program/info.rs`, `parts`, `cells`, `links`, `board/mod.rs`, `hex`, `occupancy`,
//! `jit/abi.rs`) names no code that works on a state.

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
