//! The embedded default store: one `redb` database file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition, TableError};

use super::{JournalBatch, JournalRecords, Store, StoreError, journal_row};

const CHECKPOINTS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("checkpoints");
/// Journal records by (agent key, position), one row per record: what versions before the
/// batch rows wrote. Still read (merged with [`JOURNAL_BATCHES`] by position) and compacted,
/// never written.
const JOURNAL: TableDefinition<'static, (&str, u64), &[u8]> = TableDefinition::new("journal");
/// Journal batches by (agent key, first position), one row per append (`journal_row`'s
/// layout): one B-tree insertion per writer flush instead of one per record.
const JOURNAL_BATCHES: TableDefinition<'static, (&str, u64), &[u8]> =
    TableDefinition::new("journal_batches");

/// Checkpoints in an embedded `redb` database: one file, ACID transactions, crash-safe.
///
/// Each `save` is one write transaction committed with immediate durability (fsync), so a
/// crash or an I/O error half-way through leaves the previous checkpoint in place. Journal
/// appends are too, except [deferred ones](Store::append_journal_batch_deferred) and
/// compactions, committed without an fsync and made durable by the next durable commit (a
/// [`sync_journal`](Store::sync_journal), a `save`, the last clone dropped). I/O runs on
/// tokio's blocking pool when called inside a runtime. Cheap to clone; clones share the file.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use agent_runtime::store::{RedbStore, Store};
/// let dir = std::env::temp_dir().join(format!("stratagem-doc-{}", std::process::id()));
/// let store = RedbStore::open(dir.join("checkpoints.redb"))?;
/// store.save("order-17", b"{}").await?;
/// assert_eq!(store.load("order-17").await?.as_deref(), Some(&b"{}"[..]));
/// # drop(store); std::fs::remove_dir_all(dir)?;
/// # Ok(()) }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone)]
pub struct RedbStore {
    db: Arc<Database>,
    path: Option<PathBuf>,
    /// Row buffers of journal appends done, reused: a batch's row is encoded on the caller's
    /// thread and freed on the blocking pool's, and allocating and freeing a buffer that large
    /// for every append makes glibc consolidate its fast bins, slowing every small allocation
    /// of the agent's steps after it.
    spare_rows: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// How many row buffers a store keeps for reuse: one per append in flight.
const SPARE_ROWS: usize = 4;

impl RedbStore {
    /// Where [`RedbStore::open_default`] keeps checkpoints, relative to the current directory.
    pub const DEFAULT_PATH: &'static str = ".stratagem/checkpoints.redb";

    /// Opens (or creates) the database at `path`, creating missing parent directories.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let fail = |message: String| StoreError::Open {
            location: path.display().to_string(),
            message,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| fail(format!("cannot create `{}`: {e}", dir.display())))?;
        }
        let db = Database::create(path).map_err(|e| {
            fail(format!(
                "{e}; only one process (and one `RedbStore`) may open a database file at a time"
            ))
        })?;
        Ok(RedbStore {
            db: Arc::new(db),
            path: Some(path.to_path_buf()),
            spare_rows: Arc::default(),
        })
    }

    /// Opens (or creates) the store at [`RedbStore::DEFAULT_PATH`].
    pub fn open_default() -> Result<Self, StoreError> {
        Self::open(Self::DEFAULT_PATH)
    }

    /// A store over a database opened by the caller (a custom storage backend, say).
    pub fn from_database(db: Database) -> Self {
        RedbStore {
            db: Arc::new(db),
            path: None,
            spare_rows: Arc::default(),
        }
    }

    /// The database file, when the store was opened from a path.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

impl fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Runs blocking database work on tokio's blocking pool when there is a runtime, inline otherwise.
async fn blocking<T: Send + 'static>(
    operation: &'static str,
    key: &str,
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(work)
            .await
            .map_err(|e| StoreError::io(operation, key, e))?,
        Err(_) => work(),
    }
}

/// The table `definition` in a read transaction, `None` when it was never created.
fn open_read<K: redb::Key + 'static, V: redb::Value + 'static>(
    txn: &redb::ReadTransaction,
    definition: TableDefinition<'static, K, V>,
) -> Result<Option<redb::ReadOnlyTable<K, V>>, TableError> {
    match txn.open_table(definition) {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

impl RedbStore {
    /// Appends `records` as one row of [`JOURNAL_BATCHES`] in one write transaction on the
    /// blocking pool: durable when it returns, or (`durable` false) committed without an fsync
    /// and durable with the database's next durable commit. The row is encoded here, so the
    /// records are copied once and the caller keeps its buffer.
    fn append_batch<'a, 'r>(
        &'a self,
        key: &'a str,
        records: impl ExactSizeIterator<Item = (u64, &'r [u8])> + Clone,
        durable: bool,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let mut row = self.spare_row();
        let Some(first) = batch_row(&mut row, records) else {
            return Box::pin(std::future::ready(Ok(())));
        };
        let db = self.db.clone();
        let spare_rows = self.spare_rows.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("journal", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", &owned_key, e);
            let appended = (|| {
                let mut txn = db.begin_write().map_err(|e| io(&e))?;
                if !durable {
                    // Refused only where processes share the file; the commit stays durable.
                    let _ = txn.set_durability(Durability::None);
                }
                {
                    let mut table = txn.open_table(JOURNAL_BATCHES).map_err(|e| io(&e))?;
                    append_row(&mut table, &owned_key, first, &row)?;
                }
                txn.commit().map_err(|e| io(&e))
            })();
            let mut spare = spare_rows.lock().unwrap_or_else(|p| p.into_inner());
            if spare.len() < SPARE_ROWS {
                spare.push(row);
            }
            appended
        }))
    }

    /// A row buffer to encode an append into.
    fn spare_row(&self) -> Vec<u8> {
        let mut spare = self.spare_rows.lock().unwrap_or_else(|p| p.into_inner());
        spare.pop().unwrap_or_default()
    }
}

/// Encodes `records` as one row into `row`, in position order (out of order or a position
/// twice: the later write kept); the row's first position, `None` when there are none.
fn batch_row<'r>(
    row: &mut Vec<u8>,
    records: impl ExactSizeIterator<Item = (u64, &'r [u8])> + Clone,
) -> Option<u64> {
    let first = records.clone().next()?.0;
    if journal_row::strictly_ascending(records.clone()) {
        journal_row::encode_into(row, records);
        return Some(first);
    }
    let sorted: BTreeMap<u64, &[u8]> = records.collect();
    journal_row::encode_into(row, sorted.iter().map(|(p, b)| (*p, *b)));
    sorted.keys().next().copied()
}

type BatchTable<'txn> = redb::Table<'txn, (&'static str, u64), &'static [u8]>;

fn corrupt(key: &str, position: u64, reason: String) -> StoreError {
    StoreError::CorruptJournal {
        key: key.to_string(),
        position,
        reason,
    }
}

/// The last position of `key`'s last batch row, read from its header.
fn batch_rows_end(
    table: &impl ReadableTable<(&'static str, u64), &'static [u8]>,
    key: &str,
) -> Result<Option<u64>, StoreError> {
    let io = |e: &dyn fmt::Display| StoreError::io("journal", key, e);
    let Some(entry) = table
        .range((key, 0)..=(key, u64::MAX))
        .map_err(|e| io(&e))?
        .next_back()
    else {
        return Ok(None);
    };
    let (row_key, row) = entry.map_err(|e| io(&e))?;
    let row_first = row_key.value().1;
    let header = journal_row::header(row.value(), row_first)
        .map_err(|reason| corrupt(key, row_first, reason))?;
    Ok(Some(header.last))
}

/// Writes `row` (its first position `first`). Rows of a journal never overlap in positions:
/// an append that reaches into existing rows (a position written again) merges them and itself
/// into one row, its records winning.
fn append_row(
    table: &mut BatchTable<'_>,
    key: &str,
    first: u64,
    row: &[u8],
) -> Result<(), StoreError> {
    let io = |e: &dyn fmt::Display| StoreError::io("journal", key, e);
    // The usual case, one seek: the journal's last row ends before this batch.
    let tail = batch_rows_end(table, key)?;
    if tail.is_none_or(|end| end < first) {
        return table
            .insert((key, first), row)
            .map(drop)
            .map_err(|e| io(&e));
    }
    let records = journal_row::records(row, first).map_err(|reason| corrupt(key, first, reason))?;
    let last = records[records.len() - 1].0;
    // Rows overlapping [first, last]: those starting inside it, and the one before it when it
    // reaches in (rows are disjoint, so only that one can).
    let mut start = first;
    if let Some(entry) = table
        .range((key, 0)..(key, first))
        .map_err(|e| io(&e))?
        .next_back()
    {
        let (row_key, row) = entry.map_err(|e| io(&e))?;
        let row_first = row_key.value().1;
        let header = journal_row::header(row.value(), row_first)
            .map_err(|reason| corrupt(key, row_first, reason))?;
        if header.last >= first {
            start = row_first;
        }
    }
    let mut merged: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut overlapped = Vec::new();
    for entry in table
        .range((key, start)..=(key, last))
        .map_err(|e| io(&e))?
    {
        let (row_key, row) = entry.map_err(|e| io(&e))?;
        let row_first = row_key.value().1;
        for (position, bytes) in journal_row::records(row.value(), row_first)
            .map_err(|reason| corrupt(key, row_first, reason))?
        {
            merged.insert(position, bytes.to_vec());
        }
        overlapped.push(row_first);
    }
    for row_first in overlapped {
        table.remove((key, row_first)).map_err(|e| io(&e))?;
    }
    for (position, bytes) in records {
        merged.insert(position, bytes.to_vec());
    }
    let merged_first = *merged.keys().next().expect("the batch is not empty");
    let row = journal_row::encode(merged.iter().map(|(p, b)| (*p, b.as_slice())));
    table
        .insert((key, merged_first), row.as_slice())
        .map(drop)
        .map_err(|e| io(&e))
}

/// Merges `old` (per-record rows of earlier versions) into `batched` by position; a position in
/// both keeps the batched record, the later write.
fn merge_by_position(batched: JournalRecords, old: JournalRecords) -> JournalRecords {
    if old.is_empty() {
        return batched;
    }
    let mut merged: BTreeMap<u64, Vec<u8>> = old.into_iter().collect();
    merged.extend(batched);
    merged.into_iter().collect()
}

impl Store for RedbStore {
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let db = self.db.clone();
        let (owned_key, bytes) = (key.to_string(), checkpoint.to_vec());
        Box::pin(blocking("save", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("save", &owned_key, e);
            let txn = db.begin_write().map_err(|e| io(&e))?;
            {
                let mut table = txn.open_table(CHECKPOINTS).map_err(|e| io(&e))?;
                table
                    .insert(owned_key.as_str(), bytes.as_slice())
                    .map_err(|e| io(&e))?;
            }
            // Dropping an uncommitted transaction aborts it: nothing of it is ever visible.
            txn.commit().map_err(|e| io(&e))
        }))
    }

    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("load", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("load", &owned_key, e);
            let txn = db.begin_read().map_err(|e| io(&e))?;
            let table = match txn.open_table(CHECKPOINTS) {
                Ok(table) => table,
                Err(TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(io(&e)),
            };
            let value = table.get(owned_key.as_str()).map_err(|e| io(&e))?;
            Ok(value.map(|v| v.value().to_vec()))
        }))
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("delete", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("delete", &owned_key, e);
            let txn = db.begin_write().map_err(|e| io(&e))?;
            let existed = {
                let mut table = txn.open_table(CHECKPOINTS).map_err(|e| io(&e))?;
                table
                    .remove(owned_key.as_str())
                    .map_err(|e| io(&e))?
                    .is_some()
            };
            txn.commit().map_err(|e| io(&e))?;
            Ok(existed)
        }))
    }

    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        let db = self.db.clone();
        Box::pin(blocking("list", "", move || {
            let io = |e: &dyn fmt::Display| StoreError::io("list", "", e);
            let txn = db.begin_read().map_err(|e| io(&e))?;
            let table = match txn.open_table(CHECKPOINTS) {
                Ok(table) => table,
                Err(TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(io(&e)),
            };
            let mut keys = Vec::new();
            for entry in table.iter().map_err(|e| io(&e))? {
                let (key, _) = entry.map_err(|e| io(&e))?;
                keys.push(key.value().to_string());
            }
            Ok(keys)
        }))
    }

    fn append_journal<'a>(
        &'a self,
        key: &'a str,
        records: &'a [(u64, Vec<u8>)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let records = records
            .iter()
            .map(|(position, bytes)| (*position, bytes.as_slice()));
        self.append_batch(key, records, true)
    }

    fn append_journal_batch<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.append_batch(key, batch.iter(), true)
    }

    /// One write transaction committed without an fsync ([`Durability::None`]): readable at
    /// once, durable with the next durable commit of the database ([`sync_journal`], a
    /// checkpoint's `save`, a compaction) or when the last clone of the store is dropped. A
    /// process that dies before then (killed, or the machine losing power) comes back with
    /// the database as of its last durable commit.
    ///
    /// [`sync_journal`]: Store::sync_journal
    fn append_journal_batch_deferred<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.append_batch(key, batch.iter(), false)
    }

    /// One empty write transaction committed durably (with an fsync): every commit before it
    /// is on disk when it returns.
    fn sync_journal(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        let db = self.db.clone();
        Box::pin(blocking("journal", "", move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", "", e);
            let txn = db.begin_write().map_err(|e| io(&e))?;
            txn.commit().map_err(|e| io(&e))
        }))
    }

    fn read_journal<'a>(
        &'a self,
        key: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<JournalRecords, StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("journal", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", &owned_key, e);
            let txn = db.begin_read().map_err(|e| io(&e))?;
            let key = owned_key.as_str();
            let mut batched = Vec::new();
            if let Some(table) = open_read(&txn, JOURNAL_BATCHES).map_err(|e| io(&e))? {
                // A row starting at or before `from` may hold it.
                let start = match table
                    .range((key, 0)..=(key, from))
                    .map_err(|e| io(&e))?
                    .next_back()
                {
                    Some(entry) => entry.map_err(|e| io(&e))?.0.value().1,
                    None => from,
                };
                for entry in table
                    .range((key, start)..=(key, u64::MAX))
                    .map_err(|e| io(&e))?
                {
                    let (row_key, row) = entry.map_err(|e| io(&e))?;
                    let row_first = row_key.value().1;
                    let records = journal_row::records(row.value(), row_first)
                        .map_err(|reason| corrupt(key, row_first, reason))?;
                    batched.extend(
                        records
                            .into_iter()
                            .filter(|&(position, _)| position >= from)
                            .map(|(position, bytes)| (position, bytes.to_vec())),
                    );
                }
            }
            let mut old = Vec::new();
            if let Some(table) = open_read(&txn, JOURNAL).map_err(|e| io(&e))? {
                for entry in table
                    .range((key, from)..=(key, u64::MAX))
                    .map_err(|e| io(&e))?
                {
                    let (position, bytes) = entry.map_err(|e| io(&e))?;
                    old.push((position.value().1, bytes.value().to_vec()));
                }
            }
            Ok(merge_by_position(batched, old))
        }))
    }

    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("journal", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", &owned_key, e);
            let txn = db.begin_read().map_err(|e| io(&e))?;
            let key = owned_key.as_str();
            let mut end = None;
            if let Some(table) = open_read(&txn, JOURNAL_BATCHES).map_err(|e| io(&e))? {
                end = batch_rows_end(&table, key)?;
            }
            let old = match open_read(&txn, JOURNAL).map_err(|e| io(&e))? {
                Some(table) => table
                    .range((key, 0)..=(key, u64::MAX))
                    .map_err(|e| io(&e))?
                    .next_back()
                    .transpose()
                    .map_err(|e| io(&e))?
                    .map(|(position, _)| position.value().1),
                None => None,
            };
            Ok(end.max(old))
        }))
    }

    /// One write transaction committed without an fsync, as a deferred append is: a
    /// compaction only frees space, so one that a crash undoes brings back records that the
    /// next compaction removes again, and never loses any other. Durable with the next durable
    /// commit ([`sync_journal`](Store::sync_journal), a `save`).
    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("journal", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", &owned_key, e);
            let mut txn = db.begin_write().map_err(|e| io(&e))?;
            let _ = txn.set_durability(Durability::None);
            let key = owned_key.as_str();
            let mut removed = 0u64;
            {
                let mut table = txn.open_table(JOURNAL).map_err(|e| io(&e))?;
                for entry in table
                    .extract_from_if((key, 0)..(key, before), |_, _| true)
                    .map_err(|e| io(&e))?
                {
                    entry.map_err(|e| io(&e))?;
                    removed += 1;
                }
            }
            {
                let mut table = txn.open_table(JOURNAL_BATCHES).map_err(|e| io(&e))?;
                let mut starts = Vec::new();
                for entry in table.range((key, 0)..(key, before)).map_err(|e| io(&e))? {
                    let (row_key, row) = entry.map_err(|e| io(&e))?;
                    let row_first = row_key.value().1;
                    let header = journal_row::header(row.value(), row_first)
                        .map_err(|reason| corrupt(key, row_first, reason))?;
                    starts.push((row_first, header));
                }
                for (row_first, header) in starts {
                    let row = table
                        .remove((key, row_first))
                        .map_err(|e| io(&e))?
                        .expect("the row was just read in this transaction");
                    if header.last < before {
                        removed += u64::from(header.count);
                        continue;
                    }
                    // The row reaching past `before`: kept from `before` on, under its new start.
                    let (kept_first, rewritten, kept) = {
                        let records = journal_row::records(row.value(), row_first)
                            .map_err(|reason| corrupt(key, row_first, reason))?;
                        let kept: Vec<(u64, &[u8])> = records
                            .into_iter()
                            .filter(|&(position, _)| position >= before)
                            .collect();
                        (
                            kept[0].0,
                            journal_row::encode(kept.iter().copied()),
                            kept.len(),
                        )
                    };
                    drop(row);
                    removed += u64::from(header.count) - kept as u64;
                    table
                        .insert((key, kept_first), rewritten.as_slice())
                        .map_err(|e| io(&e))?;
                }
            }
            txn.commit().map_err(|e| io(&e))?;
            Ok(removed)
        }))
    }
}
