//! Input journals in PostgreSQL (`stratagem_journal`, one row per record): what
//! `agent_runtime::journal` appends through the `Store`, readable offline by `Journal::load`.
//!
//! A key never leased (an agent outside the cluster) is written as is; a clustered agent's
//! journal only under its lease, fenced like its checkpoints, so a node that lost an agent can
//! no longer append to (or compact) its journal.

use agent_runtime::store::{JournalRecords, StoreError};

use super::PostgresStore;
use crate::lease::{Lease, refused};

/// Journal positions are `u64`; PostgreSQL's `bigint` is signed.
fn position(key: &str, at: u64) -> Result<i64, StoreError> {
    i64::try_from(at).map_err(|_| {
        StoreError::io(
            "journal",
            key,
            format!("position {at} is beyond what PostgreSQL's `bigint` holds"),
        )
    })
}

fn columns<'a>(
    key: &str,
    records: &'a [(u64, Vec<u8>)],
) -> Result<(Vec<i64>, Vec<&'a [u8]>), StoreError> {
    let mut positions = Vec::with_capacity(records.len());
    let mut bytes = Vec::with_capacity(records.len());
    for (at, record) in records {
        positions.push(position(key, *at)?);
        bytes.push(record.as_slice());
    }
    Ok((positions, bytes))
}

/// The refusal of an unfenced journal write to a clustered agent's key.
fn leased(key: &str) -> StoreError {
    StoreError::Refused {
        key: key.to_string(),
        reason: "it belongs to a clustered agent, whose journal is written only under its lease (`PostgresStore::append_journal_fenced`)".to_string(),
    }
}

impl PostgresStore {
    pub(crate) async fn append_journal_plain(
        &self,
        key: &str,
        records: &[(u64, Vec<u8>)],
    ) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let (positions, bytes) = columns(key, records)?;
        let (positions, bytes) = (&positions, &bytes);
        let row = self
            .with_retry("journal", key, |conn| async move {
                conn.client
                    .query_one(&conn.sql.journal_append, &[&key, positions, bytes])
                    .await
            })
            .await?;
        let allowed: bool = row.get(0);
        if !allowed {
            return Err(leased(key));
        }
        Ok(())
    }

    /// Appends journal records (position, bytes) to the journal of `lease.key` in one
    /// statement, only while `lease` is live and current: refused ([`StoreError::Refused`])
    /// once its holder lost the agent, like [`save_fenced`](PostgresStore::save_fenced).
    pub async fn append_journal_fenced(
        &self,
        lease: &Lease,
        records: &[(u64, Vec<u8>)],
    ) -> Result<(), StoreError> {
        let Lease { key, owner, token } = lease;
        let (positions, bytes) = columns(key, records)?;
        let (positions, bytes) = (&positions, &bytes);
        let row = self
            .with_retry("journal", key, |conn| async move {
                conn.client
                    .query_one(
                        &conn.sql.journal_append_fenced,
                        &[key, positions, bytes, owner, token],
                    )
                    .await
            })
            .await?;
        let live: bool = row.get(0);
        if !live {
            return Err(refused(lease));
        }
        Ok(())
    }

    pub(crate) async fn read_journal_rows(
        &self,
        key: &str,
        from: u64,
    ) -> Result<JournalRecords, StoreError> {
        // Past `bigint`, nothing can be there.
        let Ok(from) = i64::try_from(from) else {
            return Ok(Vec::new());
        };
        let rows = self
            .with_retry("journal", key, |conn| async move {
                conn.client
                    .query(&conn.sql.journal_read, &[&key, &from])
                    .await
            })
            .await?;
        Ok(rows
            .iter()
            .map(|row| (row.get::<_, i64>(0) as u64, row.get(1)))
            .collect())
    }

    pub(crate) async fn journal_last(&self, key: &str) -> Result<Option<u64>, StoreError> {
        let row = self
            .with_retry("journal", key, |conn| async move {
                conn.client.query_one(&conn.sql.journal_end, &[&key]).await
            })
            .await?;
        Ok(row.get::<_, Option<i64>>(0).map(|end| end as u64))
    }

    pub(crate) async fn compact_journal_plain(
        &self,
        key: &str,
        before: u64,
    ) -> Result<u64, StoreError> {
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        let row = self
            .with_retry("journal", key, |conn| async move {
                conn.client
                    .query_one(&conn.sql.journal_compact, &[&key, &before])
                    .await
            })
            .await?;
        if !row.get::<_, bool>(0) {
            return Err(leased(key));
        }
        Ok(row.get::<_, i64>(1) as u64)
    }

    /// Removes the records of `lease.key`'s journal before position `before`, only while
    /// `lease` is live and current; how many went.
    pub async fn compact_journal_fenced(
        &self,
        lease: &Lease,
        before: u64,
    ) -> Result<u64, StoreError> {
        let Lease { key, owner, token } = lease;
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        let row = self
            .with_retry("journal", key, |conn| async move {
                conn.client
                    .query_one(
                        &conn.sql.journal_compact_fenced,
                        &[key, &before, owner, token],
                    )
                    .await
            })
            .await?;
        if !row.get::<_, bool>(0) {
            return Err(refused(lease));
        }
        Ok(row.get::<_, i64>(1) as u64)
    }
}
