//! Children: spawned under the parent, their emits and exits reported to it.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::agents::{Worker, signal};
use super::worker;
use crate::server::{ErrorPolicy, Options, StopReason};
use crate::store::{Store, StoreError};

fn exits(log: &[String]) -> Vec<Value> {
    log.iter()
        .filter_map(|entry| serde_json::from_str::<Value>(entry).ok())
        .filter(|v| v.get("tag").is_some())
        .collect()
}

#[tokio::test]
async fn a_child_runs_under_its_parent_and_its_exit_is_reported() {
    let parent = worker(Options::default()).await;
    parent
        .call(signal("worker.spawn", json!({"tag": "a"})))
        .await
        .unwrap();
    let child = parent.child("a").await.unwrap().expect("child `a` runs");
    assert_eq!(child.id(), "child-a");
    assert_eq!(child.name(), "Worker");
    assert_eq!(parent.children().await.unwrap().len(), 1);

    // The child is an agent of its own.
    child.call(signal("worker.count", json!({}))).await.unwrap();
    assert_eq!(child.state::<Worker>().await.unwrap().count, 1);
    // What it emits goes to its parent.
    child
        .call(signal(
            "worker.emit",
            json!({"type": "child.progress", "data": 42}),
        ))
        .await
        .unwrap();

    parent
        .call(signal("worker.stop_child", json!({"tag": "a"})))
        .await
        .unwrap();
    let report = child.stopped().await;
    assert_eq!(report.reason, StopReason::StoppedByParent);
    assert_eq!(report.processed, 2);
    assert!(parent.child("a").await.unwrap().is_none());

    // The exit arrives as a signal routed to `record`; wait for it.
    let log = loop {
        let log = parent.state().await.unwrap().log;
        if log.len() == 2 {
            break log;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(log[0], "42", "the child's emit");
    assert_eq!(
        exits(&log),
        [json!({
            "tag": "a",
            "id": "child-a",
            "agent": "Worker",
            "reason": {"kind": "stopped_by_parent"},
            "message": "stopped by its parent",
        })]
    );
}

#[tokio::test]
async fn a_child_that_stops_itself_is_reported_and_its_tag_freed() {
    let parent = worker(Options::default()).await;
    parent
        .call(signal("worker.spawn", json!({"tag": "a"})))
        .await
        .unwrap();
    let child = parent.child("a").await.unwrap().unwrap();
    child
        .cast(signal("worker.halt", json!({"reason": "done"})))
        .unwrap();
    child.stopped().await;
    let log = loop {
        let log = parent.state().await.unwrap().log;
        if !log.is_empty() {
            break log;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(
        exits(&log)[0]["reason"],
        json!({"kind": "directive", "reason": "done"})
    );
    assert!(parent.child("a").await.unwrap().is_none());
    // The tag is free again.
    parent
        .call(signal("worker.spawn", json!({"tag": "a"})))
        .await
        .unwrap();
    assert!(parent.child("a").await.unwrap().is_some());
}

#[tokio::test]
async fn stopping_the_parent_stops_its_children_first() {
    let parent = worker(Options::default()).await;
    for tag in ["b", "a"] {
        parent
            .call(signal("worker.spawn", json!({"tag": tag})))
            .await
            .unwrap();
    }
    let a = parent.child("a").await.unwrap().unwrap();
    a.call(signal("worker.count", json!({}))).await.unwrap();
    let report = parent.stop().await;
    let tags: Vec<_> = report.children.iter().map(|c| c.tag.as_str()).collect();
    assert_eq!(tags, ["a", "b"]);
    assert!(
        report
            .children
            .iter()
            .all(|c| c.report.reason == StopReason::StoppedByParent)
    );
    assert_eq!(report.children[0].report.processed, 1);
    assert!(a.is_stopped());
}

#[tokio::test]
async fn child_directive_mistakes_are_errors_with_hints() {
    let parent = worker(Options::new().error_policy(ErrorPolicy::emit_signal())).await;
    let mut events = parent.subscribe();
    parent
        .call(signal("worker.spawn", json!({"tag": "a"})))
        .await
        .unwrap();
    parent
        .call(signal("worker.spawn", json!({"tag": "a"})))
        .await
        .unwrap();
    assert_eq!(
        events.recv().await.unwrap().data["message"],
        "directive `spawn_agent` failed: a child tagged `a` is already running; stop it first (`StopChild`) or pick another tag"
    );
    parent
        .call(signal("worker.stop_child", json!({"tag": "zed"})))
        .await
        .unwrap();
    assert_eq!(
        events.recv().await.unwrap().data["message"],
        "directive `stop_child` failed: no child is tagged `zed`; running children: `a`"
    );
}

/// A store whose `save` never finishes: a parent checkpointing into it waits, processing
/// nothing, which lets a test hold its mailbox full.
#[derive(Debug, Default)]
struct Stuck {
    entered: Arc<Notify>,
}

impl Store for Stuck {
    fn save<'a>(&'a self, _: &'a str, _: &'a [u8]) -> BoxFuture<'a, Result<(), StoreError>> {
        self.entered.notify_one();
        Box::pin(futures::future::pending())
    }
    fn load<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(std::future::ready(Ok(None)))
    }
    fn delete<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(false)))
    }
    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
}

#[tokio::test]
async fn a_full_parent_mailbox_is_an_error_for_the_child() {
    let options = Options::new()
        .mailbox_capacity(1)
        .error_policy(ErrorPolicy::emit_signal());
    let parent = worker(options).await;
    parent
        .call(signal("worker.spawn", json!({"tag": "a"})))
        .await
        .unwrap();
    let child = parent.child("a").await.unwrap().unwrap();
    let mut child_events = child.subscribe();
    // Hold the parent in a checkpoint and fill its one slot.
    let stuck = Arc::new(Stuck::default());
    let entered = stuck.entered.notified();
    let blocker = tokio::spawn({
        let (parent, stuck) = (parent.clone(), stuck.clone());
        async move { parent.checkpoint(&*stuck).await }
    });
    entered.await;
    parent.cast(signal("worker.count", json!({}))).unwrap();

    let outcome = child
        .call(signal("worker.emit", json!({"type": "child.x"})))
        .await
        .unwrap();
    assert_eq!(outcome.emitted().count(), 1);
    assert_eq!(child_events.recv().await.unwrap().signal_type, "child.x");
    let error = child_events.recv().await.unwrap();
    let message = error.data["message"].as_str().unwrap();
    assert!(
        message.starts_with("directive `emit` failed: cannot deliver `child.x` to the parent: the mailbox of agent `Worker` (`w`) is full"),
        "{message}"
    );
    // Let the parent go: an abandoned checkpoint counts as not saved, and it carries on.
    blocker.abort();
    assert_eq!(parent.state().await.unwrap().count, 1);
}
