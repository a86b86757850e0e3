//! The mailbox: call, cast, capacity, backpressure, stopping.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use super::agents::{BadPattern, BadPriority, Worker, signal};
use super::worker;
use crate::agent::AgentSpec;
use crate::directive::Directive;
use crate::route::RouteError;
use crate::server::{AgentServer, ErrorPolicy, Options, ServerError, StopReason};
use crate::snapshot::Status;

#[tokio::test]
async fn call_returns_the_directives_and_the_snapshot_after_them() {
    let server = worker(Options::default()).await;
    let outcome = server
        .call(signal(
            "worker.emit",
            json!({"type": "done", "data": {"n": 1}}),
        ))
        .await
        .unwrap();
    assert!(matches!(
        outcome.directives.as_slice(),
        [Directive::Emit(s)] if s.signal_type == "done" && s.data == json!({"n": 1})
    ));
    assert_eq!(outcome.snapshot.status, Status::Idle);
    let outcome = server.call(signal("worker.fail", json!({}))).await.unwrap();
    assert_eq!(outcome.errors().count(), 1);
}

#[tokio::test]
async fn casts_are_processed_in_order() {
    let server = worker(Options::default()).await;
    for n in 0..50 {
        server.cast(signal("worker.record", json!(n))).unwrap();
    }
    let state = server.state().await.unwrap();
    let expected: Vec<String> = (0..50).map(|n| n.to_string()).collect();
    assert_eq!(state.log, expected);
}

#[tokio::test(flavor = "current_thread")]
async fn a_full_mailbox_refuses_the_signal_with_an_error() {
    let server = worker(Options::new().mailbox_capacity(3)).await;
    // The agent's task cannot run until this one yields: the mailbox fills up.
    for _ in 0..3 {
        server.cast(signal("worker.count", json!({}))).unwrap();
    }
    let refused = server.cast(signal("worker.count", json!({}))).unwrap_err();
    assert_eq!(
        refused,
        ServerError::MailboxFull {
            agent: "Worker",
            id: "w".into(),
            capacity: 3
        }
    );
    assert_eq!(
        refused.to_string(),
        "the mailbox of agent `Worker` (`w`) is full (3 signals waiting); the signal was refused: retry later, slow the sender down, or raise `Options::mailbox_capacity`"
    );
    assert!(matches!(
        server.call(signal("worker.count", json!({}))).await,
        Err(ServerError::MailboxFull { .. })
    ));
    assert_eq!(server.handle().queued(), 3);
    let report = server.stop().await;
    assert_eq!(report.processed, 3);
    assert_eq!(report.unprocessed, 0);
}

/// A million casts from four tasks into a 1,000-slot mailbox: every one is processed or
/// refused to its sender, and the two counts add up exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_a_million_casts_is_counted_exactly() {
    const SENDERS: u64 = 4;
    const PER_SENDER: u64 = 250_000;
    let server = worker(Options::new().mailbox_capacity(1_000)).await;
    let accepted = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let template = signal("worker.count", json!(null));
    let mut senders = Vec::new();
    for _ in 0..SENDERS {
        let (server, accepted, refused, template) = (
            server.clone(),
            accepted.clone(),
            refused.clone(),
            template.clone(),
        );
        senders.push(tokio::spawn(async move {
            for i in 0..PER_SENDER {
                match server.cast(template.clone()) {
                    Ok(()) => accepted.fetch_add(1, Ordering::Relaxed),
                    Err(ServerError::MailboxFull { .. }) => refused.fetch_add(1, Ordering::Relaxed),
                    Err(other) => panic!("unexpected {other}"),
                };
                if i % 4_096 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for sender in senders {
        sender.await.unwrap();
    }
    // Stopping drains: everything accepted before it is processed.
    let report = server.stop().await;
    let (accepted, refused) = (
        accepted.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
    );
    assert_eq!(accepted + refused, SENDERS * PER_SENDER);
    assert!(accepted >= 1_000, "the mailbox was filled at least once");
    assert!(refused > 0, "a burst this size overflows 1,000 slots");
    assert_eq!(report.processed, accepted);
    assert_eq!(report.unprocessed, 0);
    assert_eq!(report.errors, 0);
}

#[tokio::test(flavor = "current_thread")]
async fn stop_processes_what_was_queued_before_it_and_refuses_what_comes_after() {
    let server = worker(Options::default()).await;
    for _ in 0..10 {
        server.cast(signal("worker.count", json!({}))).unwrap();
    }
    let report = server.stop().await;
    assert_eq!(report.reason, StopReason::Requested);
    assert_eq!(report.processed, 10);
    assert_eq!(
        server.cast(signal("worker.count", json!({}))),
        Err(ServerError::Stopped {
            agent: "Worker",
            id: "w".into()
        })
    );
    assert!(server.handle().is_stopped());
    assert!(matches!(
        server.state().await,
        Err(ServerError::Stopped { .. })
    ));
    // Stopping again returns the same report.
    assert_eq!(server.stop().await, report);
}

#[tokio::test(flavor = "current_thread")]
async fn signals_queued_behind_a_stop_directive_are_reported_not_dropped() {
    let server = worker(Options::default()).await;
    server.cast(signal("worker.count", json!({}))).unwrap();
    server
        .cast(signal("worker.halt", json!({"reason": "enough"})))
        .unwrap();
    // Three calls queue up behind the halt: polled once, without yielding to the agent.
    let mut later: Vec<_> = (0..3)
        .map(|_| Box::pin(server.call(signal("worker.count", json!({})))))
        .collect();
    for call in &mut later {
        assert!(futures::poll!(call.as_mut()).is_pending());
    }
    assert_eq!(server.handle().queued(), 5);
    let report = server.stopped().await;
    assert_eq!(
        report.reason,
        StopReason::Directive {
            reason: "enough".into()
        }
    );
    assert_eq!(report.processed, 2);
    assert_eq!(report.unprocessed, 3);
    // The emit after the stop in the same batch was not executed.
    assert_eq!(report.skipped_directives, 1);
    for call in later {
        assert!(matches!(call.await, Err(ServerError::Stopped { .. })));
    }
    assert_eq!(report.snapshot.unwrap().status, Status::Idle);
}

#[tokio::test]
async fn invalid_routes_fail_start_with_a_clear_error() {
    let err = AgentServer::start(BadPattern::new(), Options::default())
        .await
        .unwrap_err();
    assert!(matches!(
        &err,
        ServerError::InvalidRoutes {
            agent: "BadPattern",
            error: RouteError::EmptySegment { .. },
            ..
        }
    ));
    assert!(
        err.to_string().starts_with(
            "cannot start agent `BadPattern`: route pattern `order..pay` has an empty segment at position 2; fix the route (its routes)"
        ),
        "{err}"
    );
    let err = AgentServer::start(BadPriority::new(), Options::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("route priority 101 is outside -100..=100"),
        "{err}"
    );
    let err = AgentServer::start(
        Worker::new(),
        Options::new().plugin_route("audit.*.", "record"),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("the plugin routes in `Options`"),
        "{err}"
    );
}

#[tokio::test]
async fn invalid_options_fail_start() {
    for (options, needle) in [
        (
            Options::new().mailbox_capacity(0),
            "`mailbox_capacity` is 0",
        ),
        (
            Options::new().error_policy(ErrorPolicy::stop_after(0)),
            "can never trigger",
        ),
        (
            Options::new().tick_interval(std::time::Duration::ZERO),
            "`tick_interval` is 0",
        ),
    ] {
        let err = AgentServer::start(Worker::new(), options)
            .await
            .unwrap_err();
        assert!(matches!(err, ServerError::InvalidOptions { .. }));
        assert!(err.to_string().contains(needle), "{err}");
    }
}

#[tokio::test]
async fn dropping_every_handle_stops_the_agent() {
    let server = worker(Options::default()).await;
    let mut events = server.subscribe();
    server.cast(signal("worker.count", json!({}))).unwrap();
    drop(server);
    // The agent ends, and with it the event channel.
    assert!(matches!(
        events.recv().await,
        Err(tokio::sync::broadcast::error::RecvError::Closed)
    ));
}

#[test]
fn an_agent_whose_runtime_shuts_down_reports_it_instead_of_hanging_its_callers() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(worker(Options::default()));
    drop(rt);
    let report = futures::executor::block_on(server.stopped());
    let StopReason::Crashed { message } = &report.reason else {
        panic!("{:?}", report.reason)
    };
    assert!(message.contains("its tokio runtime shut down"), "{message}");
    assert!(matches!(
        server.cast(signal("worker.count", json!({}))),
        Err(ServerError::Stopped { .. })
    ));
}

#[tokio::test]
async fn signals_that_break_a_cloudevents_rule_are_refused_at_the_door() {
    let server = worker(Options::default()).await;
    let refused = server
        .cast(signal("worker.count", json!({})).with_source("not a uri"))
        .unwrap_err();
    let ServerError::InvalidSignal { error, .. } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(error.attribute, "source");
    assert!(
        refused.to_string().starts_with(
            "agent `Worker` (`w`) refused a signal: invalid CloudEvents attribute `source`"
        ),
        "{refused}"
    );
    let mut empty_id = signal("worker.count", json!({}));
    empty_id.id.clear();
    assert!(matches!(
        server.call(empty_id).await,
        Err(ServerError::InvalidSignal { .. })
    ));
    assert_eq!(
        server.state().await.unwrap().count,
        0,
        "nothing was processed"
    );
    // An emitted signal with an empty type is not published: the emit fails, and the error
    // policy reports it.
    let server = worker(Options::new().error_policy(ErrorPolicy::emit_signal())).await;
    let mut events = server.subscribe();
    server
        .call(signal("worker.emit", json!({"type": "", "data": 1})))
        .await
        .unwrap();
    let error = events.recv().await.unwrap();
    assert_eq!(error.signal_type, "stratagem.agent.error");
    assert_eq!(
        error.data["message"],
        "directive `emit` failed: the signal was not published: invalid CloudEvents attribute `type`: must not be empty"
    );
    assert!(events.try_recv().is_err(), "nothing else was published");
}
