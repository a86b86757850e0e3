//! No call into a strategy unwinds into its caller: a panicking FSM guard, behaviour-tree
//! condition, AI step hook or custom strategy behaves like a panicking action, through `cmd`,
//! `handle_signal`, the `Runner` and the server. The agent is unchanged and the error names
//! what panicked.

use stratagem::prelude::*;
use stratagem::strategy::Strategy;
use stratagem::{ActionErrorKind, AgentError, Snapshot};

/// A gate whose guard panics when asked about a broken gate.
#[agent(
    strategy = Fsm,
    transitions {
        initial Closed
        Closed -> Open on open if safe_to_open
        Open -> Closed on close
    },
    routes { "gate.open" => open }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Gate {
    broken: bool,
}

fn safe_to_open(gate: &Gate) -> bool {
    assert!(!gate.broken, "the sensor is broken");
    true
}

fn assert_guard_panicked(error: &AgentError) {
    let AgentError::GuardFailed { guard, error } = error else {
        panic!("expected `GuardFailed`, got {error:?}");
    };
    assert_eq!(guard, "safe_to_open");
    assert_eq!(error.kind(), ActionErrorKind::Panicked);
    assert!(error.message().contains("the sensor is broken"), "{error}");
}

fn broken_gate() -> Agent<Gate> {
    Agent::new(Gate { broken: true })
}

#[tokio::test]
async fn a_panicking_guard_is_a_guard_error_everywhere() {
    // `cmd` with a typed event.
    let mut gate = broken_gate();
    gate.init();
    let before = serde_json::to_value(&gate).unwrap();
    assert_guard_panicked(&gate.cmd(GateEvent::Open).unwrap_err().into());
    assert_eq!(gate.fsm_state(), GateState::Closed);
    // `handle_signal`, and the `Runner`.
    let out = gate.handle_signal(&Signal::new("gate.open", json!({})));
    assert_guard_panicked(out[0].as_error().unwrap());
    let out = Runner::new()
        .signal(&mut gate, &Signal::new("gate.open", json!({})))
        .await;
    assert_guard_panicked(out[0].as_error().unwrap());
    assert_eq!(serde_json::to_value(&gate).unwrap(), before, "unchanged");
    // The server.
    let server = AgentServer::start(broken_gate(), Options::default())
        .await
        .unwrap();
    let outcome = server
        .call(Signal::new("gate.open", json!({})))
        .await
        .unwrap();
    assert_guard_panicked(outcome.errors().next().unwrap());
    assert_eq!(server.agent().await.unwrap().fsm_state(), GateState::Closed);
    server.stop().await;
}

/// A rover whose battery check panics on a missing reading.
#[agent(strategy = BehaviorTree, tree = {
    sequence {
        condition battery_ok
        action drive
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Rover {
    reading: Option<u8>,
    driven: u32,
}

fn battery_ok(rover: &Rover) -> bool {
    rover.reading.expect("no battery reading") > 10
}

#[action]
fn drive(rover: &mut Rover) {
    rover.driven += 1;
}

#[tokio::test(start_paused = true)]
async fn a_panicking_condition_fails_its_node_and_is_reported() {
    let mut rover = Rover::new();
    let out = rover.tick();
    let Some(AgentError::Condition { condition, error }) = out[0].as_error() else {
        panic!("{out:?}")
    };
    assert_eq!(condition, "battery_ok");
    assert_eq!(error.kind(), ActionErrorKind::Panicked);
    assert_eq!(rover.snapshot().status, Status::Failure);
    assert_eq!(rover.state().driven, 0);

    // The server ticks it the same way.
    let server = AgentServer::start(Rover::new(), Options::default())
        .await
        .unwrap();
    let done = server
        .await_completion(std::time::Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Failure);
    let report = server.stop().await;
    assert_eq!(report.errors, 1, "{report:?}");
}

/// A strategy of the user's that panics half-way through a command.
#[derive(Debug, Clone, Copy, Default)]
struct Fragile;

impl<S: AgentSpec<Strategy = Fragile>> Strategy<S> for Fragile {
    type State = u32;

    fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive> {
        for instruction in instructions {
            *agent.strategy_state_mut() += 1;
            assert!(instruction.action != "boom", "fragile strategy broke");
        }
        Vec::new()
    }

    fn snapshot(agent: &Agent<S>) -> Snapshot {
        Snapshot::new(Status::Idle).with_details(json!({ "commands": agent.strategy_state() }))
    }
}

#[agent(strategy = custom(Fragile))]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Vase {
    name: String,
}

fn assert_strategy_panicked(out: &[Directive]) {
    let Some(AgentError::StrategyPanicked { strategy, error }) = out[0].as_error() else {
        panic!("{out:?}")
    };
    assert!(strategy.ends_with("Fragile"), "{strategy}");
    assert!(
        error.message().contains("fragile strategy broke"),
        "{error}"
    );
}

#[tokio::test]
async fn a_panicking_custom_strategy_leaves_the_agent_as_it_was() {
    let mut vase = Vase::new();
    vase.cmd(Instruction::new("fine", json!({})));
    assert_eq!(*vase.strategy_state(), 1);
    let out = vase.cmd(vec![
        Instruction::new("fine", json!({})),
        Instruction::new("boom", json!({})),
    ]);
    assert_strategy_panicked(&out);
    assert_eq!(
        *vase.strategy_state(),
        1,
        "the half-done command was undone"
    );
    let out = Runner::new()
        .run(&mut vase, Instruction::new("boom", json!({})))
        .await;
    assert_strategy_panicked(&out);
    assert_eq!(*vase.strategy_state(), 1);
}

/// Thinks aloud, with a step hook that breaks when the notebook is full.
#[agent(strategy = ChainOfThought, model = "fast", hooks = FRAGILE_HOOKS)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Notebook {
    full: bool,
}

static FRAGILE_HOOKS: stratagem::ai::Hooks<Notebook> =
    stratagem::ai::Hooks::new().on_step_start(|notebook: &Notebook, _step| {
        assert!(!notebook.full, "the notebook is full");
    });

fn assert_hook_panicked(error: &AgentError) {
    let AgentError::Hook { hook, error } = error else {
        panic!("expected `Hook`, got {error:?}");
    };
    assert_eq!(hook, "on_step_start");
    assert_eq!(error.kind(), ActionErrorKind::Panicked);
    assert!(error.message().contains("the notebook is full"), "{error}");
}

#[tokio::test]
async fn a_panicking_step_hook_is_a_hook_error_naming_it_everywhere() {
    let full = || Agent::new(Notebook { full: true });
    let query = Signal::new("ai.query", json!("what is 2 + 2?"));

    // In process: the error names the hook, and the agent is as it was.
    let mut notebook = full();
    let before = serde_json::to_value(&notebook).unwrap();
    let out = notebook.handle_signal(&query);
    assert_hook_panicked(out[0].as_error().expect("an error directive"));
    assert_eq!(serde_json::to_value(&notebook).unwrap(), before);
    assert_eq!(notebook.snapshot().status, Status::Idle);

    // The server: the caller's outcome carries the same error.
    let model = stratagem::ai::ScriptedModel::new().answer("Step 1: 2 + 2 = 4\nConclusion: 4");
    let table = stratagem::ai::ModelTable::standard(std::sync::Arc::new(model), "small", "large");
    let server = AgentServer::start(full(), Options::default().models(table))
        .await
        .unwrap();
    let outcome = server.call(query.clone()).await.unwrap();
    assert_hook_panicked(outcome.errors().next().expect("the hook's error"));
    assert_eq!(outcome.snapshot.status, Status::Idle);
    server.stop().await;
}
