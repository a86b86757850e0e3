//! The store a node's agents journal to: PostgreSQL, each append and compaction fenced by the
//! lease this node holds on the agent at that moment.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_runtime::store::{JournalRecords, Store, StoreError};
use futures::future::BoxFuture;

use crate::lease::Lease;
use crate::postgres::PostgresStore;

/// The leases a node holds: key to fencing token.
pub(crate) type HeldLeases = Arc<Mutex<HashMap<String, i64>>>;

/// Journal writes go under the node's current lease of the agent; an agent this node does not
/// hold (any more) is refused, and so is a lease another node took over meanwhile.
#[derive(Debug)]
pub(crate) struct NodeJournal {
    pub(crate) store: PostgresStore,
    pub(crate) owner: String,
    pub(crate) leases: HeldLeases,
}

impl NodeJournal {
    fn lease(&self, key: &str) -> Result<Lease, StoreError> {
        let token = self
            .leases
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .copied();
        match token {
            Some(token) => Ok(Lease {
                key: key.to_string(),
                owner: self.owner.clone(),
                token,
            }),
            None => Err(StoreError::Refused {
                key: key.to_string(),
                reason: format!(
                    "node `{}` does not hold the agent's lease; its journal is written by the node that runs it",
                    self.owner
                ),
            }),
        }
    }
}

impl Store for NodeJournal {
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.store.save(key, checkpoint)
    }

    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        self.store.load(key)
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.store.delete(key)
    }

    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        self.store.keys()
    }

    fn append_journal<'a>(
        &'a self,
        key: &'a str,
        records: &'a [(u64, Vec<u8>)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let lease = self.lease(key)?;
            self.store.append_journal_fenced(&lease, records).await
        })
    }

    fn read_journal<'a>(
        &'a self,
        key: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<JournalRecords, StoreError>> {
        self.store.read_journal(key, from)
    }

    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        self.store.journal_end(key)
    }

    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let lease = self.lease(key)?;
            self.store.compact_journal_fenced(&lease, before).await
        })
    }
}
