fn main() {
    let c = playforge::wgdl::load(std::path::Path::new("games/simple_coins.wgdl")).unwrap_or_else(|e| panic!("{e}"));
    print!("{}", c.warnings);
    let p = &c.program;
    let mut st = p.initial_state().unwrap();
    let mut legal = Vec::new();
    p.legal_actions(&st, &mut legal).unwrap();
    println!("legal at start: {}", legal.len());
    for _ in 0..4 {
        for _ in 0..30 {
            p.legal_actions(&st, &mut legal).unwrap();
            let a = *legal.iter().find(|a| p.action_name(&st, **a) == "getCoins(coin20)").unwrap();
            p.apply(&mut st, a).unwrap();
        }
        p.legal_actions(&st, &mut legal).unwrap();
        println!("after 30: {} legal", legal.len());
        let a = *legal.iter().find(|a| p.action_name(&st, **a) == "endSession(global)").unwrap();
        p.apply(&mut st, a).unwrap();
    }
    p.legal_actions(&st, &mut legal).unwrap();
    println!("coins slot: {:?} status {:?} goal {}", &st.slots[..6], p.status(&st, &legal), st.goal);
}
