//! Group commit: the checkpoints a node writes at about the same time go to PostgreSQL in one
//! statement, so a batch of signals touching hundreds of agents costs one commit (one WAL
//! flush), not one per agent.

use std::collections::HashSet;
use std::sync::Arc;

use agent_runtime::store::StoreError;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::lease::Lease;
use crate::postgres::PostgresStore;

/// At most this many checkpoints go into one statement.
const MAX_ROWS: usize = 512;

struct Write {
    lease: Lease,
    checkpoint: Vec<u8>,
    seen: Arc<[String]>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// Hands fenced checkpoint writes to one task that gathers whatever is waiting into one
/// statement, with up to `concurrency` statements in flight (one per connection); while they
/// run, the next group gathers.
#[derive(Debug, Clone)]
pub(crate) struct GroupCommit {
    writes: mpsc::UnboundedSender<Write>,
}

impl GroupCommit {
    pub(crate) fn start(store: PostgresStore, concurrency: usize) -> Self {
        let (writes, queue) = mpsc::unbounded_channel();
        tokio::spawn(gather(store, queue, concurrency.max(1)));
        GroupCommit { writes }
    }

    /// Writes `checkpoint` under `lease` with the ids `seen`, as
    /// [`PostgresStore::save_fenced`] does, together with whatever other writes are waiting.
    pub(crate) async fn save(
        &self,
        lease: &Lease,
        checkpoint: &[u8],
        seen: Arc<[String]>,
    ) -> Result<(), StoreError> {
        let (done, written) = oneshot::channel();
        let stopped = || StoreError::io("save", &lease.key, "the node is shutting down");
        self.writes
            .send(Write {
                lease: lease.clone(),
                checkpoint: checkpoint.to_vec(),
                seen,
                done,
            })
            .map_err(|_| stopped())?;
        written.await.map_err(|_| stopped())?
    }
}

async fn gather(
    store: PostgresStore,
    mut queue: mpsc::UnboundedReceiver<Write>,
    concurrency: usize,
) {
    let slots = Arc::new(Semaphore::new(concurrency));
    while let Some(first) = queue.recv().await {
        // Waiting for a free connection is what lets the next group grow.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut group = vec![first];
        while group.len() < MAX_ROWS
            && let Ok(write) = queue.try_recv()
        {
            group.push(write);
        }
        let store = store.clone();
        tokio::spawn(async move {
            write_group(&store, group).await;
            drop(slot);
        });
    }
}

/// Writes a group, in as many statements as it has writes of one key (almost always one).
async fn write_group(store: &PostgresStore, mut group: Vec<Write>) {
    while !group.is_empty() {
        let mut keys = HashSet::new();
        let (now, later): (Vec<Write>, Vec<Write>) = group
            .into_iter()
            .partition(|w| keys.insert(w.lease.key.clone()));
        group = later;
        let rows: Vec<(&Lease, &[u8], &[String])> = now
            .iter()
            .map(|w| (&w.lease, w.checkpoint.as_slice(), &*w.seen))
            .collect();
        let result = store.save_fenced_many(&rows).await;
        for (i, write) in now.into_iter().enumerate() {
            let answer = match &result {
                Ok(written) if written[i] => Ok(()),
                Ok(_) => Err(crate::lease::refused(&write.lease)),
                Err(e) => Err(e.clone()),
            };
            let _ = write.done.send(answer);
        }
    }
}
