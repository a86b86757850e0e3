//! The server's side of a journal: encodes each step in the agent's task into one reused
//! buffer and hands what it holds to a writer task at every flush, which appends it to the
//! store, so the agent never waits for the disk (on a multi-thread runtime the writer runs on
//! whichever worker is free). The hand-over is one shared buffer, not a queue of them: the
//! recorder's buffer is never given away and the writer swaps the one it stored last back in,
//! so once they have grown nothing allocates, and however many flushes the writer missed, it
//! takes them in one append.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::agent::DynAgent;
use crate::signal::Signal;
use crate::store::{JournalBatch, Store};

use super::JournalOptions;
use super::context::{StepScope, StepTime};
use super::record::{Input, Record, SnapshotKind, Step, encode_into, encode_signal_step};

/// Journals one agent's steps (one run of it).
pub(crate) struct Recorder {
    agent: Arc<str>,
    seq: u64,
    /// The last clock reading: the time of a step whose strategy reads none.
    at: StepTime,
    /// Whether `at` is older than the last flush (the next step reads the clock).
    stale: bool,
    snapshot_every: u64,
    /// The records since the last flush, encoded as they are recorded: a step leaves nothing
    /// behind to free later. Emptied at every flush, its capacity kept.
    batch: JournalBatch,
    pending: Arc<Pending>,
    /// The last flush (its number in `PendingState::flushes`) the writer has stored and
    /// synced, or given up on.
    settled: watch::Receiver<u64>,
    writer: Option<JoinHandle<()>>,
}

/// What the recorder flushed and the writer has not taken yet.
#[derive(Default)]
struct Pending {
    state: Mutex<PendingState>,
    /// Told when records arrive in an empty pending batch, or the journal closes.
    arrived: Notify,
}

#[derive(Default)]
struct PendingState {
    batch: JournalBatch,
    /// How many flushes brought records so far.
    flushes: u64,
    /// No more records come: the writer ends once it has stored the last ones.
    closed: bool,
}

impl Pending {
    fn lock(&self) -> MutexGuard<'_, PendingState> {
        // Nobody panics while holding it (appends and swaps), so poison is moot.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close(&self) {
        self.lock().closed = true;
        self.arrived.notify_one();
    }
}

impl Recorder {
    /// Starts journaling `agent` after the records already stored under its key (the journal
    /// ended at position `end`): the run begins with a snapshot of the agent as it is now.
    pub(crate) fn start(options: &JournalOptions, agent: &dyn DynAgent, end: Option<u64>) -> Self {
        // The first step of this run comes after every stored record (see `Record::position`).
        let base = end.map_or(0, |end| end / 2 + 1);
        let id: Arc<str> = agent.id().into();
        let pending = Arc::new(Pending::default());
        let (settle, settled) = watch::channel(0);
        let writer = tokio::spawn(write(
            options.store.clone(),
            id.to_string(),
            pending.clone(),
            settle,
            options.keep_snapshots,
            options.sync_delay,
        ));
        let mut recorder = Recorder {
            agent: id,
            seq: base,
            at: crate::server::clock::now_parts(),
            stale: false,
            snapshot_every: options.snapshot_every,
            batch: JournalBatch::new(),
            pending,
            settled,
            writer: Some(writer),
        };
        recorder.snapshot(agent, SnapshotKind::Start);
        recorder
    }

    /// Enters the next step: until the scope drops, ids and the clock come from the step.
    pub(crate) fn begin(&mut self) -> StepScope {
        self.seq += 1;
        if self.stale {
            self.at = crate::server::clock::now_parts();
            self.stale = false;
        }
        StepScope::enter_live(&self.agent, self.seq)
    }

    /// The time of the step entered last: what its strategy read from the clock, or, when it
    /// read none, the last reading (taken at most one flush, one mailbox batch, earlier).
    fn step_time(&mut self) -> StepTime {
        if let Some(read) = super::context::take_time_read() {
            self.at = read;
        }
        self.at
    }

    /// Records the step entered last, with the agent as it is after it.
    pub(crate) fn record(&mut self, input: Input, agent: &dyn DynAgent) {
        let step = Record::Step(Step {
            seq: self.seq,
            at: self.step_time().to_datetime(),
            input,
            hash: agent.state_hash(),
        });
        self.push(&step);
        self.after_step(agent);
    }

    /// Records the step entered last, whose input was `signal` from `origin`, with the agent
    /// as it is after it: encoded from the parts, the signal stays the caller's.
    pub(crate) fn record_signal(&mut self, origin: &str, signal: &Signal, agent: &dyn DynAgent) {
        let (seq, at, hash) = (self.seq, self.step_time(), agent.state_hash());
        let written = self.batch.write(seq.saturating_mul(2), |out| {
            encode_signal_step(out, seq, at, hash, origin, signal)
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
        // The next step reads the clock again.
        self.stale = true;
        if self.batch.is_empty() {
            return;
        }
        let was_empty = {
            let mut pending = self.pending.lock();
            let was_empty = pending.batch.is_empty();
            pending.batch.append(&self.batch);
            pending.flushes += 1;
            was_empty
        };
        self.batch.clear();
        // A non-empty pending batch has woken the writer already.
        if was_empty {
            self.pending.arrived.notify_one();
        }
    }

    /// Flushes and waits until the writer has stored and synced everything recorded so far
    /// (or failed to: it reports that), so that a crash from now on cannot take it from the
    /// journal.
    pub(crate) async fn sync(&mut self) {
        self.flush();
        let flushed = self.pending.lock().flushes;
        // An error means the writer ended: nothing is left to wait for.
        let _ = self.settled.wait_for(|&settled| settled >= flushed).await;
    }

    /// Flushes and waits until the writer has stored everything.
    pub(crate) async fn finish(&mut self) {
        self.flush();
        self.pending.close();
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
    }
}

impl Drop for Recorder {
    /// A server that ends without `finish` (its task aborted) still lets the writer store what
    /// was flushed and end.
    fn drop(&mut self) {
        self.pending.close();
    }
}

/// Appends what the recorder flushed, all of it at once when several flushes queued up, and
/// compacts after each new periodic snapshot beyond the `keep` latest; ends when the journal
/// is closed and everything flushed is stored and synced.
///
/// Appends are deferred (readable at once, not yet durable) and the store is synced when the
/// writer has caught up with the recorder, or before an append once the oldest unsynced one is
/// `sync_delay` old: while the agent is busy, one sync carries many appends. With a zero delay
/// every append is durable.
async fn write(
    store: Arc<dyn Store>,
    key: String,
    pending: Arc<Pending>,
    settle: watch::Sender<u64>,
    keep: usize,
    sync_delay: Duration,
) {
    let mut snapshots: VecDeque<u64> = VecDeque::new();
    // The batch stored last, emptied: swapped in for the next one, so that once the two have
    // grown to a flush's size no flush allocates.
    let mut spare = JournalBatch::new();
    // When the oldest append not yet synced was stored.
    let mut unsynced_since: Option<Instant> = None;
    // The flushes taken so far (all of them stored, or reported lost).
    let mut taken_flushes = 0;
    loop {
        let taken = {
            let mut state = pending.lock();
            if state.batch.is_empty() {
                Err(state.closed)
            } else {
                taken_flushes = state.flushes;
                spare.clear();
                Ok(std::mem::replace(
                    &mut state.batch,
                    std::mem::take(&mut spare),
                ))
            }
        };
        let batch = match taken {
            Ok(batch) => batch,
            Err(closed) => {
                // Caught up: what was stored becomes durable before the writer waits or ends
                // (records that arrive meanwhile are taken next).
                if unsynced_since.take().is_some() {
                    if let Err(error) = store.sync_journal().await {
                        tracing::error!(key, %error, "the journal was not synced");
                    }
                    settle.send_replace(taken_flushes);
                    continue;
                }
                if closed {
                    return;
                }
                pending.arrived.notified().await;
                continue;
            }
        };
        snapshots.extend(
            batch
                .iter()
                .map(|(position, _)| position)
                .filter(|&position| Record::is_snapshot_position(position)),
        );
        let durable = sync_delay.is_zero()
            || unsynced_since.is_some_and(|since| since.elapsed() >= sync_delay);
        let stored = if durable {
            store.append_journal_batch(&key, &batch).await
        } else {
            store.append_journal_batch_deferred(&key, &batch).await
        };
        spare = batch;
        match stored {
            // A durable append syncs the deferred ones before it too.
            Ok(()) if durable => {
                unsynced_since = None;
                settle.send_replace(taken_flushes);
            }
            Ok(()) => {
                unsynced_since.get_or_insert_with(Instant::now);
            }
            Err(error) => {
                tracing::error!(key, %error, "journal records were not stored");
                // Lost: whoever waits for them waits no longer.
                if unsynced_since.is_none() {
                    settle.send_replace(taken_flushes);
                }
                continue;
            }
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
