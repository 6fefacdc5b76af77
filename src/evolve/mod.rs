//! The evolutionary engines, pure libraries: [`cma`], separable CMA-ES over the unit box (the
//! balance optimizer's and the CMA-ME emitters'); and the evolution of MCTS selection formulas by
//! genetic programming (the persona experiments of Mugrai et al. 2019): [`gp`] holds the tree operators, the simplifier, equivalence by numeric
//! fingerprint and one generation step. It is a pure library — no I/O, no games: the caller
//! plays each formula, hands back the fitness values and keeps checkpoints.

pub mod cma;
pub mod gp;
