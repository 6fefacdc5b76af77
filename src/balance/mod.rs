//! Encounter generation (`playforge balance`): search the declared parameters of a two-player
//! WGDL game for an encounter whose battles come out even, last long enough and pit two
//! different teams against each other — HexMage's method, for any game.
//!
//! One file per concern: [`config`] (the TOML and its checks) → [`dna`] (parameters ⇄ genes in
//! [0, 1], validity) → [`fitness`] (games played by AI pairs → F) → [`optim`] (ES, SA, CMA-ES on
//! one interface) → [`run`] (the loop, checkpoints, outputs; [`sequential`], the confirmation
//! that plays only while in doubt); [`verify`], [`landscape`] and
//! [`compare`] are the commands around it.

pub mod asktell;
pub mod compare;
pub mod config;
pub mod dna;
pub mod fitness;
pub mod jobs;
pub mod landscape;
pub mod optim;
pub mod run;
pub mod sequential;
pub mod verify;
