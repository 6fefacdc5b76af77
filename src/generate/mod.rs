//! Content for any WGDL game (`playforge generate`): search a game's declared parameters for
//! content that meets a designer's targets, as measured by the players that play it — AIs,
//! procedural personas, play styles, random — and either return the best answer (CMA-ES) or a
//! map of good answers spread along designer-chosen behaviour descriptors (MAP-Elites, CMA-ME).
//!
//! One file per concern: [`config`] (the TOML and its checks) → [`expr`] (measure expressions
//! and their standard errors) → [`codec`] (parameters ⇄ genes, overlay sets) → [`play`] (one game
//! at a table, its record; [`external`] one episode of a game in its own process) → [`quality`] (tables, measures, targets, F, feasibility; [`pool`] games pooled) →
//! [`archive`] (the map; [`mae`] CMA-MAE's thresholds, [`revisit`] elites gathering games) → [`run`] (the loop, checkpoints, outputs; [`sequential`] confirmation); [`jobs`] is the executor's
//! job kind, [`verify`] checks a result on fresh seeds, [`asktell`] hands the evaluations out.

pub mod archive;
pub mod asktell;
pub mod codec;
pub mod config;
pub mod expr;
pub mod external;
pub mod jobs;
pub mod mae;
pub mod outputs;
pub mod play;
pub mod pool;
pub mod quality;
pub mod revisit;
pub mod run;
pub mod sequential;
pub mod verify;
