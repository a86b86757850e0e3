//! An in-memory store, for tests and short-lived programs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::{JournalBatch, JournalRecords, Store, StoreError};

/// One agent's journal records by position, each kept in the batch it was appended in (a
/// batch stays while one of its records does).
type Journal = BTreeMap<u64, (Arc<JournalBatch>, usize)>;

/// Checkpoints in memory. Cheap to clone; clones share the same map. Saves are atomic (one
/// map insertion under a lock).
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    map: Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
    journals: Arc<Mutex<BTreeMap<String, Journal>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, Vec<u8>>) -> T) -> T {
        // A panic while holding the lock cannot leave a half-written entry, so poison is moot.
        f(&mut self.map.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn journal<T>(&self, key: &str, f: impl FnOnce(&mut Journal) -> T) -> T {
        let mut journals = self.journals.lock().unwrap_or_else(|p| p.into_inner());
        f(journals.entry(key.to_string()).or_default())
    }
}

impl Store for MemoryStore {
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.with(|m| m.insert(key.to_string(), checkpoint.to_vec()));
        Box::pin(std::future::ready(Ok(())))
    }

    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        let value = self.with(|m| m.get(key).cloned());
        Box::pin(std::future::ready(Ok(value)))
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let existed = self.with(|m| m.remove(key).is_some());
        Box::pin(std::future::ready(Ok(existed)))
    }

    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        let keys = self.with(|m| m.keys().cloned().collect());
        Box::pin(std::future::ready(Ok(keys)))
    }

    fn append_journal<'a>(
        &'a self,
        key: &'a str,
        records: &'a [(u64, Vec<u8>)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let batch = records
            .iter()
            .map(|(position, bytes)| (*position, bytes.as_slice()))
            .collect();
        self.append_journal_batch(key, batch)
    }

    fn append_journal_batch<'a>(
        &'a self,
        key: &'a str,
        batch: JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let batch = Arc::new(batch);
        self.journal(key, |j| {
            for (index, (position, _)) in batch.iter().enumerate() {
                j.insert(position, (batch.clone(), index));
            }
        });
        Box::pin(std::future::ready(Ok(())))
    }

    fn read_journal<'a>(
        &'a self,
        key: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<JournalRecords, StoreError>> {
        let records = self.journal(key, |j| {
            j.range(from..)
                .filter_map(|(p, (batch, index))| Some((*p, batch.get(*index)?.1.to_vec())))
                .collect()
        });
        Box::pin(std::future::ready(Ok(records)))
    }

    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let end = self.journal(key, |j| j.keys().next_back().copied());
        Box::pin(std::future::ready(Ok(end)))
    }

    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let removed = self.journal(key, |j| {
            let kept = j.split_off(&before);
            let removed = j.len() as u64;
            *j = kept;
            removed
        });
        Box::pin(std::future::ready(Ok(removed)))
    }
}
