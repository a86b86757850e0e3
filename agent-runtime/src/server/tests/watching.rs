//! Watching: every step for `watch`, the latest for `watch_coalesced`, nothing unobserved.

use std::time::Duration;

use serde_json::json;
use tokio::sync::broadcast::error::TryRecvError;

use super::agents::{Worker, signal};
use super::worker;
use crate::server::{AgentServer, Cause, Observation, Options};

type Watcher = tokio::sync::broadcast::Receiver<std::sync::Arc<Observation>>;

/// Observations until they account for `steps` steps (each `1 + skipped`).
async fn received(rx: &mut Watcher, steps: u64) -> Vec<std::sync::Arc<Observation>> {
    let mut all = Vec::new();
    let mut accounted = 0;
    while accounted < steps {
        let observation = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the steps are observed")
            .expect("no lag");
        accounted += 1 + observation.skipped;
        all.push(observation);
    }
    assert_eq!(accounted, steps, "{all:?}");
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
    all
}

/// Casts `0..last` without waiting, then calls with `last`: `last + 1` steps.
async fn record_up_to(server: &AgentServer<Worker>, last: i64) {
    for n in 0..last {
        server.cast(signal("worker.record", json!(n))).unwrap();
    }
    server
        .call(signal("worker.record", json!(last)))
        .await
        .unwrap();
}

fn recorded(observation: &Observation) -> Option<i64> {
    match &observation.cause {
        Cause::Signal { signal, .. } => signal.data.as_i64(),
        _ => None,
    }
}

#[tokio::test]
async fn a_watcher_sees_every_step() {
    let server = worker(Options::default()).await;
    let mut rx = server.watch();
    record_up_to(&server, 20).await;
    let seen = received(&mut rx, 21).await;
    let numbers: Vec<_> = seen.iter().filter_map(|o| recorded(o)).collect();
    assert_eq!(numbers, (0..=20).collect::<Vec<_>>());
    assert!(seen.iter().all(|o| o.skipped == 0));
}

#[tokio::test]
async fn a_coalescing_watcher_sees_the_latest_step_and_how_many_it_stands_for() {
    let server = worker(Options::default()).await;
    let mut rx = server.watch_coalesced();
    // Twenty casts while the watcher reads nothing: the first is sent, the rest wait for it to
    // be read, each replacing the one before.
    record_up_to(&server, 20).await;
    let seen = received(&mut rx, 21).await;
    assert!(seen.len() < 21, "coalesced: {} observations", seen.len());
    assert_eq!(recorded(&seen[0]), Some(0));
    // Nothing unaccounted for, and the agent's last step is the last seen.
    assert_eq!(recorded(seen.last().unwrap()), Some(20));
    // Once read, the next step is sent at once.
    server
        .call(signal("worker.record", json!(21)))
        .await
        .unwrap();
    let next = received(&mut rx, 1).await;
    assert_eq!(next.len(), 1);
    assert_eq!((recorded(&next[0]), next[0].skipped), (Some(21), 0));
}

#[tokio::test]
async fn a_watcher_promised_every_step_turns_coalescing_off() {
    let server = worker(Options::default()).await;
    let mut live = server.watch_coalesced();
    let mut every = server.watch();
    record_up_to(&server, 10).await;
    assert_eq!(received(&mut every, 11).await.len(), 11);
    assert_eq!(received(&mut live, 11).await.len(), 11);
}
