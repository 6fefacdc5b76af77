//! The semantics the thesis pins, one short test each: Simple Coins (Appendix D), the chapter-4
//! examples (Alg. 4.2–4.5, with the parts they leave out filled in, such as a `global` object),
//! attribute kinds and inheritance, action instances, rules to a fixpoint, the order of
//! consequences, the thesis's operator precedence, and the time model (durations, sessions,
//! pauses, timers, `endSession`) and deletion.
//!
//! The games are written in the tests and driven move by move by the moves' readable names
//! (`getCoins(coin20)`), reading attributes back from the state.

use crate::util::{self, legal, names, play};
use playforge::wgdl::program::NONE;
use playforge::wgdl::{Action, Program, RtKind, State, Status, Ty};

/// The index of the `nth` (1-based) live-or-dead object made from description `god`.
fn obj(p: &Program, st: &State, god: &str, nth: usize) -> u32 {
    st.objects
        .iter()
        .enumerate()
        .filter(|(_, o)| p.gods[o.god as usize].name == god)
        .nth(nth - 1)
        .map(|(i, _)| i as u32)
        .unwrap_or_else(|| panic!("no object #{nth} of `{god}`"))
}

/// An instance attribute of an object.
fn attr(p: &Program, st: &State, id: u32, name: &str) -> i64 {
    let o = st.objects[id as usize];
    let class = &p.classes[o.class as usize];
    let i = class.attrs.iter().position(|a| a.name == name).unwrap_or_else(|| panic!("no attribute `{name}` in `{}`", class.name));
    st.slots[(o.base as usize) + i]
}

/// `get(p, st, "global.coins")`: an attribute of the first object of a description.
fn get(p: &Program, st: &State, path: &str) -> i64 {
    let (god, name) = path.split_once('.').expect("object.attribute");
    attr(p, st, obj(p, st, god, 1), name)
}

fn start(src: &str) -> (std::sync::Arc<Program>, State) {
    let p = util::compile(src).program;
    let st = p.initial_state().unwrap_or_else(|e| panic!("{}", e.render(&p)));
    (p, st)
}

const GLOBAL: &str = "class globalClass\nobject global is globalClass\ninitial global\n";

// ---------------------------------------------------------------- Simple Coins

#[test]
fn simple_coins_has_21_legal_actions_at_the_start() {
    let p = util::game("simple_coins.wgdl").program;
    let st = p.initial_state().expect("start");
    let n = names(&p, &st);
    assert_eq!(n.len(), 21, "{n:?}");
    assert!(n.contains(&"getCoins(coin20)".to_string()) && n.contains(&"endSession(global)".to_string()));
}

#[test]
fn simple_coins_optimum_is_2400_coins_in_four_sessions_one_goal_each() {
    let p = util::game("simple_coins.wgdl").program;
    let mut st = p.initial_state().expect("start");
    for session in 1..=4 {
        for _ in 0..30 {
            play(&p, &mut st, "getCoins(coin20)");
        }
        // Energy is spent: only endSession is left.
        assert_eq!(names(&p, &st), ["endSession(global)"]);
        play(&p, &mut st, "endSession(global)");
        assert_eq!(get(&p, &st, "global.coins"), 600 * session);
        assert_eq!(st.goal as i64, session, "one goal per session");
    }
    assert_eq!(get(&p, &st, "global.coins"), 2400);
    assert_eq!(st.goal as usize, p.goals.len());
    assert_eq!(st.goal, 4);
    assert_eq!(p.status(&st, &legal(&p, &st)), Status::Finished);
}

// ---------------------------------------------------------------- Alg. 4.2

#[test]
fn alg_4_2_whack_tree_is_legal_while_energy_lasts_and_trades_energy_for_wood() {
    let src = format!(
        "{GLOBAL}attribute globalClass energy long 2
attribute globalClass wood long 0
action globalClass whackTree
condition whackTree global.energy > long 0
consequence addWood direct global.wood = global.wood + long 1
consequence removeOneEnergy direct global.energy = global.energy - long 1
hasConsequence whackTree addWood
hasConsequence whackTree removeOneEnergy
goal 1 global.wood > long 5
"
    );
    let (p, mut st) = start(&src);
    play(&p, &mut st, "whackTree(global)");
    assert_eq!((get(&p, &st, "global.wood"), get(&p, &st, "global.energy")), (1, 1));
    play(&p, &mut st, "whackTree(global)");
    assert_eq!((get(&p, &st, "global.wood"), get(&p, &st, "global.energy")), (2, 0));
    assert!(names(&p, &st).is_empty(), "no energy, no whacking");
    assert_eq!(p.status(&st, &[]), Status::Stuck);
}

const PLANT_SEED: &str = "class globalClass
attribute globalClass coins long 100
attribute globalClass level long 1
object global is globalClass
initial global
class farm
attribute farm isFree boolean true
attribute farm isHarvestable boolean false
attribute farm food long 0
object field is farm
initial field
class seed
attribute class seed coinCost long 0
attribute class seed unlockLevel long 1
attribute class seed growTime long 0
attribute class seed foodProduced long 0
object wheat is seed
attribute wheat coinCost 10
attribute wheat growTime 300
attribute wheat foodProduced 7
object corn is seed
attribute corn coinCost 20
attribute corn unlockLevel 2
attribute corn growTime 600
action farm plantSeed forEveryGOD seed
condition plantSeed global.coins >= seed.coinCost
condition plantSeed seed.unlockLevel <= global.level
condition plantSeed this.isFree
consequence addFood direct this.food = seed.foodProduced
consequence paySeed direct global.coins = global.coins - seed.coinCost
consequence farmIsOccupied direct this.isFree = boolean false
consequence farmMayBeHarvested direct this.isHarvestable = boolean true
consequence farmMayBeHarvestedInTime timed seed.growTime farmMayBeHarvested
hasConsequence plantSeed addFood
hasConsequence plantSeed paySeed
hasConsequence plantSeed farmIsOccupied
hasConsequence plantSeed farmMayBeHarvestedInTime
action globalClass wait
action globalClass waitLong
duration wait long 1
duration waitLong long 299
goal 1 global.coins > long 1000
";

#[test]
fn alg_4_2_plant_seed_exists_per_seed_description_and_checks_its_conditions() {
    let (p, mut st) = start(PLANT_SEED);
    // corn needs level 2: only wheat can be planted.
    assert_eq!(names(&p, &st), ["wait(global)", "waitLong(global)", "plantSeed(field, wheat)"]);
    play(&p, &mut st, "plantSeed(field, wheat)");
    assert_eq!(get(&p, &st, "global.coins"), 90);
    assert_eq!(get(&p, &st, "field.food"), 7);
    assert_eq!(get(&p, &st, "field.isFree"), 0);
    assert_eq!(names(&p, &st), ["wait(global)", "waitLong(global)"], "the farm is occupied");
    assert_eq!(st.timers.len(), 1);
}

#[test]
fn alg_4_2_timed_consequence_fires_exactly_grow_time_seconds_later() {
    let (p, mut st) = start(PLANT_SEED);
    play(&p, &mut st, "plantSeed(field, wheat)");
    assert_eq!(st.clock, 0, "no duration given: planting takes no time");
    play(&p, &mut st, "waitLong(global)");
    assert_eq!(st.clock, 299);
    assert_eq!(get(&p, &st, "field.isHarvestable"), 0, "not before growTime");
    play(&p, &mut st, "wait(global)");
    assert_eq!(st.clock, 300);
    assert_eq!(get(&p, &st, "field.isHarvestable"), 1, "exactly at growTime");
    assert!(st.timers.is_empty());
}

// ---------------------------------------------------------------- Alg. 4.3

const TREE_FRUIT: &str = "class globalClass
attribute globalClass food long 0
object global is globalClass
initial global
class fruit
attribute fruit foodValue long 5
attribute fruit isCollectable boolean true
object apple is fruit
initial apple
class tree
attribute tree fruit object:fruit null
object appleTree is tree
attribute appleTree fruit object:apple
initial appleTree
action tree collectFood
condition collectFood this.fruit.isCollectable
consequence addFood direct global.food = global.food + this.fruit.foodValue
hasConsequence collectFood addFood
consequence setFoodValueToZero direct this.fruit.foodValue = long 0
hasConsequence collectFood setFoodValueToZero
goal 1 global.food > long 100
";

#[test]
fn alg_4_3_collect_food_reads_and_writes_through_the_fruit_reference() {
    let (p, mut st) = start(TREE_FRUIT);
    assert_eq!(names(&p, &st), ["collectFood(appleTree)"]);
    play(&p, &mut st, "collectFood(appleTree)");
    assert_eq!(get(&p, &st, "global.food"), 5);
    assert_eq!(get(&p, &st, "apple.foodValue"), 0, "the fruit's value was reset");
    play(&p, &mut st, "collectFood(appleTree)");
    assert_eq!(get(&p, &st, "global.food"), 5, "nothing left to collect");
}

#[test]
fn alg_4_3_collect_food_is_legal_iff_the_fruit_is_collectable() {
    let src = TREE_FRUIT.replace("attribute fruit isCollectable boolean true", "attribute fruit isCollectable boolean false");
    let (p, st) = start(&src);
    assert!(names(&p, &st).is_empty());
}

#[test]
fn alg_4_3_reading_through_a_null_fruit_is_a_runtime_error() {
    let src = format!("{TREE_FRUIT}object bareTree is tree\ninitial bareTree\n");
    let (p, st) = start(&src);
    let collect = p.actions.iter().position(|a| a.name == "collectFood").expect("collectFood") as u16;
    let apple_tree = Action { def: collect, this: obj(&p, &st, "appleTree", 1), bound: NONE };
    assert_eq!(p.is_legal(&st, apple_tree), Ok(true));
    let bare = Action { def: collect, this: obj(&p, &st, "bareTree", 1), bound: NONE };
    let e = p.is_legal(&st, bare).expect_err("null fruit");
    assert!(matches!(&e.kind, RtKind::NullPath { attr } if attr == "this.fruit.isCollectable"), "{e:?}");
    let e = p.legal_actions(&st, &mut Vec::new()).expect_err("listing reads the bare tree too");
    assert!(matches!(e.kind, RtKind::NullPath { .. }));
}

// ---------------------------------------------------------------- Alg. 4.4

const BUILD: &str = "class globalClass
attribute globalClass coins long 100
attribute globalClass total long 0
attribute globalClass huts long 0
attribute globalClass markets long 0
object global is globalClass
initial global
class building
attribute class building coinsCost long 0
class house : building
class business : building
object poor_house is house
attribute poor_house coinsCost 10
object market is business
attribute market coinsCost 30
game built building.built
action globalClass build forEveryGOD building
condition build global.coins > building.coinsCost
consequence pay direct global.coins = global.coins - building.coinsCost
consequence createBuilding create building
consequence tally direct global.total = game.building.built.sum
consequence tallyHuts direct global.huts = game.building.built.poor_house
consequence tallyMarkets direct global.markets = game.built.market
hasConsequence build pay
hasConsequence build createBuilding
hasConsequence build tally
hasConsequence build tallyHuts
hasConsequence build tallyMarkets
action create:building counterUpdate
consequence increaseBuildingCreatedCounter game increase String building, String built, this.name
hasConsequence counterUpdate increaseBuildingCreatedCounter
goal 1 game.building.built.sum >= long 3
";

#[test]
fn alg_4_4_build_exists_for_every_building_description_including_subclasses() {
    let (p, st) = start(BUILD);
    assert_eq!(names(&p, &st), ["build(global, poor_house)", "build(global, market)"]);
}

#[test]
fn alg_4_4_create_hook_counts_buildings_by_name_in_the_game_value_store() {
    let (p, mut st) = start(BUILD);
    play(&p, &mut st, "build(global, poor_house)");
    assert_eq!((get(&p, &st, "global.total"), get(&p, &st, "global.huts"), get(&p, &st, "global.markets")), (1, 1, 0));
    play(&p, &mut st, "build(global, market)");
    play(&p, &mut st, "build(global, poor_house)");
    assert_eq!((get(&p, &st, "global.total"), get(&p, &st, "global.huts"), get(&p, &st, "global.markets")), (3, 2, 1));
    assert_eq!(get(&p, &st, "global.coins"), 100 - 10 - 30 - 10);
    assert_eq!(st.objects.len(), 4, "global and three buildings");
    assert_eq!(st.goal, 1, "goal reads game.building.built.sum");
}

// ---------------------------------------------------------------- Alg. 4.5

#[test]
fn alg_4_5_two_initials_give_two_objects_and_goals_are_reached_in_order() {
    let src = "class globalClass
attribute globalClass coins long 0
object global is globalClass
initial global
class house
attribute house name String none
object poor_house is house
attribute poor_house name poor_house
initial poor_house
initial poor_house
action house collect
consequence earn direct global.coins = global.coins + long 600
hasConsequence collect earn
goal 1 global.coins > 1000
goal 2 global.coins > 2000
";
    let (p, mut st) = start(src);
    assert_eq!(names(&p, &st), ["collect(poor_house#1)", "collect(poor_house#2)"]);
    let name = attr(&p, &st, obj(&p, &st, "poor_house", 2), "name");
    assert_eq!(p.show(Ty::Str, name), "poor_house");
    let mut goals = Vec::new();
    for mv in ["collect(poor_house#1)", "collect(poor_house#2)", "collect(poor_house#1)", "collect(poor_house#2)"] {
        play(&p, &mut st, mv);
        goals.push(st.goal);
    }
    assert_eq!(goals, [0, 1, 1, 2], "coins 600, 1200, 1800, 2400");
    assert_eq!(p.status(&st, &legal(&p, &st)), Status::Finished);
}

// ---------------------------------------------------------------- attributes, classes, actions

#[test]
fn class_constants_instance_defaults_and_per_object_overrides() {
    let src = format!(
        "{GLOBAL}attribute globalClass coins long 0
class building
attribute class building coinValue long 1
attribute building level long 1
object hut is building
object mansion is building
attribute mansion coinValue 50
attribute mansion level 3
initial hut
initial mansion
initial mansion
action building collect
consequence earn direct global.coins = global.coins + this.coinValue * this.level
consequence upgrade direct this.level = this.level + long 1
hasConsequence collect earn
hasConsequence collect upgrade
goal 1 global.coins > long 10000
"
    );
    let (p, mut st) = start(&src);
    let (hut, m1, m2) = (obj(&p, &st, "hut", 1), obj(&p, &st, "mansion", 1), obj(&p, &st, "mansion", 2));
    assert_eq!((attr(&p, &st, hut, "level"), attr(&p, &st, m1, "level"), attr(&p, &st, m2, "level")), (1, 3, 3));
    play(&p, &mut st, "collect(hut)");
    assert_eq!(get(&p, &st, "global.coins"), 1, "class default constant 1 × level 1");
    play(&p, &mut st, "collect(mansion#1)");
    assert_eq!(get(&p, &st, "global.coins"), 1 + 150, "overridden constant 50 × overridden level 3");
    // Instance attributes belong to each object; the second mansion is still at level 3.
    assert_eq!((attr(&p, &st, m1, "level"), attr(&p, &st, m2, "level")), (4, 3));
    play(&p, &mut st, "collect(mansion#1)");
    assert_eq!(get(&p, &st, "global.coins"), 151 + 200);
}

#[test]
fn subclasses_inherit_attributes_and_actions() {
    let src = format!(
        "{GLOBAL}attribute globalClass coins long 0
class building
attribute building income long 2
class house : building
attribute house residents long 3
object cottage is house
initial cottage
action building collect
consequence earn direct global.coins = global.coins + this.income
hasConsequence collect earn
action house tax
consequence levy direct global.coins = global.coins + this.income * this.residents
hasConsequence tax levy
goal 1 global.coins > long 10000
"
    );
    let (p, mut st) = start(&src);
    assert_eq!(names(&p, &st), ["collect(cottage)", "tax(cottage)"], "inherited actions first");
    play(&p, &mut st, "collect(cottage)");
    play(&p, &mut st, "tax(cottage)");
    assert_eq!(get(&p, &st, "global.coins"), 2 + 6);
}

#[test]
fn for_every_instance_grows_as_objects_are_created() {
    let src = format!(
        "{GLOBAL}attribute globalClass coins long 0
class farm
object plot is farm
initial plot
class worker
object peasant is worker
action globalClass hire
consequence newWorker create peasant
hasConsequence hire newWorker
action farm employ forEveryInstance worker
consequence work direct global.coins = global.coins + long 1
hasConsequence employ work
goal 1 global.coins > long 10000
"
    );
    let (p, mut st) = start(&src);
    assert_eq!(names(&p, &st), ["hire(global)"]);
    play(&p, &mut st, "hire(global)");
    assert_eq!(names(&p, &st), ["hire(global)", "employ(plot, peasant)"]);
    play(&p, &mut st, "hire(global)");
    assert_eq!(names(&p, &st), ["hire(global)", "employ(plot, peasant#1)", "employ(plot, peasant#2)"]);
}

#[test]
fn rules_fire_to_a_fixpoint_two_level_ups_from_one_big_xp_gain() {
    let src = format!(
        "{GLOBAL}attribute globalClass xp long 0
attribute globalClass level long 1
attribute globalClass nextLevelAt long 100
action globalClass grind
consequence bigXp direct global.xp = global.xp + long 250
hasConsequence grind bigXp
action levelUp
condition levelUp global.xp >= global.nextLevelAt
consequence nextLevel direct global.level = global.level + long 1
consequence raiseBar direct global.nextLevelAt = global.nextLevelAt + long 100
hasConsequence levelUp nextLevel
hasConsequence levelUp raiseBar
goal 1 global.level >= long 10
"
    );
    let (p, mut st) = start(&src);
    play(&p, &mut st, "grind(global)");
    assert_eq!((get(&p, &st, "global.level"), get(&p, &st, "global.nextLevelAt")), (3, 300));
    assert!(names(&p, &st).iter().all(|n| n != "levelUp"), "rules are not player moves");
}

#[test]
fn consequences_apply_in_attachment_order() {
    // Declared copy-first, attached in two different orders.
    let src = format!(
        "{GLOBAL}attribute globalClass a long 0
attribute globalClass b long 0
consequence copy direct global.b = global.a
consequence inc direct global.a = global.a + long 1
action globalClass incThenCopy
hasConsequence incThenCopy inc
hasConsequence incThenCopy copy
action globalClass copyThenInc
hasConsequence copyThenInc copy
hasConsequence copyThenInc inc
goal 1 global.a > long 100
"
    );
    let (p, st0) = start(&src);
    let mut st = st0.clone();
    play(&p, &mut st, "incThenCopy(global)");
    assert_eq!((get(&p, &st, "global.a"), get(&p, &st, "global.b")), (1, 1));
    let mut st = st0;
    play(&p, &mut st, "copyThenInc(global)");
    assert_eq!((get(&p, &st, "global.a"), get(&p, &st, "global.b")), (1, 0));
}

#[test]
fn a_conditional_with_several_targets_runs_them_in_order_after_one_test() {
    let src = format!(
        "{GLOBAL}attribute globalClass n long 1
attribute globalClass go boolean true
attribute class globalClass k long 2
consequence addOne direct global.n = global.n + long 1
consequence dbl direct global.n = global.n * long 2
consequence stop direct global.go = boolean false
consequence both conditional global.go stop addOne dbl
consequence planned conditional this.k > long 1 addOne dbl
action globalClass once
hasConsequence once both
action globalClass twice
hasConsequence twice planned
goal 1 global.n > long 100
"
    );
    let (p, mut st) = start(&src);
    let same = |st: &State| {
        let (n, bad) = p.closure_mismatches(st);
        assert!(n > 0 && bad.is_empty(), "{bad:?}");
    };
    same(&st);
    // `stop` makes the condition false, yet `addOne` and `dbl` run: it is tested once, and each
    // target sees the one before ((1 + 1) * 2, not 1 * 2 + 1).
    play(&p, &mut st, "once(global)");
    assert_eq!((get(&p, &st, "global.n"), get(&p, &st, "global.go")), (4, 0));
    same(&st);
    play(&p, &mut st, "once(global)");
    assert_eq!(get(&p, &st, "global.n"), 4, "a false condition runs no target");
    // Decided once per description from a class constant (the fast tier's plan): both targets.
    play(&p, &mut st, "twice(global)");
    assert_eq!(get(&p, &st, "global.n"), 10);
    same(&st);
    // A cycle through a later target is still refused.
    let cyc = src.replace("consequence dbl direct global.n = global.n * long 2", "consequence dbl conditional boolean true addOne both");
    let d = util::compile_err(&cyc);
    assert!(d.errors().any(|e| matches!(e.kind, playforge::wgdl::DiagKind::ConsequenceCycle { .. })), "{d}");
}

#[test]
fn unless_with_several_actions_needs_all_of_them_without_a_move() {
    let src = format!(
        "{GLOBAL}attribute globalClass j boolean false
attribute globalClass k boolean false
action globalClass step
action globalClass jump
condition jump global.j
action globalClass kingJump
condition kingJump global.k
consequence setK direct global.k = boolean true
consequence kToJ direct global.k = boolean false
consequence setJ direct global.j = boolean true
consequence clearJ direct global.j = boolean false
hasConsequence step setK
hasConsequence kingJump kToJ
hasConsequence kingJump setJ
hasConsequence jump clearJ
unless step jump kingJump
goal 1 game.moves > long 100
"
    );
    let (p, mut st) = start(&src);
    assert_eq!(names(&p, &st), ["step(global)"]);
    play(&p, &mut st, "step(global)");
    assert_eq!(names(&p, &st), ["kingJump(global)"], "a kingJump rules step out");
    play(&p, &mut st, "kingJump(global)");
    assert_eq!(names(&p, &st), ["jump(global)"], "so does a jump");
    play(&p, &mut st, "jump(global)");
    assert_eq!(names(&p, &st), ["step(global)"]);
    // The same as two lines.
    let (p2, st2) = start(&src.replace("unless step jump kingJump", "unless step jump\nunless step kingJump"));
    let mut st2 = st2;
    play(&p2, &mut st2, "step(global)");
    assert_eq!(names(&p2, &st2), ["kingJump(global)"]);
    // An unknown name among them is an error at that name.
    let d = util::compile_err(&src.replace("unless step jump kingJump", "unless step jump kingJmp"));
    assert!(d.to_string().contains("kingJmp"), "{d}");
}

#[test]
fn operator_precedence_is_the_thesis_list() {
    let src = format!(
        "{GLOBAL}attribute globalClass a long 0
attribute globalClass b long 0
attribute globalClass c long 0
attribute globalClass d long 0
attribute globalClass e boolean false
attribute globalClass f boolean true
action globalClass eval
consequence p1 direct global.a = long 2 + long 5 * long 7
consequence p2 direct global.b = (long 2 + long 5) * long 7
consequence p3 direct global.c = long 12 * long 6 / long 4
consequence p4 direct global.d = long 10 - long 3 - long 2
consequence p5 direct global.e = long 1 + long 2 == long 3
consequence p6 direct global.f = boolean false && boolean true || boolean true
hasConsequence eval p1
hasConsequence eval p2
hasConsequence eval p3
hasConsequence eval p4
hasConsequence eval p5
hasConsequence eval p6
goal 1 global.a > long 100
"
    );
    let (p, mut st) = start(&src);
    play(&p, &mut st, "eval(global)");
    assert_eq!(get(&p, &st, "global.a"), 37, "2 + 5 * 7");
    assert_eq!(get(&p, &st, "global.b"), 49, "(2 + 5) * 7");
    assert_eq!(get(&p, &st, "global.c"), 12, "`/` binds tighter than `*`: 12 * (6 / 4)");
    assert_eq!(get(&p, &st, "global.d"), 5, "left-associative: (10 - 3) - 2");
    assert_eq!(get(&p, &st, "global.e"), 1, "comparison below arithmetic");
    assert_eq!(get(&p, &st, "global.f"), 0, "`||` binds tighter than `&&`: false && (true || true)");
}

// ---------------------------------------------------------------- time

#[test]
fn default_and_per_action_durations_advance_the_clock() {
    let src = format!(
        "{GLOBAL}attribute globalClass seen long -1
duration long 10
duration slow long 30
action globalClass work
action globalClass slow
consequence stamp direct global.seen = game.time
hasConsequence work stamp
goal 1 global.seen > long 10000
"
    );
    let (p, mut st) = start(&src);
    play(&p, &mut st, "work(global)");
    assert_eq!((st.clock, get(&p, &st, "global.seen")), (10, 0), "consequences see the clock before the move's duration");
    play(&p, &mut st, "slow(global)");
    assert_eq!(st.clock, 40);
    play(&p, &mut st, "work(global)");
    assert_eq!((st.clock, get(&p, &st, "global.seen")), (50, 40));
}

const SESSIONS: &str = "class globalClass
attribute globalClass log long 0
attribute globalClass sessionsSeen long 0
object global is globalClass
initial global
session length long 100
session pause long 50
duration long 10
action globalClass work
action globalClass arm
action globalClass rest
action globalClass look
consequence a direct global.log = global.log * long 10 + long 1
consequence b direct global.log = global.log * long 10 + long 2
consequence armA timed long 105 a
consequence armB timed long 120 b
hasConsequence arm armB
hasConsequence arm armA
consequence stop endSession
hasConsequence rest stop
consequence stamp direct global.sessionsSeen = game.sessionsFinished
hasConsequence look stamp
goal 1 global.log > long 100000
";

#[test]
fn end_session_jumps_the_clock_through_the_pause_and_fires_due_timers_in_order() {
    let (p, mut st) = start(SESSIONS);
    play(&p, &mut st, "arm(global)");
    // Scheduled b (t=120) first, then a (t=105); both fall in the pause 100..150.
    assert_eq!((st.clock, st.timers.len()), (10, 2));
    play(&p, &mut st, "rest(global)");
    assert_eq!((st.clock, st.sessions), (150, 1), "the next session starts at 100 + 50");
    assert_eq!(get(&p, &st, "global.log"), 12, "a (due 105) fired before b (due 120)");
    play(&p, &mut st, "look(global)");
    assert_eq!(get(&p, &st, "global.sessionsSeen"), 1, "game.sessionsFinished");
}

#[test]
fn an_action_that_reaches_the_session_end_ends_the_session() {
    let (p, mut st) = start(SESSIONS);
    for _ in 0..9 {
        play(&p, &mut st, "work(global)");
    }
    assert_eq!((st.clock, st.sessions), (90, 0));
    play(&p, &mut st, "work(global)");
    assert_eq!((st.clock, st.sessions), (150, 1));
    play(&p, &mut st, "rest(global)");
    assert_eq!((st.clock, st.sessions), (300, 2), "session 2 starts at 2 × (100 + 50)");
}

#[test]
fn end_session_without_a_session_length_only_counts_the_session() {
    let src = SESSIONS.replace("session length long 100\nsession pause long 50\n", "");
    let (p, mut st) = start(&src);
    play(&p, &mut st, "rest(global)");
    assert_eq!((st.clock, st.sessions), (10, 1));
}

// ---------------------------------------------------------------- deletion

const CROPS: &str = "class globalClass
attribute globalClass ticks long 0
object global is globalClass
initial global
class seed
object wheatSeed is seed
class weed
object dandelion is weed
initial dandelion
class farm
object field is farm
initial field
class crop
object wheat is crop
initial wheat
action crop grow
action crop harvest
consequence tick direct global.ticks = global.ticks + long 1
consequence later timed long 50 tick
hasConsequence grow later
consequence gone delete this
hasConsequence harvest gone
action farm sow forEveryGOD seed
hasConsequence sow later
action weed pull
hasConsequence pull gone
action globalClass wait
duration wait long 100
goal 1 global.ticks > long 100
";

#[test]
fn deleting_an_object_removes_its_actions_and_its_timers() {
    let (p, mut st) = start(CROPS);
    play(&p, &mut st, "grow(wheat)");
    assert_eq!(st.timers.len(), 1);
    play(&p, &mut st, "harvest(wheat)");
    assert!(st.timers.is_empty(), "the wheat's timer died with it");
    assert!(names(&p, &st).iter().all(|n| !n.contains("wheat)")), "{:?}", names(&p, &st));
    play(&p, &mut st, "wait(global)");
    assert_eq!(get(&p, &st, "global.ticks"), 0);
    // Control: without the harvest the timer fires.
    let (p, mut st) = start(CROPS);
    play(&p, &mut st, "grow(wheat)");
    play(&p, &mut st, "wait(global)");
    assert_eq!(get(&p, &st, "global.ticks"), 1);
}

#[test]
fn deleting_an_object_keeps_other_objects_timers_bound_to_a_description() {
    // `sow` binds a description (wheatSeed, description #1); the dandelion is object #1. Deleting
    // the dandelion must not cancel the field's timer.
    let (p, mut st) = start(CROPS);
    assert_eq!(obj(&p, &st, "dandelion", 1), 1);
    assert_eq!(p.gods.iter().position(|g| g.name == "wheatSeed"), Some(1));
    play(&p, &mut st, "sow(field, wheatSeed)");
    play(&p, &mut st, "pull(dandelion)");
    assert_eq!(st.timers.len(), 1, "the field's timer is still pending");
    play(&p, &mut st, "wait(global)");
    assert_eq!(get(&p, &st, "global.ticks"), 1);
}

#[test]
fn deleting_the_bound_instance_cancels_timers_bound_to_it() {
    let src = CROPS.replace(
        "action globalClass wait\n",
        "action farm tend forEveryInstance crop\nhasConsequence tend later\naction globalClass wait\n",
    );
    let (p, mut st) = start(&src);
    play(&p, &mut st, "tend(field, wheat)");
    assert_eq!(st.timers.len(), 1);
    play(&p, &mut st, "harvest(wheat)");
    assert!(st.timers.is_empty(), "the timer was bound to the wheat");
}

#[test]
fn inherited_actions_and_create_hooks_come_first_whatever_the_declaration_order() {
    // The subclass's action and hook are declared before the parent's.
    let src = format!(
        "{GLOBAL}attribute globalClass log long 0
class building
class house : building
object cottage is house
initial cottage
action house tax
action create:house houseHook
action building collect
action create:building buildingHook
consequence logHouse direct global.log = global.log * long 10 + long 2
consequence logBuilding direct global.log = global.log * long 10 + long 1
hasConsequence houseHook logHouse
hasConsequence buildingHook logBuilding
goal 1 global.log > long 100000
"
    );
    let (p, st) = start(&src);
    assert_eq!(names(&p, &st), ["collect(cottage)", "tax(cottage)"]);
    assert_eq!(get(&p, &st, "global.log"), 12, "the building hook ran before the house hook");
}

// ---------------------------------------------------------------- time edge cases

#[test]
fn end_session_from_a_timer_ends_the_session_at_the_timers_time() {
    // A timer due at t = 30 ends the session; the move that spans it (10 s at t = 25) must not
    // run on to the session's scheduled end, and the next move starts the next session.
    let src = SESSIONS.to_string()
        + "action globalClass alarm\nconsequence ring endSession\nconsequence ringLater timed long 30 ring\nhasConsequence alarm ringLater\n";
    let (p, mut st) = start(&src);
    play(&p, &mut st, "alarm(global)");
    assert_eq!((st.clock, st.sessions), (10, 0));
    play(&p, &mut st, "work(global)");
    assert_eq!((st.clock, st.sessions), (20, 0));
    play(&p, &mut st, "work(global)");
    assert_eq!(st.sessions, 1, "the timer at t = 30 ended the session during the move");
    assert_eq!(st.clock, 150, "the clock went through the pause to the next session's start");
}

#[test]
fn rules_reading_the_clock_fire_after_the_clock_moves() {
    let src = "class g\nattribute g seen long 0\nobject global is g\ninitial global\nduration long 10\naction g tick\naction late\ncondition late game.time >= long 10\ncondition late global.seen == long 0\nconsequence mark direct global.seen = game.time\nhasConsequence late mark\ngoal 1 global.seen > long 100\n";
    let (p, mut st) = start(src);
    play(&p, &mut st, "tick(global)");
    assert_eq!(get(&p, &st, "global.seen"), 10, "the rule saw t = 10 right after the first move");
}

#[test]
fn a_timer_that_re_arms_itself_with_no_delay_is_a_runaway_not_a_hang() {
    let src = "class g\nattribute g n long 0\nobject global is g\ninitial global\nduration long 1\naction g go\nconsequence again timed long 0 again\nhasConsequence go again\ngoal 1 global.n > long 1\n";
    let (p, mut st) = start(src);
    let a = legal(&p, &st)[0];
    let e = p.apply(&mut st, a).unwrap_err();
    assert!(matches!(e.kind, playforge::wgdl::RtKind::RunawayTimers { .. }), "{e:?}");
    assert!(e.render(&p).contains("test.wgdl:7:1"), "{}", e.render(&p));
}

#[test]
fn a_negative_duration_is_a_runtime_error() {
    let src =
        "class g\nattribute g d long -5\nobject global is g\ninitial global\naction g go\nduration go global.d\ngoal 1 global.d > long 1\n";
    let (p, mut st) = start(src);
    let a = legal(&p, &st)[0];
    let e = p.apply(&mut st, a).unwrap_err();
    assert!(matches!(e.kind, playforge::wgdl::RtKind::NegativeDelay { delay: -5 }), "{e:?}");
}

// ---------------------------------------------------------------- syntax leniency and lints

#[test]
fn type_words_are_case_insensitive_and_duration_takes_a_path() {
    let src = "class g\nattribute g speed Long 7\nattribute g ok BOOLEAN True\nattribute g label STRING hi\nobject global is g\ninitial global\nduration global.speed\naction g go\ngoal 1 game.time >= Long 14\n";
    let (p, mut st) = start(src);
    play(&p, &mut st, "go(global)");
    assert_eq!(st.clock, 7);
    play(&p, &mut st, "go(global)");
    assert_eq!(st.goal, 1);
}

fn warnings(src: &str) -> Vec<String> {
    util::compile(src).warnings.items.iter().map(|d| d.kind.to_string()).collect()
}

#[test]
fn precedence_traps_are_warned_about() {
    let base = "class g\nattribute g a long 1\nattribute g b boolean true\nobject global is g\ninitial global\naction g go\nconsequence set direct global.a = global.a + long 1\nhasConsequence go set\ngoal 1 global.a > long 3\n";
    let with = |line: &str| warnings(&format!("{base}{line}\n"));
    assert!(with("condition go global.b == true && global.a > 0").iter().any(|w| w.contains("`a == (b && c)`")));
    assert!(with("condition go global.b && global.b || global.b").iter().any(|w| w.contains("`a && (b || c)`")));
    assert!(with("condition go global.b || global.b && global.b").iter().any(|w| w.contains("`(a || b) && c`")));
    assert!(with("condition go global.a * 6 / 4 > 1").iter().any(|w| w.contains("`a * (b / c)`")));
    assert!(with("condition go (global.b == true) && global.a > 0").iter().all(|w| !w.contains("precedence")));
}

#[test]
fn precedence_traps_are_warned_about_on_every_kind_of_line() {
    // Before, only conditions, goals, durations and some consequences were linted: the issue's
    // `winner` line below passed `check` and then won the game for `x` at move 0.
    let ttt = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/games/tictactoe.wgdl")).expect("tictactoe.wgdl");
    let with = |line: &str| warnings(&format!("{ttt}{line}\n"));
    let trap = |line: &str, reads: &str| {
        let w = with(line);
        assert!(w.iter().any(|w| w.contains(reads)), "`{line}`: no warning saying {reads}: {w:?}");
    };
    let eq_and = "`a == (b && c)`";
    trap("winner x x.won == false && game.moves >= 3", eq_and);
    trap("draw o.won == false && game.moves >= 9", eq_and);
    trap("constraint x.won == false && o.won", eq_and);
    trap("policy p mark max c * 6 / 4", "`a * (b / c)`");
    trap("policy p mark first if x.won == false && o.won", eq_and);
    trap("policy p mark weight 4 * 3 / 2", "`a * (b / c)`");
    trap("choose mark 1 by c * 6 / 4", "`a * (b / c)`");
    trap("notation mark c if x.won == false && o.won", eq_and);
    let turn = warnings(&ttt.replace("turn player side\n", "turn player side while x.won == false && o.won\n"));
    assert!(turn.iter().any(|w| w.contains(eq_and)), "{turn:?}");
    // Inside a built-in's arguments and a cell index.
    trap("winner x board.line(x.side * 6 / 4, 0, 1, 0) >= 3", "`a * (b / c)`");
    trap("winner x board[4 * 3 / 2] == 1", "`a * (b / c)`");
    // The other side of `==`: `x || y == z` reads `(x || y) == z`.
    trap("winner x x.won || o.won == false", "`(a || b) == c`");
    // Brackets say what is meant: no warning.
    let clean = with("winner x (x.won == false) && game.moves >= 3");
    assert!(clean.iter().all(|w| !w.contains("precedence")), "{clean:?}");
    // No warning on the unchanged game.
    assert!(warnings(&ttt).iter().all(|w| !w.contains("precedence")));
}

#[test]
fn a_game_value_nothing_increases_is_warned_about() {
    let src = "class g\nattribute g a long 0\nobject global is g\ninitial global\naction g go\nconsequence c game increase missions, done\nhasConsequence go c\ngoal 1 game.missions.done >= long 1\ngoal 2 game.missions.dnoe >= long 2\n";
    let w = warnings(src);
    assert!(w.iter().any(|w| w.contains("`missions.dnoe` is never increased")), "{w:?}");
    assert!(!w.iter().any(|w| w.contains("`missions.done` is never")), "{w:?}");
}

#[test]
fn deleted_objects_cannot_be_read_through_this_after_delete() {
    let src = "class g\nattribute g n long 0\nobject global is g\ninitial global\nclass t\nattribute t v long 3\nobject tree is t\ninitial tree\naction t fell\nconsequence gone delete this\nconsequence read direct global.n = this.v\nhasConsequence fell gone\nhasConsequence fell read\ngoal 1 global.n > long 1\n";
    let (p, mut st) = start(src);
    let a = legal(&p, &st).into_iter().find(|a| p.action_name(&st, *a) == "fell(tree)").unwrap();
    let e = p.apply(&mut st, a).unwrap_err();
    assert!(matches!(e.kind, playforge::wgdl::RtKind::DeadObject { .. }), "{e:?}");
}

#[test]
fn a_session_start_rule_may_end_the_new_session_even_when_rules_read_the_clock() {
    // `skip` ends every session that starts with global.tired set; `clock` merely reads the time.
    let src = "class g\nattribute g tired boolean false\nattribute g t long 0\nobject global is g\ninitial global\nsession length long 100\nsession pause long 50\nduration long 10\naction g rest\nconsequence tire direct global.tired = true\nconsequence stop endSession\nhasConsequence rest tire\nhasConsequence rest stop\naction skip\ncondition skip global.tired\ncondition skip game.sessionsFinished == long 1\nconsequence skipIt endSession\nhasConsequence skip skipIt\naction clock\ncondition clock game.time > global.t\nconsequence see direct global.t = game.time\nhasConsequence clock see\ngoal 1 game.sessionsFinished >= long 5\n";
    let (p, mut st) = start(src);
    play(&p, &mut st, "rest(global)");
    assert_eq!(st.sessions, 2, "session 2 began with `skip` holding and ended at once");
    assert_eq!(st.clock, 300);
}

#[test]
fn session_time_is_zero_during_a_pause() {
    let src = "class g\nattribute g seen long -1\nobject global is g\ninitial global\nsession length long 100\nsession pause long 50\naction g arm\nconsequence look direct global.seen = game.sessionTime\nconsequence later timed long 120 look\nhasConsequence arm later\naction g rest\nconsequence stop endSession\nhasConsequence rest stop\ngoal 1 game.sessionsFinished >= long 3\n";
    let (p, mut st) = start(src);
    play(&p, &mut st, "arm(global)");
    play(&p, &mut st, "rest(global)");
    assert_eq!(get(&p, &st, "global.seen"), 0, "the timer fired at t = 120, inside the pause");
}

#[test]
fn a_timer_scheduled_before_delete_this_does_not_fire() {
    let src = "class g\nattribute g n long 0\nobject global is g\ninitial global\nduration long 10\nclass t\nobject tree is t\ninitial tree\naction t fell\nconsequence bump direct global.n = global.n + long 1\nconsequence bumpLater timed long 5 bump\nconsequence gone delete this\nhasConsequence fell bumpLater\nhasConsequence fell gone\naction g wait\ngoal 1 global.n > long 5\n";
    let (p, mut st) = start(src);
    play(&p, &mut st, "fell(tree)");
    play(&p, &mut st, "wait(global)");
    assert_eq!(get(&p, &st, "global.n"), 0);
}

#[test]
fn a_per_action_duration_may_start_with_a_bracket() {
    let src = "class g\nattribute g x long 2\nobject global is g\ninitial global\naction g sleep\nduration sleep (global.x + long 1) * long 2\ngoal 1 game.time > long 100\n";
    let (p, mut st) = start(src);
    play(&p, &mut st, "sleep(global)");
    assert_eq!(st.clock, 6);
}

// ---------------------------------------------------------------- move generation short cuts

/// Two players, each with two tools; `fallback` is dropped while any `fire` is legal. Move
/// generation passes over the other player's tools at once (every tool action opens with
/// `this.owner == game.actor`) and stops evaluating `fallback` once a `fire` is listed: the
/// lists must still be the filter's.
const TOOLS: &str = "players a b
turn p side
class p
attribute p side long 0
object a is p
object b is p
attribute b side 1
initial a
initial b
class tool
attribute tool owner object:p null
attribute tool ok boolean false
object t1 is tool
attribute t1 owner object:a
object t2 is tool
attribute t2 owner object:a
object t3 is tool
attribute t3 owner object:b
attribute t3 ok true
initial t1
initial t2
initial t3
action tool fire
condition fire this.owner == game.actor
condition fire this.ok
action tool fallback
condition fallback this.owner == game.actor
unless fallback fire
action tool arm
condition arm this.owner == game.actor
condition arm !this.ok
consequence armIt direct this.ok = true
consequence pass endTurn
hasConsequence fire pass
hasConsequence fallback pass
hasConsequence arm armIt
";

#[test]
fn unless_and_actor_gates_give_the_filters_lists() {
    let (p, mut st) = start(TOOLS);
    // No `fire` anywhere: every `fallback` of a's tools stays; b's tools have no move.
    assert_eq!(names(&p, &st), ["fallback(t1)", "arm(t1)", "fallback(t2)", "arm(t2)"]);
    // t2 armed: its `fire` comes after t1's `fallback`, which the filter then drops.
    play(&p, &mut st, "arm(t2)");
    assert_eq!(names(&p, &st), ["arm(t1)", "fire(t2)"]);
    // Both armed: t1's `fire` is listed before t2's `fallback` is reached.
    play(&p, &mut st, "arm(t1)");
    assert_eq!(names(&p, &st), ["fire(t1)", "fire(t2)"]);
    // b's turn: only its tool.
    play(&p, &mut st, "fire(t1)");
    assert_eq!(names(&p, &st), ["fire(t3)"]);
}

/// Writing through an object path (`this.next.n = …`): the value is computed first, so its
/// error wins over a null path; then a null or deleted target is an error naming the path.
#[test]
fn writing_through_a_null_path_is_a_runtime_error_after_the_value() {
    let src = "class box
attribute box n long 0
attribute box next object:box null
object a is box
object b is box
attribute a next object:b
initial b
initial a
action box poke
consequence writeNext direct this.next.n = 10 / this.n
hasConsequence poke writeNext
action box bump
consequence bumpIt direct this.n = this.n + 1
hasConsequence bump bumpIt
";
    let (p, mut st) = start(src);
    let def = p.actions.iter().position(|a| a.name == "poke").expect("poke") as u16;
    let poke = |o: u32| Action { def, this: o, bound: NONE };
    let (a, b) = (obj(&p, &st, "a", 1), obj(&p, &st, "b", 1));
    // a.n = 0: the division fails before a.next is looked at; b.next is null, also second.
    for o in [a, b] {
        let e = p.apply(&mut st.clone(), poke(o)).expect_err("10 / 0");
        assert!(matches!(e.kind, RtKind::DivisionByZero), "{e:?}");
    }
    play(&p, &mut st, "bump(a)");
    play(&p, &mut st, "bump(b)");
    play(&p, &mut st, "poke(a)");
    assert_eq!(get(&p, &st, "b.n"), 10, "written through a.next");
    let e = p.apply(&mut st.clone(), poke(b)).expect_err("b.next is null");
    assert!(matches!(&e.kind, RtKind::NullPath { attr } if attr == "this.next"), "{e:?}");
}

// ---------------------------------------------------------------- fixed turn order

/// Two sides of two players each; `extra` is appended to the game.
fn turn_game(order: &str, extra: &str) -> std::sync::Arc<Program> {
    let src = format!(
        "players red blue
turn p side while this.hp > 0
turnOrder {order}
class p
attribute p side long 0
attribute p hp long 2
object r1 is p
object r2 is p
object b1 is p
attribute b1 side 1
object b2 is p
attribute b2 side 1
initial r1
initial r2
initial b1
initial b2
action p pass
condition pass this == game.actor
consequence passTurn endTurn
hasConsequence pass passTurn
{extra}"
    );
    util::compile(&src).program
}

/// `next_actor` walks a fixed list when no consequence can change the order and the order is
/// creation order; otherwise (a side written, a turn object created, alternating sides) it
/// ranks the objects as before.
#[test]
fn the_turn_order_is_fixed_only_when_nothing_can_change_it() {
    assert_eq!(turn_game("grouped", "").turn_order, Some(vec![0, 1, 2, 3]));
    assert_eq!(turn_game("alternating", "").turn_order, None, "alternating is not creation order");
    let flip = "consequence flip direct this.side = 1 - this.side\nhasConsequence pass flip\n";
    assert_eq!(turn_game("grouped", flip).turn_order, None, "a side is written");
    let spawn = "consequence spawn create r1\nhasConsequence pass spawn\n";
    assert_eq!(turn_game("grouped", spawn).turn_order, None, "a turn object is created");
    let other = "class coin\nobject c is coin\nconsequence spawn create c\nhasConsequence pass spawn\n";
    assert_eq!(turn_game("grouped", other).turn_order, Some(vec![0, 1, 2, 3]), "other objects may be created");
    for g in ["connect_four.wgdl", "hex_arena.wgdl", "tictactoe.wgdl"] {
        assert!(util::game(g).program.turn_order.is_some(), "{g}");
    }
    // A parameter that is a side is read from the values given.
    let src = "players red blue
turn p side
class p
attribute p side long 0
object a is p
object b is p
initial a
initial b
parameter a.side 0 1
action p pass
condition pass this == game.actor
consequence passTurn endTurn
hasConsequence pass passTurn
";
    let p = util::compile(src).program;
    assert_eq!(p.turn_order, Some(vec![0, 1]));
    assert_eq!(p.with_parameters(&[1.0]).expect("in range").turn_order, None, "a on side 1 moves after b");
}

/// The fixed list and the ranking give the same games: random moves on the shipped games with
/// turns and on a game whose players drop out (`while this.hp > 0`), with and without the list.
#[test]
fn a_fixed_turn_order_plays_as_the_ranking_does() {
    use rand::RngExt;
    let hurt = "action p hit forEveryInstance p
condition hit this == game.actor
condition hit p.hp > 0
consequence hurt direct p.hp = p.hp - 1
consequence hitPass endTurn
hasConsequence hit hurt
hasConsequence hit hitPass
";
    let mut programs: Vec<std::sync::Arc<Program>> =
        ["connect_four.wgdl", "hex_arena.wgdl", "tictactoe.wgdl"].iter().map(|g| util::game(g).program).collect();
    programs.push(turn_game("grouped", hurt));
    for fixed in programs {
        assert!(fixed.turn_order.is_some());
        let mut ranked = (*fixed).clone();
        ranked.turn_order = None;
        for seed in 0..20 {
            let mut r = playforge::rng::stream(seed, 7, 0, 0);
            let (mut a, mut b) = (fixed.initial_state().unwrap(), ranked.initial_state().unwrap());
            for _ in 0..300 {
                assert_eq!((a.actor, a.round, a.turns), (b.actor, b.round, b.turns));
                assert!(a == b);
                let m = legal(&fixed, &a);
                assert_eq!(m, legal(&ranked, &b));
                if m.is_empty() {
                    break;
                }
                let pick = m[r.random_range(0..m.len())];
                fixed.apply(&mut a, pick).unwrap();
                ranked.apply(&mut b, pick).unwrap();
            }
        }
    }
}
