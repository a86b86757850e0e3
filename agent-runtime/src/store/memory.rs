//! An in-memory store, for tests and short-lived programs.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::{JournalBatch, JournalRecords, Store, StoreError};

/// One agent's journal: its records' bytes back to back in the order appended, and where each
/// record's bytes are, by position. Appending copies into the one buffer (no allocation per
/// record or per batch once it has grown); compaction drops bytes from its front.
#[derive(Debug, Default)]
struct Journal {
    bytes: VecDeque<u8>,
    /// The offset of `bytes[0]` among all bytes ever appended.
    base: u64,
    /// Each record's position, start and end among all bytes ever appended, by position.
    /// Appends come in ascending order, so nearly every one goes at the back.
    records: VecDeque<(u64, u64, u64)>,
}

impl Journal {
    fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    /// The index of the first record at `position` or after.
    fn index_of(&self, position: u64) -> usize {
        self.records.partition_point(|&(at, ..)| at < position)
    }

    fn append(&mut self, position: u64, record: &[u8]) {
        let start = self.end();
        self.bytes.extend(record);
        let entry = (position, start, self.end());
        match self.records.back() {
            Some(&(last, ..)) if last >= position => {
                let index = self.index_of(position);
                match self.records.get_mut(index) {
                    // Appended again at its position: replaced, its old bytes go at compaction.
                    Some(found) if found.0 == position => *found = entry,
                    _ => self.records.insert(index, entry),
                }
            }
            _ => self.records.push_back(entry),
        }
    }

    fn read_from(&self, from: u64) -> JournalRecords {
        self.records
            .range(self.index_of(from)..)
            .map(|&(position, start, end)| {
                let range = (start - self.base) as usize..(end - self.base) as usize;
                (position, self.bytes.range(range).copied().collect())
            })
            .collect()
    }

    fn last(&self) -> Option<u64> {
        self.records.back().map(|&(position, ..)| position)
    }

    /// Removes the records before position `before`; how many went.
    fn compact(&mut self, before: u64) -> u64 {
        let removed = self.index_of(before);
        self.records.drain(..removed);
        // Bytes before the first one still referenced are garbage.
        let keep_from = self
            .records
            .iter()
            .map(|&(_, start, _)| start)
            .min()
            .unwrap_or_else(|| self.end());
        self.bytes.drain(..(keep_from - self.base) as usize);
        self.base = keep_from;
        removed as u64
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
        let records = self.journal(key, |j| j.read_from(from));
        Box::pin(std::future::ready(Ok(records)))
    }

    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let end = self.journal(key, |j| j.last());
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
