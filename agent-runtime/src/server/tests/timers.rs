//! Real timers: `Schedule` and cron, under tokio's paused clock.

use std::time::Duration;

use serde_json::json;
use tokio::time::{Instant, advance};

use super::agents::signal;
use super::worker;
use crate::server::{ErrorPolicy, Options, StopReason};

/// Lets the agent's task handle everything that is due, without moving the clock.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_scheduled_signal_fires_after_its_delay_and_is_routed_back() {
    let server = worker(Options::default()).await;
    let start = Instant::now();
    server
        .call(signal(
            "worker.schedule",
            json!({"delay_ms": 1500, "type": "worker.record", "data": "ding"}),
        ))
        .await
        .unwrap();
    advance(Duration::from_millis(1499)).await;
    settle().await;
    assert!(server.state().await.unwrap().log.is_empty(), "not yet");
    advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(server.state().await.unwrap().log, ["\"ding\""]);
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
    let report = server.stop().await;
    assert_eq!(report.timers_fired, 1);
    assert!(report.pending_timers.is_empty());
}

#[tokio::test(start_paused = true)]
async fn timers_fire_in_deadline_order_and_pending_ones_are_reported() {
    let server = worker(Options::default()).await;
    for (delay, data) in [(300, "c"), (100, "a"), (200, "b"), (60_000, "never")] {
        server
            .cast(signal(
                "worker.schedule",
                json!({"delay_ms": delay, "type": "worker.record", "data": data}),
            ))
            .unwrap();
    }
    settle().await;
    advance(Duration::from_millis(300)).await;
    settle().await;
    assert_eq!(
        server.state().await.unwrap().log,
        ["\"a\"", "\"b\"", "\"c\""]
    );
    let report = server.stop().await;
    assert_eq!(report.pending_timers.len(), 1);
    assert_eq!(report.pending_timers[0].signal.data, json!("never"));
}

/// The FSM pattern: a timer armed for an earlier generation still fires, faithfully, and the
/// agent recognizes it as stale.
#[tokio::test(start_paused = true)]
async fn stale_timers_are_delivered_and_left_to_the_agent() {
    let server = worker(Options::default()).await;
    server
        .call(signal("worker.arm", json!({"delay_ms": 10_000})))
        .await
        .unwrap();
    advance(Duration::from_secs(5)).await;
    // Re-armed: generation 2; generation 1's timer is now stale.
    server
        .call(signal("worker.arm", json!({"delay_ms": 10_000})))
        .await
        .unwrap();
    advance(Duration::from_secs(5)).await;
    settle().await;
    let state = server.state().await.unwrap();
    assert_eq!((state.stale, state.timeouts.len()), (1, 0));
    advance(Duration::from_secs(5)).await;
    settle().await;
    let state = server.state().await.unwrap();
    assert_eq!(state.stale, 1);
    assert_eq!(state.timeouts, [2]);
}

#[tokio::test(start_paused = true)]
async fn cron_jobs_fire_on_schedule_until_cancelled() {
    let server = worker(Options::default()).await;
    server
        .call(signal(
            "worker.cron",
            json!({"id": "beat", "expression": "*/10 * * * * *", "type": "worker.count"}),
        ))
        .await
        .unwrap();
    // `sleep` lets virtual time run, so the agent sees each occurrence (an `advance` past
    // several would fire once: a late cron job skips the occurrences it missed).
    // The first occurrence is the next multiple of ten seconds; after it, one every ten.
    tokio::time::sleep(Duration::from_secs(10)).await;
    settle().await;
    let first = server.state().await.unwrap().count;
    assert_eq!(
        first, 1,
        "exactly one multiple of ten seconds in any ten-second window"
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    settle().await;
    let later = server.state().await.unwrap().count;
    assert_eq!(later - first, 6, "one firing per ten seconds");
    server
        .call(signal("worker.uncron", json!({"id": "beat"})))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    settle().await;
    assert_eq!(server.state().await.unwrap().count, later);
    let report = server.stop().await;
    assert!(report.cron_jobs.is_empty());
    assert_eq!(report.timers_fired, later);
}

#[tokio::test(start_paused = true)]
async fn a_bad_cron_expression_is_an_error() {
    let server = worker(Options::new().error_policy(ErrorPolicy::StopOnError)).await;
    server
        .call(signal(
            "worker.cron",
            json!({"id": "x", "expression": "every tuesday", "type": "worker.count"}),
        ))
        .await
        .unwrap();
    let report = server.stopped().await;
    let StopReason::Errors { last, .. } = report.reason else {
        panic!("{:?}", report.reason)
    };
    assert!(
        last.to_string()
            .starts_with("directive `cron` failed: invalid cron expression `every tuesday`"),
        "{last}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timer_rearming_itself_without_delay_does_not_starve_the_mailbox() {
    let server = worker(Options::default()).await;
    // `worker.again` schedules itself again, at once, forever.
    server
        .call(signal("worker.again", json!(null)))
        .await
        .unwrap();
    for n in 0..3 {
        server
            .call(signal("worker.record", json!(n)))
            .await
            .unwrap();
    }
    let state = server.state().await.unwrap();
    assert_eq!(state.log, ["0", "1", "2"]);
    assert!(state.count > 1, "the timer kept firing meanwhile");
    let report = server.stop().await;
    assert!(report.timers_fired >= 1);
}

#[tokio::test(start_paused = true)]
async fn a_timer_fires_in_the_trace_of_the_step_that_set_it() {
    const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let server = worker(Options::default()).await;
    let mut events = server.subscribe();
    let later = |delay_ms: u64, fired: &str| json!({"delay_ms": delay_ms, "type": "worker.emit", "data": {"type": fired}});
    let traced = signal("worker.schedule", later(1000, "fired.traced"))
        .with_extension("traceparent", json!(TRACEPARENT))
        .with_extension("tracestate", json!("congo=t61rcWkgMzE"));
    server.call(traced).await.unwrap();
    server
        .call(signal("worker.schedule", later(2000, "fired.untraced")))
        .await
        .unwrap();
    advance(Duration::from_millis(2000)).await;
    settle().await;
    let first = events.recv().await.unwrap();
    assert_eq!(first.signal_type, "fired.traced");
    assert_eq!(first.extensions["traceparent"], TRACEPARENT);
    assert_eq!(first.extensions["tracestate"], "congo=t61rcWkgMzE");
    let second = events.recv().await.unwrap();
    assert_eq!(second.signal_type, "fired.untraced");
    assert!(!second.extensions.contains_key("traceparent"), "{second:?}");
}
