//! Async instructions, custom directives, transports and event streams.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio::time::Instant;

use super::agents::{Notify, signal};
use super::worker;
use crate::directive::Directive;
use crate::error::AgentError;
use crate::server::{ErrorPolicy, Options, Origin, Transport, TransportError};
use crate::signal::Signal;
use crate::snapshot::Status;

#[tokio::test(start_paused = true)]
async fn an_async_instruction_runs_in_a_task_and_its_outcome_comes_back_through_cmd() {
    let server = worker(Options::default()).await;
    let start = Instant::now();
    let outcome = server
        .call(signal(
            "worker.fetch",
            json!({"sleep_ms": 2000, "value": 7}),
        ))
        .await
        .unwrap();
    assert!(matches!(
        outcome.directives.as_slice(),
        [Directive::RunInstruction { .. }]
    ));
    assert_eq!(outcome.snapshot.status, Status::Waiting);
    // The agent keeps serving while the action runs.
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    assert_eq!(server.state().await.unwrap().count, 1);
    tokio::time::sleep_until(start + Duration::from_millis(1999)).await;
    assert_eq!(server.snapshot().await.unwrap().status, Status::Waiting);
    tokio::time::sleep_until(start + Duration::from_millis(2000)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(server.snapshot().await.unwrap().status, Status::Idle);
    assert_eq!(server.state().await.unwrap().count, 7);
}

#[tokio::test(start_paused = true)]
async fn stopping_cancels_running_actions_and_lists_them() {
    let server = worker(Options::default()).await;
    let outcome = server
        .call(signal(
            "worker.fetch",
            json!({"sleep_ms": 60_000, "value": 7}),
        ))
        .await
        .unwrap();
    let Directive::RunInstruction { instruction, .. } = &outcome.directives[0] else {
        unreachable!()
    };
    let report = server.stop().await;
    assert_eq!(report.in_flight, std::slice::from_ref(&instruction.id));
    assert_eq!(report.snapshot.unwrap().status, Status::Waiting);
}

#[tokio::test]
async fn custom_directives_run_through_their_registered_executor() {
    let options = Options::new().executor("notify", |directive, context| {
        let notify = directive.downcast_ref::<Notify>().expect("a Notify");
        if notify.channel == "nowhere" {
            return Err(AgentError::Strategy {
                message: "channel `nowhere` does not exist".into(),
            });
        }
        // An executor may report back later through the agent's handle.
        let handle = context.handle().expect("the agent is running");
        let note = format!("{} sent to {}", context.agent_name(), notify.channel);
        tokio::spawn(async move { handle.cast(Signal::new("worker.record", json!(note))) });
        Ok(vec![Directive::Emit(Signal::new(
            "notified",
            directive.to_json(),
        ))])
    });
    let server = worker(options.error_policy(ErrorPolicy::emit_signal())).await;
    let mut events = server.subscribe();
    server
        .call(signal("worker.notify", json!({"channel": "ops"})))
        .await
        .unwrap();
    let notified = events.recv().await.unwrap();
    assert_eq!(notified.signal_type, "notified");
    assert_eq!(notified.data, json!({"channel": "ops"}));
    server
        .call(signal("worker.notify", json!({"channel": "nowhere"})))
        .await
        .unwrap();
    assert_eq!(
        events.recv().await.unwrap().data["message"],
        "channel `nowhere` does not exist"
    );
    let log = loop {
        let log = server.state().await.unwrap().log;
        if !log.is_empty() {
            break log;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(log, ["\"Worker sent to ops\""]);
}

#[tokio::test]
async fn a_custom_directive_without_an_executor_is_an_error() {
    let server = worker(Options::new().error_policy(ErrorPolicy::emit_signal())).await;
    let mut events = server.subscribe();
    server
        .call(signal("worker.notify", json!({"channel": "ops"})))
        .await
        .unwrap();
    assert_eq!(
        events.recv().await.unwrap().data["message"],
        "directive `notify` failed: no executor is registered for directive kind `notify` (registered: none); register one with `Options::executor`"
    );
}

#[derive(Debug, Default)]
struct Recording(Mutex<Vec<(String, String)>>);

impl Transport for Recording {
    fn name(&self) -> &str {
        "recording"
    }
    fn publish(&self, origin: &Origin<'_>, signal: &Signal) -> Result<(), TransportError> {
        self.0
            .lock()
            .unwrap()
            .push((origin.id.to_string(), signal.signal_type.clone()));
        Ok(())
    }
}

#[tokio::test]
async fn emitted_signals_reach_transports_and_event_streams_in_order() {
    let recording = Arc::new(Recording::default());
    let server = worker(Options::new().transport(recording.clone())).await;
    let events = server.events();
    for n in 0..3 {
        server
            .call(signal("worker.emit", json!({"type": format!("e{n}")})))
            .await
            .unwrap();
    }
    let seen: Vec<_> = events
        .take(3)
        .map(|event| event.unwrap().signal_type)
        .collect()
        .await;
    assert_eq!(seen, ["e0", "e1", "e2"]);
    assert_eq!(
        *recording.0.lock().unwrap(),
        [
            ("w".to_string(), "e0".to_string()),
            ("w".to_string(), "e1".to_string()),
            ("w".to_string(), "e2".to_string()),
        ]
    );
}

#[tokio::test]
async fn a_lagging_subscriber_is_told_how_many_it_missed() {
    let server = worker(Options::new().event_capacity(2)).await;
    let mut events = Box::pin(server.events());
    for n in 0..5 {
        server
            .call(signal("worker.emit", json!({"type": format!("e{n}")})))
            .await
            .unwrap();
    }
    assert_eq!(events.next().await, Some(Err(3)));
    assert_eq!(events.next().await.unwrap().unwrap().signal_type, "e3");
}

#[tokio::test(start_paused = true)]
async fn an_async_completion_continues_the_trace_of_the_signal_that_started_it() {
    const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let server = worker(Options::default()).await;
    let mut events = server.subscribe();
    let traced = signal(
        "worker.fetch",
        json!({"sleep_ms": 1000, "value": 1, "emit": "fetch.traced"}),
    )
    .with_extension("traceparent", json!(TRACEPARENT))
    .with_extension("tracestate", json!("congo=t61rcWkgMzE"));
    server.call(traced).await.unwrap();
    // Untraced steps in between neither lose nor take the started action's context.
    let untraced = json!({"sleep_ms": 2000, "value": 2, "emit": "fetch.untraced"});
    server.call(signal("worker.fetch", untraced)).await.unwrap();
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let first = events.recv().await.unwrap();
    assert_eq!(first.signal_type, "fetch.traced");
    assert_eq!(first.extensions["traceparent"], TRACEPARENT);
    assert_eq!(first.extensions["tracestate"], "congo=t61rcWkgMzE");
    let second = events.recv().await.unwrap();
    assert_eq!(second.signal_type, "fetch.untraced");
    assert!(!second.extensions.contains_key("traceparent"), "{second:?}");
}
