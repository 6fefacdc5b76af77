//! Why a game is over: the one vocabulary that WGDL programs, GDL games and every searcher share.
//! It sits at the bottom of the layers so that the [`crate::game::Game`] contract (which
//! re-exports it) and the interpreters below it name the same type, and no searcher has to reach
//! into an interpreter for it.

/// Why a game is over ([`Status::Running`] while it is not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    /// The last goal holds.
    Finished,
    /// No player action is legal (and the last goal does not hold).
    Stuck,
    /// `limit steps` moves were made without reaching the last goal.
    StepLimit,
    /// A `winner` line held: that side won.
    Won(u8),
    /// A `draw` line held.
    Draw,
    /// `limit turns` turns were played without a winner.
    TurnLimit,
}
