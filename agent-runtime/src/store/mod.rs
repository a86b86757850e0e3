//! Persistence: checkpoints of agents and where they are kept.
//!
//! A [`Checkpoint`] is everything a server needs to bring an agent back exactly: its state and
//! its strategy's state, its pending timers, its cron jobs and the async instructions it was
//! running. A [`Store`] keeps checkpoints under string keys (the agent's id by default). The
//! embedded default is [`RedbStore`], a single file managed by the `redb` database; [`MemoryStore`]
//! keeps them in memory for tests. Other backends (Postgres, Redis, ...) implement [`Store`].

mod checkpoint;
mod embedded;
mod journal_batch;
mod journal_row;
mod memory;
#[cfg(test)]
mod tests;

pub use checkpoint::{
    Checkpoint, CheckpointError, CronEntry, FORMAT, PendingInstruction, PendingTimer, VERSION,
};
pub use embedded::RedbStore;
pub use journal_batch::JournalBatch;
pub use memory::MemoryStore;

pub(crate) use checkpoint::{apply_migration, migration_for};

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;

/// Journal records as a store holds them: (position, bytes), in position order.
pub type JournalRecords = Vec<(u64, Vec<u8>)>;

/// Where checkpoints are kept.
///
/// `save` must be atomic: after it returns an error, or after a crash in the middle of it, the
/// store holds either the previous checkpoint under that key or the new one, complete, and
/// never a mix. Methods return boxed futures so the trait stays object-safe (`Arc<dyn Store>`)
/// and backends can do real async I/O.
///
/// ```
/// # async fn demo() -> Result<(), agent_runtime::store::StoreError> {
/// use agent_runtime::store::{MemoryStore, Store};
/// let store = MemoryStore::new();
/// store.save("order-17", b"{}").await?;
/// assert_eq!(store.load("order-17").await?.as_deref(), Some(&b"{}"[..]));
/// assert_eq!(store.keys().await?, ["order-17"]);
/// # Ok(()) }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(demo()).unwrap();
/// ```
pub trait Store: Send + Sync + fmt::Debug {
    /// Writes `checkpoint` under `key`, replacing what was there, atomically.
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The checkpoint under `key`, if any.
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>>;

    /// Removes the checkpoint under `key`; whether there was one.
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Every key, in ascending order.
    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>>;

    /// Appends journal records under `key`, each at its position (ascending, after those
    /// already there), in one atomic write. Journals live apart from checkpoints: `keys` does
    /// not list them. The default refuses: the store keeps no journal.
    fn append_journal<'a>(
        &'a self,
        key: &'a str,
        records: &'a [(u64, Vec<u8>)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = records;
        Box::pin(std::future::ready(Err(no_journal(key))))
    }

    /// Appends the records of `batch` under `key` as [`append_journal`](Store::append_journal)
    /// does: a server's journal writes through this, its records back to back in one buffer
    /// that it reuses, so a store that copies them where it keeps them ([`MemoryStore`]) or
    /// hands them to a thread of its own ([`RedbStore`]) makes one copy of the whole batch,
    /// not one per record. The default copies each record into its own buffer and calls
    /// `append_journal`.
    fn append_journal_batch<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.append_journal(key, &batch.to_records()).await })
    }

    /// Appends `batch` under `key` as [`append_journal_batch`](Store::append_journal_batch)
    /// does, except that it need not be durable when this returns: the records are readable at
    /// once, and durable after the next [`sync_journal`](Store::sync_journal) (or any write
    /// of the store that is durable itself). A crash (a process kill, a power failure) before
    /// that may lose them, never anything durable before them. A server's journal appends this
    /// way between syncs ([`JournalOptions::sync_delay`](crate::journal::JournalOptions::sync_delay)).
    /// The default appends durably.
    fn append_journal_batch_deferred<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.append_journal_batch(key, batch)
    }

    /// Makes every journal append so far durable (see
    /// [`append_journal_batch_deferred`](Store::append_journal_batch_deferred)). The default
    /// does nothing: the default appends are durable already.
    fn sync_journal(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    /// The journal records under `key` at positions `from` and after, in order.
    fn read_journal<'a>(
        &'a self,
        key: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<JournalRecords, StoreError>> {
        let _ = from;
        Box::pin(std::future::ready(Err(no_journal(key))))
    }

    /// The last position of the journal under `key`, if it has records.
    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(std::future::ready(Err(no_journal(key))))
    }

    /// Removes the journal records under `key` before position `before`; how many went (the
    /// records removed from storage: a [`RedbStore`] also counts a record an earlier version
    /// kept in its own row and a later append wrote again, shadowed but still stored).
    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let _ = before;
        Box::pin(std::future::ready(Err(no_journal(key))))
    }
}

fn no_journal(key: &str) -> StoreError {
    StoreError::io(
        "journal",
        key,
        "this store keeps no journal; journal to a `RedbStore` or a `MemoryStore`",
    )
}

impl<T: Store + ?Sized> Store for Arc<T> {
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).save(key, checkpoint)
    }
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        (**self).load(key)
    }
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).delete(key)
    }
    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        (**self).keys()
    }
    fn append_journal<'a>(
        &'a self,
        key: &'a str,
        records: &'a [(u64, Vec<u8>)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).append_journal(key, records)
    }
    fn append_journal_batch<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).append_journal_batch(key, batch)
    }
    fn append_journal_batch_deferred<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).append_journal_batch_deferred(key, batch)
    }

    fn sync_journal(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        (**self).sync_journal()
    }

    fn read_journal<'a>(
        &'a self,
        key: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<JournalRecords, StoreError>> {
        (**self).read_journal(key, from)
    }
    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        (**self).journal_end(key)
    }
    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        (**self).compact_journal(key, before)
    }
}

/// A store could not be opened, read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store could not be opened.
    #[error("cannot open the checkpoint store at `{location}`: {message}")]
    Open {
        /// Where the store is (a path, a URL).
        location: String,
        /// Why it failed, with a hint.
        message: String,
    },
    /// An operation failed.
    #[error("the checkpoint store failed to {operation} `{key}`: {message}")]
    Io {
        /// `save`, `load`, `delete`, `list` or `journal`.
        operation: &'static str,
        /// The key involved (empty for `list`).
        key: String,
        /// Why it failed.
        message: String,
    },
    /// A networked store could not be reached, and did not come back within its retry budget
    /// (the operation was retried with backoff meanwhile).
    #[error("the checkpoint store at `{location}` is unreachable: {message}")]
    Unavailable {
        /// Where the store is (a URL, without credentials).
        location: String,
        /// The last connection error, with a hint.
        message: String,
    },
    /// The store refused to write `key`: the writer no longer owns it (another node took the
    /// agent over, so this writer's copy is stale), or the write is not allowed for that key.
    #[error("the checkpoint store refused to write `{key}`: {reason}")]
    Refused {
        /// The key.
        key: String,
        /// Why, with a hint.
        reason: String,
    },
    /// Journal bytes the store holds do not decode (damaged on disk, or written by another
    /// version): the journal under `key` cannot be read past `position`.
    #[error("the journal `{key}` is corrupt at position {position}: {reason}")]
    CorruptJournal {
        /// The journal's key.
        key: String,
        /// Where the damaged part starts (for a [`RedbStore`], the first position of its row).
        position: u64,
        /// What is wrong.
        reason: String,
    },
}

impl StoreError {
    /// An operation on `key` failed with `error`.
    pub fn io(operation: &'static str, key: &str, error: impl fmt::Display) -> Self {
        StoreError::Io {
            operation,
            key: key.to_string(),
            message: error.to_string(),
        }
    }
}
