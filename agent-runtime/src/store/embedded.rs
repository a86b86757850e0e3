//! The embedded default store: one `redb` database file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition, TableError};

use super::{JournalBatch, JournalRecords, Store, StoreError};

const CHECKPOINTS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("checkpoints");
/// Journal records by (agent key, position): one table for every journal, ordered as read.
const JOURNAL: TableDefinition<'static, (&str, u64), &[u8]> = TableDefinition::new("journal");

/// Checkpoints in an embedded `redb` database: one file, ACID transactions, crash-safe.
///
/// Each `save` is one write transaction committed with immediate durability (fsync), so a
/// crash or an I/O error half-way through leaves the previous checkpoint in place. I/O runs on
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
}

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

impl RedbStore {
    /// Appends a batch in one write transaction on the blocking pool.
    fn append_owned<'a>(
        &'a self,
        key: &'a str,
        batch: JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("journal", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", &owned_key, e);
            let txn = db.begin_write().map_err(|e| io(&e))?;
            {
                let mut table = txn.open_table(JOURNAL).map_err(|e| io(&e))?;
                for (position, bytes) in batch.iter() {
                    table
                        .insert((owned_key.as_str(), position), bytes)
                        .map_err(|e| io(&e))?;
                }
            }
            txn.commit().map_err(|e| io(&e))
        }))
    }
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
        let batch = records
            .iter()
            .map(|(position, bytes)| (*position, bytes.as_slice()))
            .collect();
        self.append_owned(key, batch)
    }

    fn append_journal_batch<'a>(
        &'a self,
        key: &'a str,
        batch: &'a JournalBatch,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.append_owned(key, batch.clone())
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
            let table = match txn.open_table(JOURNAL) {
                Ok(table) => table,
                Err(TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(io(&e)),
            };
            let range = (owned_key.as_str(), from)..=(owned_key.as_str(), u64::MAX);
            let mut records = Vec::new();
            for entry in table.range(range).map_err(|e| io(&e))? {
                let (position, bytes) = entry.map_err(|e| io(&e))?;
                records.push((position.value().1, bytes.value().to_vec()));
            }
            Ok(records)
        }))
    }

    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("journal", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", &owned_key, e);
            let txn = db.begin_read().map_err(|e| io(&e))?;
            let table = match txn.open_table(JOURNAL) {
                Ok(table) => table,
                Err(TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(io(&e)),
            };
            let range = (owned_key.as_str(), 0)..=(owned_key.as_str(), u64::MAX);
            let last = table.range(range).map_err(|e| io(&e))?.next_back();
            match last {
                Some(entry) => Ok(Some(entry.map_err(|e| io(&e))?.0.value().1)),
                None => Ok(None),
            }
        }))
    }

    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let db = self.db.clone();
        let owned_key = key.to_string();
        Box::pin(blocking("journal", key, move || {
            let io = |e: &dyn fmt::Display| StoreError::io("journal", &owned_key, e);
            let txn = db.begin_write().map_err(|e| io(&e))?;
            let removed = {
                let mut table = txn.open_table(JOURNAL).map_err(|e| io(&e))?;
                let range = (owned_key.as_str(), 0)..(owned_key.as_str(), before);
                let mut removed = 0u64;
                for entry in table
                    .extract_from_if(range, |_, _| true)
                    .map_err(|e| io(&e))?
                {
                    entry.map_err(|e| io(&e))?;
                    removed += 1;
                }
                removed
            };
            txn.commit().map_err(|e| io(&e))?;
            Ok(removed)
        }))
    }
}
