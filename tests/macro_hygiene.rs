//! `#[action]` and `#[agent]` on items a `macro_rules!` wrote, and on items inside functions and
//! modules with unusual names: nothing the macros generate may meet a name of the user's.
//! Compiling this file is most of the test; the assertions check the items still work.

use stratagem::prelude::*;
use stratagem::{FsmError, Runner};

/// Writes an action whose every token, return type included, comes from a `macro_rules!`.
macro_rules! counting_action {
    ($name:ident, $state:ty, $by:expr) => {
        #[action]
        fn $name(state: &mut $state) -> Result<(), ActionError> {
            state.count += $by;
            Ok(())
        }
    };
}

/// Writes a whole agent (struct and attribute) from a `macro_rules!`.
macro_rules! direct_agent {
    ($name:ident, [$($action:ident),*]) => {
        #[agent(strategy = Direct, actions [$($action),*])]
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        struct $name {
            count: u32,
        }
    };
}

direct_agent!(Made, [bump, output, state, params, __state]);
counting_action!(bump, Made, 1);

// Functions named like the locals generated code used to have.
#[action]
fn output(made: &mut Made) {
    made.count += 10;
}

#[action]
fn state(made: &mut Made) {
    made.count += 100;
}

#[action]
fn __state(made: &mut Made) {
    made.count += 10_000;
}

#[derive(Debug, Deserialize, JsonSchema)]
struct By {
    by: u32,
}

#[action]
fn params(made: &mut Made, by: By) {
    made.count += by.by;
}

#[test]
fn agents_and_actions_written_by_macro_rules_work() {
    let mut made = Agent::new(Made::default());
    for name in ["bump", "output", "state", "__state"] {
        let out = made.cmd(Instruction::new(name, serde_json::json!(null)));
        assert!(out.is_empty(), "{name}: {out:?}");
    }
    made.cmd(Instruction::new("params", serde_json::json!({"by": 1000})));
    assert_eq!(made.state().count, 11_111);
}

/// Guards named like the generated transition function's arguments.
mod r#type {
    use stratagem::prelude::*;

    #[agent(
        strategy = Fsm,
        transitions {
            initial Idle
            Idle -> Busy on go if agent
            Idle -> Busy on go if params
            Busy -> Idle on stop if from
            Busy -> Idle on stop if event
        }
    )]
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct Gate {
        pub open: bool,
        pub second: bool,
    }

    pub fn agent(gate: &Gate) -> bool {
        gate.open
    }

    pub fn params(gate: &Gate) -> bool {
        gate.second
    }

    pub fn from(gate: &Gate) -> bool {
        !gate.open
    }

    pub fn event(_: &Gate) -> bool {
        true
    }
}

#[test]
fn guards_may_share_names_with_generated_arguments() {
    use r#type::{Gate, GateEvent, GateState};
    let mut gate = Agent::new(Gate {
        open: false,
        second: true,
    });
    gate.cmd(GateEvent::Go).expect("`params` holds");
    assert_eq!(gate.fsm_state(), GateState::Busy);
    gate.cmd(GateEvent::Stop).expect("`from` holds");
    assert_eq!(gate.fsm_state(), GateState::Idle);
    gate.state_mut().second = false;
    let refused = gate.cmd(GateEvent::Go).unwrap_err();
    assert!(
        matches!(&refused, FsmError::GuardRejected { .. } if refused.guards().iter().map(|g| g.as_ref()).eq(["agent", "params"])),
        "{refused:?}"
    );
}

/// An async action from a `macro_rules!`: its `.await` and outcome are generated around
/// tokens of the macro's.
macro_rules! counting_async {
    ($name:ident, $state:ty) => {
        #[action]
        async fn $name(state: &$state) -> Result<Outcome, ActionError> {
            Ok(Outcome::new().set(serde_json::json!({"turns": state.turns + 10})))
        }
    };
}

#[tokio::test]
async fn agents_and_actions_inside_a_function_work() {
    #[agent(strategy = Direct, actions [turn, fetch])]
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    struct Local {
        turns: u32,
    }

    #[action]
    fn turn(local: &mut Local) {
        local.turns += 1;
    }

    counting_async!(fetch, Local);

    let mut local = Agent::new(Local::default());
    local.cmd(Instruction::new("turn", serde_json::json!(null)));
    let out = Runner::new()
        .run(
            &mut local,
            Instruction::new("fetch", serde_json::json!(null)),
        )
        .await;
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(local.state().turns, 11);
}

/// Names at the edges of what becomes an identifier: events whose variants drop underscores
/// (`a__b` -> `AB`, `_x` -> `X`, `track2_go` -> `Track2Go`), states starting with `_`, and an
/// action written as a raw identifier (`r#tally`, the same function as `tally`).
mod edge_names {
    use stratagem::prelude::*;

    #[agent(strategy = Fsm, transitions {
        initial _Idle
        terminal Done
        _Idle -> _Busy on a__b do r#tally
        _Busy -> _Idle on _x
        _Idle -> Done on track2_go
    })]
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct Edgy {
        pub tallies: u32,
    }

    #[action]
    fn r#tally(edgy: &mut Edgy) {
        edgy.tallies += 1;
    }
}

#[test]
fn names_at_the_edges_of_identifiers_compile_and_run() {
    use edge_names::{Edgy, EdgyEvent, EdgyState};
    let mut edgy = Agent::new(Edgy::default());
    edgy.cmd(EdgyEvent::AB).unwrap();
    assert_eq!(edgy.fsm_state(), EdgyState::_Busy);
    edgy.cmd(EdgyEvent::X).unwrap();
    edgy.cmd(EdgyEvent::Track2Go).unwrap();
    assert_eq!(edgy.fsm_state(), EdgyState::Done);
    assert_eq!(edgy.state().tallies, 1);
}
