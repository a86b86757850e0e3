//! Error policies: log only, stop on error, emit an error signal, stop after N.

use serde_json::json;

use super::agents::signal;
use super::worker;
use crate::error::AgentError;
use crate::server::{ErrorPolicy, Options, ServerError, StopReason};

#[tokio::test]
async fn log_only_keeps_the_agent_serving_with_its_state_unchanged() {
    let server = worker(Options::new().error_policy(ErrorPolicy::LogOnly)).await;
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    for _ in 0..5 {
        let outcome = server.call(signal("worker.fail", json!({}))).await.unwrap();
        assert!(matches!(
            outcome.errors().next(),
            Some(AgentError::Action { action, .. }) if action == "fail"
        ));
    }
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    assert_eq!(
        server.state().await.unwrap().count,
        2,
        "failures changed nothing"
    );
    let report = server.stop().await;
    assert_eq!(report.errors, 5);
    assert_eq!(report.reason, StopReason::Requested);
}

#[tokio::test]
async fn stop_on_error_stops_at_the_first_error() {
    let server = worker(Options::new().error_policy(ErrorPolicy::StopOnError)).await;
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    let outcome = server.call(signal("worker.fail", json!({}))).await.unwrap();
    assert_eq!(
        outcome.errors().count(),
        1,
        "the call still gets its outcome"
    );
    let report = server.stopped().await;
    let StopReason::Errors { count: 1, last } = &report.reason else {
        panic!("{:?}", report.reason)
    };
    assert_eq!(
        last.to_string(),
        "action `fail` failed: fail was asked to fail"
    );
    assert_eq!(report.processed, 2);
    assert!(matches!(
        server.cast(signal("worker.count", json!({}))),
        Err(ServerError::Stopped { .. })
    ));
}

#[tokio::test]
async fn emit_signal_reports_each_error_to_subscribers() {
    let policy = ErrorPolicy::EmitSignal {
        signal_type: "ops.failure".into(),
    };
    let server = worker(Options::new().error_policy(policy)).await;
    let mut events = server.subscribe();
    server.call(signal("worker.fail", json!({}))).await.unwrap();
    server
        .call(signal("worker.explode", json!({})))
        .await
        .unwrap();
    let first = events.recv().await.unwrap();
    assert_eq!(first.signal_type, "ops.failure");
    assert_eq!(first.data["agent"], "Worker");
    assert_eq!(first.data["id"], "w");
    assert_eq!(first.data["error"]["kind"], "action");
    assert_eq!(first.data["context"]["kind"], "instruction");
    let second = events.recv().await.unwrap();
    assert!(
        second.data["message"]
            .as_str()
            .unwrap()
            .contains("`explode` panicked: explode was asked to panic"),
        "{}",
        second.data
    );
    assert!(!server.handle().is_stopped());
    assert_eq!(server.state().await.unwrap().count, 0);
}

#[tokio::test]
async fn stop_after_n_counts_errors_over_the_whole_run() {
    let server = worker(Options::new().error_policy(ErrorPolicy::stop_after(3))).await;
    for _ in 0..2 {
        server.call(signal("worker.fail", json!({}))).await.unwrap();
        server
            .call(signal("worker.count", json!({})))
            .await
            .unwrap();
    }
    assert!(!server.handle().is_stopped(), "two errors are tolerated");
    server
        .call(signal("nobody.listens", json!({})))
        .await
        .unwrap();
    let report = server.stopped().await;
    assert!(matches!(
        report.reason,
        StopReason::Errors {
            count: 3,
            last: AgentError::NoRoute { .. }
        }
    ));
    assert_eq!(report.errors, 3);
    assert_eq!(report.snapshot.as_ref().map(|s| s.done()), Some(false));
}

/// Counts the ERROR events of the current thread (the test's runtime runs the agent's task on it).
struct ErrorEvents(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl tracing::Subscriber for ErrorEvents {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if *event.metadata().level() == tracing::Level::ERROR {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn an_error_returned_to_a_caller_is_not_also_logged_as_an_error() {
    let errors = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let _subscriber = tracing::subscriber::set_default(ErrorEvents(errors.clone()));
    let server = worker(Options::new()).await;
    let outcome = server.call(signal("worker.fail", json!({}))).await.unwrap();
    assert_eq!(outcome.errors().count(), 1);
    let logged = || errors.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(logged(), 0, "the caller has the error");

    // Nobody waits for a cast: its error is logged.
    server.cast(signal("worker.fail", json!({}))).unwrap();
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    assert_eq!(logged(), 1);
    assert_eq!(server.stop().await.errors, 2, "both count for the policy");
}
