//! What a person opens in a browser: the report page of a run folder (`report.rs`, written at
//! the end of every run and by `playforge report`), the recorded games played again into board
//! pictures (`replay.rs`), and the HTML pieces both share (`html.rs`). Boards come from `view`;
//! games from `game`, `wgdl` and `gdl`; the replay format from `players`. Layer 5: the commands
//! (`cli`) call it, no driver does.

pub mod html;
pub mod replay;
pub mod report;
