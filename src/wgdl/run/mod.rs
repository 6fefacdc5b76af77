//! The run time: the compiled [`program::Program`] and its [`program::State`], the closures the
//! bytecode is lowered to (`fast`), the read/write sets that decide what to re-check after a
//! move (`deps`), and the generic built-ins named after their geometry: hex maps ([`hex`]),
//! tile grids (`tiles`), boards' directions, step tables and notation ([`board`]) and turn
//! order with move choice (`turns`). [`probe`] reads a
//! program's goals and values for the balance tools.

pub mod board;
pub(in crate::wgdl) mod deps;
pub(in crate::wgdl) mod fast;
pub mod hex;
#[cfg(feature = "compiled")]
pub(in crate::wgdl) mod jit;
pub mod probe;
pub mod program;
pub(in crate::wgdl) mod tiles;
pub(in crate::wgdl) mod turns;
