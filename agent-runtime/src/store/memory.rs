//! An in-memory store, for tests and short-lived programs.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::{JournalBatch, JournalRecords, Store, StoreError};

/// One agent's journal: its records' bytes back to back in the order appended, and where each
/// record's bytes are by position. Appending copies into the one buffer (no allocation per
/// record or per batch once it has grown); compaction drops bytes from its front.
#[derive(Debug, Default)]
struct Journal {
    bytes: VecDeque<u8>,
    /// The offset of `bytes[0]` among all bytes ever appended.
    base: u64,
    /// Each record's start and end among all bytes ever appended.
    records: BTreeMap<u64, (u64, u64)>,
}

impl Journal {
    fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    fn append(&mut self, position: u64, record: &[u8]) {
        let start = self.end();
        self.bytes.extend(record);
        // A record appended again at its position replaces it; its old bytes go at compaction.
        self.records.insert(position, (start, self.end()));
    }

    fn read(&self, (start, end): (u64, u64)) -> Vec<u8> {
        let range = (start - self.base) as usize..(end - self.base) as usize;
        self.bytes.range(range).copied().collect()
    }

    /// Removes the records before position `before`; how many went.
    fn compact(&mut self, before: u64) -> u64 {
        let kept = self.records.split_off(&before);
        let removed = self.records.len() as u64;
        self.records = kept;
        // Bytes before the first one still referenced are garbage.
        let keep_from = self
            .records
            .values()
            .map(|&(start, _)| start)
            .min()
            .unwrap_or_else(|| self.end());
        self.bytes.drain(..(keep_from - self.base) as usize);
        self.base = keep_from;
        removed
    }
}

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
        match journals.get_mut(key) {
            Some(journal) => f(journal),
            None => f(journals.entry(key.to_string()).or_default()),
        }
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
        self.journal(key, |j| {
            for (position, bytes) in records {
                j.append(*position, bytes);
            }
        });
        Box::pin(std::future::ready(Ok(())))
    }

    fn append_journal_batch<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.journal(key, |j| {
            for (position, bytes) in batch.iter() {
                j.append(position, bytes);
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
            j.records
                .range(from..)
                .map(|(position, &range)| (*position, j.read(range)))
                .collect()
        });
        Box::pin(std::future::ready(Ok(records)))
    }

    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let end = self.journal(key, |j| j.records.keys().next_back().copied());
        Box::pin(std::future::ready(Ok(end)))
    }

    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let removed = self.journal(key, |j| j.compact(before));
        Box::pin(std::future::ready(Ok(removed)))
    }
}
