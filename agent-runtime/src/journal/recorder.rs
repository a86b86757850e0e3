//! The server's side of a journal: records each step in the agent's task and hands batches to
//! a writer task that encodes them and appends them to the store, so the agent never waits
//! for the disk (on a multi-thread runtime the writer runs on whichever worker is free).

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use crate::agent::DynAgent;
use crate::signal::Signal;
use crate::store::{JournalBatch, Store};

use super::JournalOptions;
use super::context::StepScope;
use super::record::{Input, Record, SnapshotKind, Step, encode_into, encode_signal_step};

/// Journals one agent's steps (one run of it).
pub(crate) struct Recorder {
    agent: Arc<str>,
    seq: u64,
    at: chrono::DateTime<chrono::Utc>,
    snapshot_every: u64,
    /// The records since the last flush, encoded as they are recorded: a step leaves nothing
    /// behind to free later, and the writer only appends bytes.
    batch: JournalBatch,
    tx: Option<UnboundedSender<JournalBatch>>,
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
            batch: JournalBatch::new(),
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
        let step = Record::Step(Step {
            seq: self.seq,
            at: self.at,
            input,
            hash: agent.state_hash(),
        });
        self.push(&step);
        self.after_step(agent);
    }

    /// Records the step entered last, whose input was `signal` from `origin`, with the agent
    /// as it is after it: encoded from the parts, the signal stays the caller's.
    pub(crate) fn record_signal(&mut self, origin: &str, signal: &Signal, agent: &dyn DynAgent) {
        let (seq, at, hash) = (self.seq, self.at, agent.state_hash());
        let written = self.batch.write(seq.saturating_mul(2), |out| {
            encode_signal_step(out, seq, &at, hash, origin, signal)
        });
        if let Err(error) = written {
            self.unencoded(&error);
        }
        self.after_step(agent);
    }

    fn after_step(&mut self, agent: &dyn DynAgent) {
        if self.seq.is_multiple_of(self.snapshot_every) {
            self.snapshot(agent, SnapshotKind::Periodic);
        }
    }

    fn snapshot(&mut self, agent: &dyn DynAgent, kind: SnapshotKind) {
        match agent.to_json() {
            Ok(value) => self.push(&Record::Snapshot {
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

    /// Encodes `record` into the batch (a record that does not serialize is reported and
    /// left out).
    fn push(&mut self, record: &Record) {
        if let Err(error) = self
            .batch
            .write(record.position(), |out| encode_into(out, record))
        {
            self.unencoded(&error);
        }
    }

    fn unencoded(&self, error: &rmp_serde::encode::Error) {
        tracing::error!(key = %self.agent, %error, "a journal record does not serialize");
    }

    /// Hands what was recorded since the last flush to the writer.
    pub(crate) fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        // The next batch is likely as large as this one: one allocation each, no regrowth.
        let next = JournalBatch::with_capacity(self.batch.len(), self.batch.byte_len());
        let batch = std::mem::replace(&mut self.batch, next);
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
    mut rx: UnboundedReceiver<JournalBatch>,
    keep: usize,
) {
    let mut snapshots: VecDeque<u64> = VecDeque::new();
    while let Some(mut batch) = rx.recv().await {
        while let Ok(more) = rx.try_recv() {
            batch.append(&more);
        }
        snapshots.extend(
            batch
                .iter()
                .map(|(position, _)| position)
                .filter(|&position| Record::is_snapshot_position(position)),
        );
        if let Err(error) = store.append_journal_batch(&key, batch).await {
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
