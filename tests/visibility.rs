//! A `pub` agent whose actions and behaviours are private compiles: what the agent's public
//! impls name of them is as visible as the agent (a lib crate's public agent built from private
//! functions is the common layout, and rustc would otherwise reject it with E0446).

use stratagem::prelude::*;

/// A public agent with a private behaviour and private actions.
#[agent(strategy = BehaviorTree, tree = Rounds)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Guard {
    rounds: u32,
}

bt! {
    for Guard
    behavior Rounds { sequence { action walk  action log_round } }
}

/// A public agent with its tree inline.
#[agent(strategy = BehaviorTree, tree = { sequence { action walk_inline } })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Walker {
    steps: u32,
}

/// A public FSM agent with a private row action.
#[agent(strategy = Fsm, transitions {
    initial Closed
    Closed -> Open on push do swing
    Open -> Closed on pull
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Gate {
    swings: u32,
}

#[action]
fn walk(guard: &mut Guard) {
    guard.rounds += 1;
}

#[action]
fn log_round(_guard: &Guard) {}

#[action]
fn walk_inline(walker: &mut Walker) {
    walker.steps += 1;
}

#[action]
fn swing(gate: &mut Gate) {
    gate.swings += 1;
}

#[test]
fn a_public_agent_runs_private_behaviours_and_actions() {
    let mut guard = Guard::new();
    guard.tick();
    assert_eq!(guard.state().rounds, 1);

    let mut walker = Walker::new();
    walker.tick();
    assert_eq!(walker.state().steps, 1);

    let mut gate = Gate::new();
    gate.cmd(GateEvent::Push).unwrap();
    assert_eq!(gate.state().swings, 1);
}
