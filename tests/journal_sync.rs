//! When the input journal is durable: appends deferred and synced once per
//! `JournalOptions::sync_delay` or when the writer catches up, every append durable with a zero
//! delay, everything synced at stop, and the steps up to a parked interrupt synced before the
//! interrupt is announced. (What a crash keeps of deferred appends in a `RedbStore` is tested
//! on a simulated disk in the store's unit tests.)

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use stratagem::journal::{Journal, JournalOptions};
use stratagem::prelude::*;
use stratagem::store::{JournalBatch, JournalRecords, MemoryStore, Store, StoreError};

#[path = "support/refunds.rs"]
mod refunds;
use refunds::Refunds;

/// What the journal's writer did to a [`Syncing`] store.
#[derive(Debug, Default)]
struct Log {
    durable_appends: usize,
    deferred_appends: usize,
    syncs: usize,
    /// Where the journal ended at the last sync (or durable append): what a crash keeps.
    synced_end: Option<u64>,
    /// At each checkpoint save: (synced end, journal end).
    at_save: Vec<(Option<u64>, Option<u64>)>,
}

/// A `MemoryStore` that logs how the journal is appended and synced.
#[derive(Debug, Clone, Default)]
struct Syncing {
    inner: MemoryStore,
    log: Arc<Mutex<Log>>,
}

impl Syncing {
    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap()
    }

    async fn synced(&self, key: &str) -> Result<(), StoreError> {
        let end = self.inner.journal_end(key).await?;
        self.log().synced_end = end;
        Ok(())
    }
}

impl Store for Syncing {
    fn save<'a>(&'a self, key: &'a str, c: &'a [u8]) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let end = self.inner.journal_end(key).await?;
            let synced = self.log().synced_end;
            self.log().at_save.push((synced, end));
            self.inner.save(key, c).await
        })
    }
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        self.inner.load(key)
    }
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.delete(key)
    }
    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        self.inner.keys()
    }
    fn append_journal_batch<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.log().durable_appends += 1;
            self.inner.append_journal_batch(key, batch).await?;
            self.synced(key).await
        })
    }
    fn append_journal_batch_deferred<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.log().deferred_appends += 1;
        self.inner.append_journal_batch(key, batch)
    }
    fn sync_journal(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            self.log().syncs += 1;
            // Every journal here is the one agent's.
            self.synced(ID).await
        })
    }
    fn read_journal<'a>(
        &'a self,
        key: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<JournalRecords, StoreError>> {
        self.inner.read_journal(key, from)
    }
    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        self.inner.journal_end(key)
    }
    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.compact_journal(key, before)
    }
}

const ID: &str = "desk";

fn request(item: u32) -> Signal {
    Signal::new("refund.request", json!({ "item": item }))
}

async fn start(journal: JournalOptions) -> AgentServer<Refunds> {
    let options = Options::default().journal(journal);
    AgentServer::start(Refunds::new().with_id(ID), options)
        .await
        .unwrap()
}

/// Waits until `done` holds, letting the writer run; fails after 30 s.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let wait = async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("{what} never happened"));
}

async fn replayed_requests(store: &Syncing) -> Vec<u32> {
    let journal = Journal::load(store, ID).await.unwrap();
    journal
        .replay::<Refunds>()
        .unwrap()
        .state()
        .requested
        .clone()
}

#[tokio::test]
async fn a_zero_sync_delay_makes_every_append_durable() {
    let store = Syncing::default();
    let journal = JournalOptions::new(store.clone()).sync_delay(Duration::ZERO);
    let server = start(journal).await;
    for item in 1..=3 {
        server.call(request(item)).await.unwrap();
    }
    server.stop().await;
    {
        let log = store.log();
        assert!(log.durable_appends >= 1, "{log:?}");
        assert_eq!((log.deferred_appends, log.syncs), (0, 0), "{log:?}");
    }
    assert_eq!(replayed_requests(&store).await, [1, 2, 3]);
}

/// With a delay far longer than the test, appends are deferred, and the store is synced when
/// the writer catches up with the idle agent: without a stop, without waiting for the delay.
/// The records are readable at once; stopping syncs what came after.
#[tokio::test]
async fn deferred_appends_are_synced_once_the_writer_catches_up() {
    let store = Syncing::default();
    let hour = Duration::from_secs(3_600);
    let server = start(JournalOptions::new(store.clone()).sync_delay(hour)).await;
    for item in 1..=3 {
        server.call(request(item)).await.unwrap();
    }
    until("a sync", || store.log().syncs >= 1).await;
    {
        let log = store.log();
        assert_eq!(log.durable_appends, 0, "no append waited for the delay");
        assert!(log.deferred_appends >= 1, "{log:?}");
    }
    assert_eq!(replayed_requests(&store).await, [1, 2, 3]);

    let synced = store.log().syncs;
    server.call(request(4)).await.unwrap();
    server.stop().await;
    assert!(
        store.log().syncs > synced,
        "stopping synced the last append"
    );
    let end = store.inner.journal_end(ID).await.unwrap();
    assert_eq!(store.log().synced_end, end);
    assert_eq!(replayed_requests(&store).await, [1, 2, 3, 4]);
}

/// Parking an interrupt syncs the journal before the checkpoint is written and the interrupt
/// announced: the step that raised it survives a crash while the agent waits, like the
/// checkpoint.
#[tokio::test]
async fn a_parked_interrupt_s_steps_are_synced_before_its_checkpoint() {
    let store = Syncing::default();
    let hour = Duration::from_secs(3_600);
    let options = Options::default()
        .journal(JournalOptions::new(store.clone()).sync_delay(hour))
        .checkpoint_store(Arc::new(store.clone()));
    let server = AgentServer::start(Refunds::new().with_id(ID), options)
        .await
        .unwrap();
    let mut events = server.subscribe();
    server.call(request(7)).await.unwrap();
    let announced = events.recv().await.unwrap();
    assert_eq!(announced.id, "desk/approval/1");
    {
        let log = store.log();
        let (synced, end) = *log.at_save.last().expect("the interrupt was checkpointed");
        // Init is step 1 (position 2), the request step 2 (position 4).
        assert!(end >= Some(4), "the request's step is journaled: {log:?}");
        assert_eq!(synced, end, "and synced: {log:?}");
    }
    server.stop().await;
    assert_eq!(replayed_requests(&store).await, [7]);
}
