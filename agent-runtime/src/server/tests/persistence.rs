//! Checkpoints: hibernate, thaw, and everything that can go wrong with them.

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use tokio::time::advance;

use super::agents::{Steps, Worker, signal};
use super::worker;
use crate::server::{AgentServer, Options, ServerError, StopReason};
use crate::store::{Checkpoint, CheckpointError, MemoryStore, RedbStore, Store, StoreError};

async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

async fn checkpoint_in(store: &impl Store, key: &str) -> Checkpoint {
    Checkpoint::decode(&store.load(key).await.unwrap().unwrap()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn hibernate_then_thaw_restores_the_agent_and_everything_pending_exactly() {
    let store = MemoryStore::new();
    let server = worker(Options::default()).await;
    server
        .call(signal("worker.record", json!("before")))
        .await
        .unwrap();
    // A timer due in an hour, a cron job every minute, an async action running for 30 min.
    server
        .call(signal("worker.arm", json!({"delay_ms": 3_600_000})))
        .await
        .unwrap();
    server
        .call(signal(
            "worker.cron",
            json!({"id": "minutely", "expression": "0 * * * * *", "type": "audit.minute"}),
        ))
        .await
        .unwrap();
    server
        .call(signal(
            "worker.fetch",
            json!({"sleep_ms": 1_800_000, "value": 42}),
        ))
        .await
        .unwrap();
    // `sleep`, not `advance`: virtual time runs through each cron occurrence.
    tokio::time::sleep(Duration::from_secs(600)).await;
    settle().await;
    let before = server.agent().await.unwrap();
    assert_eq!(before.state().count, 10, "ten cron firings in ten minutes");

    let report = server.hibernate(&store).await.unwrap();
    assert_eq!(report.reason, StopReason::Hibernated);
    assert_eq!(report.pending_timers.len(), 1);
    assert_eq!(report.cron_jobs, ["minutely"]);
    assert_eq!(report.in_flight.len(), 1);
    let saved = checkpoint_in(&store, "w").await;
    assert_eq!(saved.agent_name(), Some("Worker"));
    assert_eq!(saved.timers.len(), 1);
    assert_eq!(saved.timers[0].signal.data, json!({"generation": 1}));
    assert_eq!(saved.cron[0].expression, "0 * * * * *");
    assert_eq!(saved.in_flight[0].instruction.action, "fetch");

    let thawed = AgentServer::<Worker>::thaw(&store, "w", Options::default())
        .await
        .unwrap();
    assert_eq!(thawed.id(), "w");
    assert_eq!(
        thawed.agent().await.unwrap(),
        before,
        "state and strategy state"
    );
    // Checkpointing the thawed agent writes the same checkpoint (but for its time).
    let again = MemoryStore::new();
    thawed.checkpoint(&again).await.unwrap();
    let resaved = checkpoint_in(&again, "w").await;
    assert_eq!(
        Checkpoint {
            saved_at: saved.saved_at,
            ..resaved
        },
        saved
    );

    // The timer is still due an hour after it was armed, 50 minutes from now.
    tokio::time::sleep(Duration::from_secs(49 * 60)).await;
    settle().await;
    let state = thawed.state().await.unwrap();
    assert!(state.timeouts.is_empty());
    assert_eq!(
        state.count,
        42 + 19,
        "the action ran again and set 42 thirty minutes after the thaw; 19 minutely beats followed"
    );
    assert_eq!(
        state.log.len(),
        1 + 10 + 49,
        "the cron job kept its minutely beat"
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    settle().await;
    assert_eq!(thawed.state().await.unwrap().timeouts, [1]);
}

#[tokio::test(start_paused = true)]
async fn a_timer_that_fell_due_while_hibernated_fires_on_thaw() {
    let store = MemoryStore::new();
    let server = worker(Options::default()).await;
    server
        .call(signal(
            "worker.schedule",
            json!({"delay_ms": 1000, "type": "worker.record", "data": "late"}),
        ))
        .await
        .unwrap();
    server.hibernate(&store).await.unwrap();
    advance(Duration::from_secs(3600)).await;
    let thawed = AgentServer::<Worker>::thaw(&store, "w", Options::default())
        .await
        .unwrap();
    settle().await;
    assert_eq!(thawed.state().await.unwrap().log, ["\"late\""]);
}

#[tokio::test]
async fn checkpoints_survive_in_the_embedded_store_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/checkpoints.redb");
    {
        let store = RedbStore::open(&path).unwrap();
        let server = worker(Options::default()).await;
        server
            .call(signal("worker.record", json!("kept")))
            .await
            .unwrap();
        server.hibernate(&store).await.unwrap();
        assert_eq!(store.keys().await.unwrap(), ["w"]);
    }
    let store = RedbStore::open(&path).unwrap();
    let thawed = AgentServer::<Worker>::thaw(&store, "w", Options::default())
        .await
        .unwrap();
    assert_eq!(thawed.state().await.unwrap().log, ["\"kept\""]);
    assert!(store.delete("w").await.unwrap());
    assert!(!store.delete("w").await.unwrap());
    assert!(store.keys().await.unwrap().is_empty());
}

#[derive(Debug)]
struct DiskFull;

impl Store for DiskFull {
    fn save<'a>(&'a self, key: &'a str, _: &'a [u8]) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(std::future::ready(Err(StoreError::io(
            "save",
            key,
            "disk full",
        ))))
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
async fn a_failed_hibernate_leaves_the_agent_running() {
    let server = worker(Options::default()).await;
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    let err = server.hibernate(&DiskFull).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the checkpoint store failed to save `w`: disk full"
    );
    assert!(!server.handle().is_stopped());
    server
        .call(signal("worker.count", json!({})))
        .await
        .unwrap();
    assert_eq!(server.state().await.unwrap().count, 2);
}

#[tokio::test]
async fn thawing_what_cannot_be_thawed_is_a_clear_error() {
    let store = MemoryStore::new();
    let thaw = |key: &'static str| {
        let store = store.clone();
        async move {
            AgentServer::<Worker>::thaw(&store, key, Options::default())
                .await
                .unwrap_err()
        }
    };
    assert_eq!(
        thaw("missing").await.to_string(),
        "checkpoint `missing`: no checkpoint is stored under this key; hibernate or checkpoint the agent first and thaw it by the same key (its id by default)"
    );

    store.save("garbage", b"\x00\x01 not json").await.unwrap();
    let err = thaw("garbage").await;
    assert!(matches!(
        &err,
        ServerError::Checkpoint {
            error: CheckpointError::Corrupt { .. },
            ..
        }
    ));
    assert!(
        err.to_string()
            .starts_with("checkpoint `garbage`: the checkpoint is corrupt: it is not valid JSON"),
        "{err}"
    );

    store
        .save("truncated", br#"{"format": "stratagem.checkpoint", "vers"#)
        .await
        .unwrap();
    assert!(thaw("truncated").await.to_string().contains("is corrupt"));

    store
        .save("other", br#"{"format": "something.else", "version": 1}"#)
        .await
        .unwrap();
    assert!(
        thaw("other")
            .await
            .to_string()
            .contains("its `format` is \"something.else\", not \"stratagem.checkpoint\"")
    );

    store
        .save(
            "future",
            br#"{"format": "stratagem.checkpoint", "version": 3}"#,
        )
        .await
        .unwrap();
    assert_eq!(
        thaw("future").await.to_string(),
        "checkpoint `future`: the checkpoint is incompatible: it was written in format version 3; this build reads versions 1 to 2: thaw it with the build that wrote it, or a newer one"
    );

    // A checkpoint of another agent type.
    let steps = AgentServer::start(Steps::default().into_agent("s"), Options::default())
        .await
        .unwrap();
    steps.hibernate(&store).await.unwrap();
    assert_eq!(
        thaw("s").await.to_string(),
        "checkpoint `s`: the checkpoint is incompatible: it holds agent `Steps`, not `Worker`; thaw it as `Steps`"
    );

    // A checkpoint whose state no longer fits the type.
    let server = worker(Options::default()).await;
    server.hibernate(&store).await.unwrap();
    let mut checkpoint = checkpoint_in(&store, "w").await;
    checkpoint.agent["state"]["count"] = json!("many");
    store
        .save("w", &checkpoint.encode().unwrap())
        .await
        .unwrap();
    let err = thaw("w").await.to_string();
    assert!(
        err.starts_with("checkpoint `w`: the checkpoint is incompatible: its state does not fit agent `Worker` (invalid type: string \"many\", expected u64"),
        "{err}"
    );
    assert!(
        err.ends_with("give new fields `#[serde(default)]` or migrate the checkpoint"),
        "{err}"
    );
}

trait IntoAgent: crate::AgentSpec + Sized {
    fn into_agent(self, id: &str) -> crate::Agent<Self> {
        crate::Agent::new(self).with_id(id)
    }
}

impl IntoAgent for Steps {}

/// Every byte of a real checkpoint in the real redb store, flipped: each thaw is refused as
/// corrupt, never an agent in some other state.
#[tokio::test]
async fn a_flipped_byte_anywhere_in_a_stored_checkpoint_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path().join("checkpoints.redb")).unwrap();
    let server = worker(Options::default()).await;
    server
        .call(signal("worker.record", json!("before")))
        .await
        .unwrap();
    server
        .call(signal("worker.arm", json!({"delay_ms": 3_600_000})))
        .await
        .unwrap();
    server.hibernate(&store).await.unwrap();
    let original = store.load("w").await.unwrap().unwrap();
    assert!(
        original.len() > 300,
        "a checkpoint with a state and a timer"
    );
    let intact = AgentServer::<Worker>::thaw(&store, "w", Options::default())
        .await
        .unwrap();
    let expected = intact.agent().await.unwrap();
    intact.stop().await;

    for at in 0..original.len() {
        let mut damaged = original.clone();
        // One bit, a case bit, a whole byte: what disks and hand edits do.
        damaged[at] ^= [0x01, 0x20, 0xFF][at % 3];
        store.save("w", &damaged).await.unwrap();
        match AgentServer::<Worker>::thaw(&store, "w", Options::default()).await {
            Err(ServerError::Checkpoint {
                error: CheckpointError::Corrupt { .. },
                ..
            }) => {}
            Err(other) => panic!("byte {at}: expected `Corrupt`, got {other}"),
            Ok(thawed) => panic!(
                "byte {at} flipped, yet the checkpoint loaded (as {:?}, the original being {:?})",
                thawed.agent().await.map(|a| a.state().clone()),
                expected.state()
            ),
        }
    }
}

#[tokio::test]
async fn a_version_1_checkpoint_without_a_checksum_still_thaws() {
    let store = MemoryStore::new();
    let server = worker(Options::default()).await;
    server
        .call(signal("worker.record", json!("kept")))
        .await
        .unwrap();
    let before = server.state().await.unwrap();
    server.hibernate(&store).await.unwrap();
    let mut wire: serde_json::Value =
        serde_json::from_slice(&store.load("w").await.unwrap().unwrap()).unwrap();
    wire["version"] = json!(1);
    wire.as_object_mut().unwrap().remove("checksum");
    store
        .save("w", &serde_json::to_vec(&wire).unwrap())
        .await
        .unwrap();
    let thawed = AgentServer::<Worker>::thaw(&store, "w", Options::default())
        .await
        .unwrap();
    assert_eq!(thawed.state().await.unwrap().log, before.log);
    assert_eq!(before.log.len(), 1);
}
