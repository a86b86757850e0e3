//! The server's side of a journal: records each step in the agent's task and hands batches to
//! a writer task that encodes them and appends them to the store, so the agent never waits
//! for the disk (on a multi-thread runtime the writer runs on whichever worker is free).

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use crate::agent::DynAgent;
use crate::store::Store;

use super::JournalOptions;
use super::context::StepScope;
use super::record::{Input, Record, SnapshotKind, Step};

/// Journals one agent's steps (one run of it).
pub(crate) struct Recorder {
    agent: Arc<str>,
    seq: u64,
    at: chrono::DateTime<chrono::Utc>,
    snapshot_every: u64,
    batch: Vec<Record>,
    tx: Option<UnboundedSender<Vec<Record>>>,
    writer: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Starts journaling `agent` after the records already stored under its key (the journal
    /// ended at position `end`): the run begins with a snapshot of the agent as it is now.
    pub(crate) fn start(options: &JournalOptions, agent: &dyn DynAgent, end: Option<u64>) -> Self {
        // The first step of this run comes after every stored record (see `Record::position`).
        let base = end.map_or(0, |end| end / 2 + 1);
        let id: Arc<str> = agent.id().into();
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write(
            options.store.clone(),
            id.to_string(),
            rx,
            options.keep_snapshots,
        ));
        let mut recorder = Recorder {
            agent: id,
            seq: base,
            at: crate::server::clock::now(),
            snapshot_every: options.snapshot_every,
            batch: Vec::new(),
            tx: Some(tx),
            writer: Some(writer),
        };
        recorder.snapshot(agent, SnapshotKind::Start);
        recorder
    }

    /// Enters the next step: until the scope drops, ids and the clock come from the step.
    pub(crate) fn begin(&mut self) -> StepScope {
        self.seq += 1;
        self.at = crate::server::clock::now();
        StepScope::enter(self.agent.clone(), self.seq, self.at)
    }

    /// Records the step entered last, with the agent as it is after it.
    pub(crate) fn record(&mut self, input: Input, agent: &dyn DynAgent) {
        let hash = agent.state_hash();
        self.batch.push(Record::Step(Step {
            seq: self.seq,
            at: self.at,
            input,
            hash,
        }));
        if self.seq.is_multiple_of(self.snapshot_every) {
            self.snapshot(agent, SnapshotKind::Periodic);
        }
    }

    /// The signal of the last step recorded and not yet flushed, if it was a signal.
    pub(crate) fn last_signal(&self) -> Option<&crate::signal::Signal> {
        self.batch.iter().rev().find_map(|record| match record {
            Record::Step(Step {
                input: Input::Signal { signal, .. },
                ..
            }) => Some(&**signal),
            _ => None,
        })
    }

    fn snapshot(&mut self, agent: &dyn DynAgent, kind: SnapshotKind) {
        match agent.to_json() {
            Ok(value) => self.batch.push(Record::Snapshot {
                seq: self.seq,
                kind,
                hash: agent.state_hash(),
                agent: value,
            }),
            Err(error) => tracing::error!(
                agent = agent.agent_name(),
                id = agent.id(),
                %error,
                "the journal could not snapshot the agent: its state does not serialize"
            ),
        }
    }

    /// Hands what was recorded since the last flush to the writer.
    pub(crate) fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        if let Some(tx) = &self.tx {
            // The writer only ends when we drop the sender.
            let _ = tx.send(batch);
        }
    }

    /// Flushes and waits until the writer has stored everything.
    pub(crate) async fn finish(&mut self) {
        self.flush();
        self.tx = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
    }
}

/// Appends batches in order, several at once when they queue up, and compacts after each new
/// periodic snapshot beyond the `keep` latest.
async fn write(
    store: Arc<dyn Store>,
    key: String,
    mut rx: UnboundedReceiver<Vec<Record>>,
    keep: usize,
) {
    let mut snapshots: VecDeque<u64> = VecDeque::new();
    while let Some(mut batch) = rx.recv().await {
        while let Ok(more) = rx.try_recv() {
            batch.extend(more);
        }
        snapshots.extend(
            batch
                .iter()
                .filter(|record| matches!(record, Record::Snapshot { .. }))
                .map(Record::position),
        );
        let encoded = encode_all(&key, &batch);
        if let Err(error) = store.append_journal(&key, &encoded).await {
            tracing::error!(key, %error, "journal records were not stored");
            continue;
        }
        if snapshots.len() > keep.max(1) {
            while snapshots.len() > keep.max(1) {
                snapshots.pop_front();
            }
            let before = snapshots.front().copied().unwrap_or(0);
            if let Err(error) = store.compact_journal(&key, before).await {
                tracing::error!(key, %error, "the journal was not compacted");
            }
        }
    }
}

/// Encodes a batch of records with their positions (a record that does not serialize is
/// reported and left out).
fn encode_all(key: &str, batch: &[Record]) -> Vec<(u64, Vec<u8>)> {
    let mut encoded = Vec::with_capacity(batch.len());
    for record in batch {
        match super::record::encode(record) {
            Ok(bytes) => encoded.push((record.position(), bytes)),
            Err(error) => tracing::error!(key, %error, "a journal record does not serialize"),
        }
    }
    encoded
}
