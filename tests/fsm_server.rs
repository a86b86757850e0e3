//! An FSM agent under the agent server, with tokio's paused clock: an `after` row's timer fires
//! through the server's real timers and routing, and a timer armed for an earlier visit of the
//! state is ignored.

use std::time::Duration;

use stratagem::prelude::*;
use tokio::time::advance;

/// A contract offer that expires 30 s after it was last offered.
#[agent(
    strategy = Fsm,
    transitions {
        initial Offered
        terminal Signed
        terminal Expired as failure
        Offered -> Offered on remind do remind
        Offered -> Signed  on sign
        Offered -> Expired after 30s do expire
    },
    routes {
        "lease.remind" => remind
        "lease.sign" => sign
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Lease {
    reminders: u32,
    expired: bool,
}

#[action]
fn remind(lease: &mut Lease) {
    lease.reminders += 1;
}

#[action]
fn expire(lease: &mut Lease) {
    lease.expired = true;
}

/// Lets the agent's task handle everything that is due, without moving the clock.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

fn signal(signal_type: &str) -> Signal {
    Signal::new(signal_type, json!({}))
}

#[tokio::test(start_paused = true)]
async fn the_after_timer_fires_through_the_server_and_a_stale_one_is_ignored() {
    let server = AgentServer::start(Lease::new(), Options::default())
        .await
        .unwrap();
    // `init` entered `Offered` and armed its 30 s timer (generation 0).
    settle().await;
    assert_eq!(server.snapshot().await.unwrap().status, Status::Idle);

    // At 20 s the offer is renewed: a self-transition, so `Offered` is entered again and a new
    // timer (generation 1) is due at 50 s. The first one, due at 30 s, is now stale.
    advance(Duration::from_secs(20)).await;
    let outcome = server.call(signal("lease.remind")).await.unwrap();
    assert!(
        matches!(outcome.directives.as_slice(), [Directive::Schedule { delay, .. }] if *delay == Duration::from_secs(30)),
        "{:?}",
        outcome.directives
    );
    assert_eq!(outcome.snapshot.status, Status::Waiting);

    advance(Duration::from_secs(10)).await;
    settle().await;
    let agent = server.agent().await.unwrap();
    assert_eq!(
        agent.fsm_state(),
        LeaseState::Offered,
        "the stale timer fired and was ignored"
    );
    assert!(!agent.state().expired);
    assert_eq!(agent.strategy_state().generation, 1);

    advance(Duration::from_secs(19)).await;
    settle().await;
    assert_eq!(
        server.agent().await.unwrap().fsm_state(),
        LeaseState::Offered,
        "not yet"
    );

    advance(Duration::from_secs(1)).await;
    let snapshot = server
        .await_completion(Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(snapshot.status, Status::Failure);
    assert!(snapshot.done());
    assert_eq!(snapshot.details["state"], "Expired");
    let state = server.state().await.unwrap();
    assert_eq!(
        state,
        Lease {
            reminders: 1,
            expired: true
        }
    );

    let report = server.stop().await;
    assert_eq!(report.timers_fired, 2, "both timers fired; one was stale");
    assert_eq!(report.errors, 0, "a stale timer is ignored, not an error");
    assert!(report.pending_timers.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_timer_for_a_state_the_machine_has_left_is_ignored() {
    let server = AgentServer::start(Lease::new(), Options::default())
        .await
        .unwrap();
    advance(Duration::from_secs(5)).await;
    let outcome = server.call(signal("lease.sign")).await.unwrap();
    assert_eq!(outcome.snapshot.status, Status::Success);

    advance(Duration::from_secs(60)).await;
    settle().await;
    let agent = server.agent().await.unwrap();
    assert_eq!(agent.fsm_state(), LeaseState::Signed);
    assert!(
        !agent.state().expired,
        "the offer's timer did not expire a signed lease"
    );

    let report = server.stop().await;
    assert_eq!(report.timers_fired, 1);
    assert_eq!(report.errors, 0);
    assert_eq!(report.snapshot.unwrap().status, Status::Success);
}
