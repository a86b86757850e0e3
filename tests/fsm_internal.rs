//! Self-transitions and internal transitions. `Idle -> Idle on reset` is external: it leaves and
//! re-enters `Idle` (exit and entry actions run, the `after` timer is re-armed, async actions of
//! the state are cancelled). `Idle on ping do count` is internal: only its action runs.

use std::time::Duration;

use stratagem::prelude::*;
use tokio::time::advance;

#[agent(
    strategy = Fsm,
    transitions {
        initial Idle
        terminal Done
        enter Idle do entered
        exit Idle do exited
        Idle on ping do count
        Idle on peek
        Idle -> Idle on reset do count
        Idle -> Done on stop
        Idle -> Done after 10s
    },
    actions [lookup],
    routes {
        "idle.ping" => ping
        "idle.reset" => reset
        "idle.lookup" => lookup
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Idler {
    log: Vec<String>,
}

#[action]
fn entered(idler: &mut Idler) {
    idler.log.push("enter".into());
}

#[action]
fn exited(idler: &mut Idler) {
    idler.log.push("exit".into());
}

#[action]
fn count(idler: &mut Idler) {
    idler.log.push("count".into());
}

#[action]
async fn lookup() -> Outcome {
    tokio::time::sleep(Duration::from_secs(60)).await;
    Outcome::new()
}

fn generation(idler: &Agent<Idler>) -> u64 {
    idler.snapshot().details["generation"].as_u64().unwrap()
}

#[test]
fn an_internal_row_runs_only_its_action() {
    let mut idler = Idler::new();
    idler.init();
    idler.cmd(Instruction::new("lookup", json!({})).with_id("lookup-1"));
    assert_eq!(idler.state().log, ["enter"]);

    let out = idler.cmd(IdlerEvent::Ping).unwrap();
    assert!(
        out.is_empty(),
        "no timer re-armed, nothing cancelled: {out:?}"
    );
    assert_eq!(idler.state().log, ["enter", "count"]);
    assert_eq!(generation(&idler), 0, "the state was not entered again");
    assert_eq!(
        idler.snapshot().status,
        Status::Waiting,
        "a transition fired"
    );
    assert_eq!(idler.snapshot().details["in_flight"], json!(["lookup-1"]));

    // Without an action it changes nothing but the snapshot.
    assert!(idler.cmd(IdlerEvent::Peek).unwrap().is_empty());
    assert_eq!(idler.state().log, ["enter", "count"]);
}

#[test]
fn a_self_transition_leaves_and_enters_the_state() {
    let mut idler = Idler::new();
    idler.init();
    idler.cmd(Instruction::new("lookup", json!({})).with_id("lookup-1"));
    let out = idler.cmd(IdlerEvent::Reset).unwrap();
    assert_eq!(idler.state().log, ["enter", "exit", "count", "enter"]);
    assert_eq!(generation(&idler), 1);
    assert!(
        matches!(out.as_slice(), [
            Directive::CancelInstruction { id },
            Directive::Schedule { delay, .. },
        ] if id == "lookup-1" && *delay == Duration::from_secs(10)),
        "{out:?}"
    );
}

/// A server whose agent got `signal_type` 6 s after it started.
async fn signalled_at_6s(signal_type: &str) -> AgentServer<Idler> {
    let server = AgentServer::start(Idler::new(), Options::default())
        .await
        .unwrap();
    advance(Duration::from_secs(6)).await;
    server
        .call(Signal::new(signal_type, json!({})))
        .await
        .unwrap();
    server
}

#[tokio::test(start_paused = true)]
async fn an_internal_row_keeps_the_timer_a_self_transition_rearms_it() {
    // Pinged at 6 s: the timer armed on entry still fires at 10 s.
    let server = signalled_at_6s("idle.ping").await;
    advance(Duration::from_secs(5)).await;
    let done = server
        .await_completion(Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(done.details["state"], "Done");
    server.stop().await;

    // Reset at 6 s: the state is entered again and its timer now fires at 16 s.
    let server = signalled_at_6s("idle.reset").await;
    advance(Duration::from_secs(5)).await;
    assert_eq!(server.agent().await.unwrap().fsm_state(), IdlerState::Idle);
    advance(Duration::from_secs(5)).await;
    let done = server
        .await_completion(Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(done.details["state"], "Done");
    assert_eq!(
        server.state().await.unwrap().log,
        ["enter", "exit", "count", "enter", "exit"]
    );
    server.stop().await;
}
