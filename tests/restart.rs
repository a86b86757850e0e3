//! Restarting a finished run: `Agent::restart` and the `stratagem.restart` signal, for a
//! behaviour tree and for an FSM in a terminal state; other strategies refuse.

use std::time::Duration;

use stratagem::AgentError;
use stratagem::prelude::*;
use stratagem::strategy::RESTART_SIGNAL;

/// Counts to three, then succeeds.
#[agent(strategy = BehaviorTree, tick = 100ms, tree = {
    sequence {
        action count
        action count
        action count
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Counter {
    count: u32,
}

#[action]
fn count(counter: &mut Counter) {
    counter.count += 1;
}

#[tokio::test(start_paused = true)]
async fn a_finished_tree_restarts_with_the_method_and_the_signal() {
    let mut counter = Counter::new();
    counter.tick();
    assert_eq!(counter.snapshot().status, Status::Success);
    counter.tick();
    assert_eq!(counter.state().count, 3, "a finished tree does nothing");

    assert!(counter.restart().unwrap().is_empty());
    let snapshot = counter.snapshot();
    assert_eq!(snapshot.status, Status::Running, "ready to be ticked again");
    assert_eq!(snapshot.details["ticks"], 0);
    counter.tick();
    assert_eq!(counter.state().count, 6);

    // The server: the signal restarts it and the server ticks it to the end again.
    let server = AgentServer::start(counter, Options::default())
        .await
        .unwrap();
    server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    server
        .call(Signal::new(RESTART_SIGNAL, json!({})))
        .await
        .unwrap();
    let done = server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success);
    assert_eq!(server.state().await.unwrap().count, 9);
    server.stop().await;
}

/// A delivery that ends delivered or lost; a lost one can be retried from the start.
#[agent(
    strategy = Fsm,
    transitions {
        initial Packed
        terminal Delivered
        terminal Lost as failure
        enter Packed do pack
        Packed -> Delivered on deliver
        Packed -> Lost on lose
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Parcel {
    packed: u32,
}

#[action]
fn pack(parcel: &mut Parcel) {
    parcel.packed += 1;
}

#[test]
fn an_fsm_restarts_from_a_terminal_state_only() {
    let mut parcel = Parcel::new();
    parcel.cmd(ParcelEvent::Deliver).unwrap();
    assert_eq!(parcel.state().packed, 1);

    parcel.restart().unwrap();
    assert_eq!(parcel.fsm_state(), ParcelState::Packed);
    assert_eq!(
        parcel.state().packed,
        2,
        "the initial state was entered again"
    );
    assert_eq!(parcel.snapshot().status, Status::Idle);

    // Not finished: refused, nothing changes.
    let refused = parcel.restart().unwrap_err();
    assert!(
        matches!(&refused, AgentError::NotRestartable { agent, reason } if agent == "Parcel" && reason.contains("`Packed`")),
        "{refused}"
    );
    assert_eq!(parcel.state().packed, 2);

    // The signal, through routing.
    parcel.cmd(ParcelEvent::Lose).unwrap();
    assert_eq!(parcel.snapshot().status, Status::Failure);
    let out = parcel.handle_signal(&Signal::new(RESTART_SIGNAL, json!({})));
    assert!(out.iter().all(|d| d.as_error().is_none()), "{out:?}");
    assert_eq!(parcel.fsm_state(), ParcelState::Packed);
    assert_eq!(parcel.state().packed, 3);
}

#[agent(strategy = Direct)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Plain {}

#[test]
fn other_strategies_refuse_to_restart() {
    let mut plain = Plain::new();
    let refused = plain.restart().unwrap_err();
    assert_eq!(
        refused.to_string(),
        "cannot restart agent `Plain`: its strategy has no run to start over"
    );
}
