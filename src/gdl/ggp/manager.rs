//! The game manager (`playforge ggp match`): a match of a description between player URLs,
//! one per role — START, PLAY with each joint move, STOP or ABORT — a late, failing or illegal
//! answer replaced by a random legal action and noted ([`run_match`], [`Played`]).

use super::*;

/// One played match: the joint moves (as text), notes on replaced moves, and the goals — none
/// when the match was aborted at the step limit.
#[derive(Debug)]
pub struct Played {
    pub moves: Vec<String>,
    pub notes: Vec<String>,
    pub goals: Option<Vec<u8>>,
    /// Each role's slowest answer to START and to PLAY (the time from sending to reading it).
    pub slowest: Vec<(Duration, Duration)>,
}

/// Runs a match of `rules` (the description's text) between player URLs, one per role in role
/// order, for at most `max_steps` joint moves (then the players get `(abort ID)`). A late,
/// failing or illegal answer is replaced by a random legal action.
pub fn run_match(rules: &str, urls: &[String], start: Duration, play: Duration, seed: u64, max_steps: u64) -> Result<Played> {
    let game = crate::gdl::compile_any("match", rules, Default::default()).map_err(|e| anyhow!("{e}"))?;
    if urls.len() != game.roles() {
        bail!("{} players for {} roles; expected one per role", urls.len(), game.roles());
    }
    // The rules as managers send them: the forms alone, without the file's comments (a last
    // comment line would swallow the message's closing parenthesis).
    let forms = sexps(rules).map_err(|e| anyhow!("unreadable rules: {:?}", e.first().map(|e| &e.kind)))?;
    let rules = forms.iter().map(text).collect::<Vec<_>>().join(" ");
    let id = format!("playforge-{seed}");
    let (sc, pc) = (start.as_secs_f64(), play.as_secs_f64());
    let starts: Vec<_> = urls
        .iter()
        .enumerate()
        .map(|(r, u)| {
            let msg = format!("(start {id} {} ({rules}) {sc} {pc})", game.role_name(r));
            let u = u.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                (send(&u, &msg, start + SLACK), t.elapsed())
            })
        })
        .collect();
    let mut notes = Vec::new();
    let mut slowest = vec![(Duration::ZERO, Duration::ZERO); urls.len()];
    for (r, h) in starts.into_iter().enumerate() {
        let (answer, took) = h.join().map_err(|_| anyhow!("start thread panicked"))?;
        slowest[r].0 = took;
        match answer {
            Ok(a) if a.eq_ignore_ascii_case("ready") => {}
            other => notes.push(format!("start: role {} answered {other:?}", game.role_name(r))),
        }
    }
    let mut rng = crate::rng::stream(seed, 0, 0, 1);
    let mut st = game.initial().map_err(|e| anyhow!("{e}"))?;
    let mut legal = Vec::new();
    let mut last = "nil".to_string();
    let mut moves = Vec::new();
    loop {
        game.legal(&st, &mut legal).map_err(|e| anyhow!("{e}"))?;
        if game.status(&st, &legal) != crate::game::Status::Running {
            break;
        }
        if moves.len() as u64 >= max_steps {
            for u in urls {
                let _ = send(u, &format!("(abort {id})"), SLACK);
            }
            return Ok(Played { moves, notes, goals: None, slowest });
        }
        let msg = format!("(play {id} {last})");
        let answers: Vec<_> = urls
            .iter()
            .map(|u| {
                let (u, m) = (u.clone(), msg.clone());
                std::thread::spawn(move || {
                    let t = Instant::now();
                    (send(&u, &m, play + SLACK), t.elapsed())
                })
            })
            .collect();
        let per_role = game.legal_actions(&st);
        let mut joint: JointMove = 0;
        let mut texts = Vec::new();
        for (r, h) in answers.into_iter().enumerate() {
            let (answer, took) = h.join().map_err(|_| anyhow!("play thread panicked"))?;
            slowest[r].1 = slowest[r].1.max(took);
            let pick = match &answer {
                Ok(a) => game.action_index(r, a).filter(|i| per_role[r].contains(i)),
                Err(_) => None,
            };
            let i = pick.unwrap_or_else(|| {
                notes.push(format!(
                    "step {}: role {} answered {answer:?}; a random legal action was played",
                    moves.len(),
                    game.role_name(r)
                ));
                per_role[r][rng.random_range(0..per_role[r].len())]
            });
            joint |= crate::gdl::game::joint_part(i, r);
            texts.push(game.action_name(r, i));
        }
        last = format!("({})", texts.join(" "));
        moves.push(texts.join(" "));
        game.apply(&mut st, joint).map_err(|e| anyhow!("{e}"))?;
    }
    let stop = format!("(stop {id} {last})");
    for u in urls {
        let _ = send(u, &stop, SLACK);
    }
    Ok(Played { moves, notes, goals: Some(game.goal_values(&st)), slowest })
}
