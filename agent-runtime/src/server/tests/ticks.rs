//! Real ticking: a `Running` strategy is ticked until it is not.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::agents::{Plain, Steps, signal};
use crate::agent::AgentSpec;
use crate::server::{AgentServer, Options, ServerError, StopReason};
use crate::snapshot::Status;

#[tokio::test(start_paused = true)]
async fn a_running_strategy_is_ticked_to_completion_at_its_interval() {
    let server = AgentServer::start(Steps::new(), Options::default())
        .await
        .unwrap();
    let mut events = server.subscribe();
    let start = Instant::now();
    let outcome = server
        .call(signal("steps.start", json!({"ticks": 4})))
        .await
        .unwrap();
    assert_eq!(outcome.snapshot.status, Status::Running);
    let done = server
        .await_completion(Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success);
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(4 * 250),
        "the agent's own interval"
    );
    assert_eq!(server.state().await.unwrap().ticks, 4);
    for remaining in (0..4).rev() {
        let ticked = events.recv().await.unwrap();
        assert_eq!(ticked.data["remaining"], remaining);
    }
    // Done: no more ticks, however long we wait.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let report = server.stop().await;
    assert_eq!(report.ticks, 4);
}

#[tokio::test(start_paused = true)]
async fn an_agent_without_an_interval_is_ticked_at_the_servers() {
    let options = Options::new().tick_interval(Duration::from_millis(40));
    let server = AgentServer::start(Plain::new(), options).await.unwrap();
    let start = Instant::now();
    server
        .call(signal("steps.start", json!({"ticks": 3})))
        .await
        .unwrap();
    server
        .await_completion(Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(120));
}

#[tokio::test(start_paused = true)]
async fn a_route_can_target_tick() {
    let server = AgentServer::start(Steps::new(), Options::default())
        .await
        .unwrap();
    server
        .call(signal("steps.start", json!({"ticks": 2})))
        .await
        .unwrap();
    let outcome = server.call(signal("steps.tick", json!({}))).await.unwrap();
    assert_eq!(outcome.emitted().count(), 1);
    assert_eq!(
        server.state().await.unwrap().ticks,
        1,
        "ticked by the signal, not the timer"
    );
}

#[tokio::test(start_paused = true)]
async fn await_completion_times_out_with_where_the_agent_stands() {
    let server = AgentServer::start(Steps::new(), Options::default())
        .await
        .unwrap();
    server
        .call(signal("steps.start", json!({"ticks": 100})))
        .await
        .unwrap();
    let err = server
        .await_completion(Duration::from_millis(1100))
        .await
        .unwrap_err();
    let ServerError::CompletionTimeout {
        snapshot: Some(snapshot),
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(snapshot.status, Status::Running);
    assert_eq!(
        err.to_string(),
        "agent `Steps` (`".to_string()
            + server.id()
            + "`) did not complete within 1.1s; its status is `running` ({\"remaining\":96}); it completes when its strategy reports `success` or `failure`"
    );
}

#[tokio::test(start_paused = true)]
async fn await_completion_reports_an_agent_that_stopped_first() {
    let server = AgentServer::start(Steps::new(), Options::default())
        .await
        .unwrap();
    server
        .call(signal("steps.start", json!({"ticks": 100})))
        .await
        .unwrap();
    let waiting = {
        let server = server.clone();
        tokio::spawn(async move { server.await_completion(Duration::from_secs(600)).await })
    };
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let report = server.stop().await;
    assert_eq!(report.ticks, 4);
    let err = waiting.await.unwrap().unwrap_err();
    let ServerError::StoppedBeforeCompletion {
        reason, snapshot, ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*reason, StopReason::Requested);
    assert_eq!(snapshot.unwrap().status, Status::Running);
    // Asked after the stop: the same answer, from the report.
    assert!(matches!(
        server.await_completion(Duration::from_secs(1)).await,
        Err(ServerError::StoppedBeforeCompletion { .. })
    ));
}
