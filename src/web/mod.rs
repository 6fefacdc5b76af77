//! What a person opens in a browser: the report page of a run folder (`report.rs`, written at
//! the end of every run and by `playforge report`), the recorded games played again into board
//! pictures (`replay.rs`), games played in the browser (`play.rs`: a table of people and AIs,
//! traces in the replay format), the web app that serves both (`serve/`: `mod.rs` the routes and
//! games, `http.rs` requests within limits, `guard.rs` who may do what; its page `play.html`),
//! SVG files made safe to inline (`sanitize.rs`), and the HTML pieces they share (`html.rs`). Boards come from `view`; games from
//! `game`, `wgdl` and `gdl`; the AIs and the replay format from `players`. Layer 5: the commands
//! (`cli`) call it, no driver does.

pub mod html;
pub mod play;
pub mod replay;
pub mod report;
pub mod sanitize;
pub mod serve;
