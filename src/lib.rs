//! playforge: machine playtesting and balancing of games written in WGDL.
//!
//! Games are text ([`wgdl`], or GDL through [`gdl`]); they compile to a [`wgdl::Program`] whose states every searcher
//! plays through the [`game::Game`] contract. The map is ARCHITECTURE.md (modules, layers,
//! invariants, where to start reading); docs/internals.md has the compiler's details.

pub mod balance;
pub mod bridge;
pub mod cli;
pub mod config;
pub mod doors;
pub mod drive;
pub mod evolve;
pub mod exec;
pub mod experiment;
pub mod game;
pub mod gdl;
pub mod generate;
pub mod genes;
pub mod input;
pub mod jobs;
pub mod persona;
pub mod players;
pub mod playtest;
#[cfg(feature = "python")]
mod python;
pub mod report;
pub mod rng;
pub mod search;
pub mod status;
pub mod view;
pub mod web;
pub mod wgdl;
