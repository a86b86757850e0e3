//! Leases: which node owns an agent, and the fencing token that keeps a stale owner out.

use std::sync::Arc;
use std::time::Duration;

use agent_runtime::store::{JournalRecords, Store, StoreError};
use futures::future::BoxFuture;

use crate::postgres::PostgresStore;

/// A node's claim on a key (an agent id, or a shard of the cluster) until it expires.
///
/// Every claim of a key raises its fencing token. A checkpoint written under a lease carries
/// its token and is refused unless that lease is still live and still this owner's, and
/// never replaces a checkpoint written under a higher token: a node that was paused or cut off
/// while its lease expired and another node took the agent over can no longer write.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lease {
    /// What is leased.
    pub key: String,
    /// Who holds it (a node name).
    pub owner: String,
    /// The fencing token: higher for every claim of `key`.
    pub token: i64,
}

/// The refusal of a write under `lease`.
pub(crate) fn refused(lease: &Lease) -> StoreError {
    let Lease { key, owner, token } = lease;
    StoreError::Refused {
        key: key.clone(),
        reason: format!(
            "the lease of `{owner}` (token {token}) expired or another node took the agent over; this copy of the agent is stale and must stop"
        ),
    }
}

fn secs(ttl: Duration) -> f64 {
    ttl.as_secs_f64()
}

impl PostgresStore {
    /// Claims `key` for `owner` for `ttl`, if it is free, expired or already `owner`'s (a
    /// re-claim starts a new lease with a new token). `None` if another owner holds it.
    pub async fn claim(
        &self,
        key: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, StoreError> {
        let ttl = secs(ttl);
        let row = self
            .with_retry("claim", key, |conn| async move {
                conn.client
                    .query_opt(&conn.sql.claim, &[&key, &owner, &ttl])
                    .await
            })
            .await?;
        Ok(row.map(|row| Lease {
            key: key.to_string(),
            owner: owner.to_string(),
            token: row.get(0),
        }))
    }

    /// [`claim`](PostgresStore::claim) for many keys in one statement: the lease of each key
    /// claimed, `None` for each held by another owner, in the order of `keys` (which must be
    /// distinct).
    pub async fn claim_many(
        &self,
        keys: &[String],
        owner: &str,
        ttl: Duration,
    ) -> Result<Vec<Option<Lease>>, StoreError> {
        let ttl = secs(ttl);
        let first = keys.first().map_or("", String::as_str);
        let rows = self
            .with_retry("claim", first, |conn| async move {
                conn.client
                    .query(&conn.sql.claim_many, &[&keys, &owner, &ttl])
                    .await
            })
            .await?;
        let mut tokens: std::collections::HashMap<String, i64> =
            rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        Ok(keys
            .iter()
            .map(|key| {
                tokens.remove(key).map(|token| Lease {
                    key: key.clone(),
                    owner: owner.to_string(),
                    token,
                })
            })
            .collect())
    }

    /// Extends the live leases of `owner` on `keys` by `ttl` and returns them: a lease that is
    /// not in the answer expired or was taken over, and its holder must stop using it.
    pub async fn renew(
        &self,
        owner: &str,
        keys: &[String],
        ttl: Duration,
    ) -> Result<Vec<Lease>, StoreError> {
        let ttl = secs(ttl);
        let rows = self
            .with_retry("renew", owner, |conn| async move {
                conn.client
                    .query(&conn.sql.renew, &[&owner, &ttl, &keys])
                    .await
            })
            .await?;
        Ok(rows
            .iter()
            .map(|row| Lease {
                key: row.get(0),
                owner: owner.to_string(),
                token: row.get(1),
            })
            .collect())
    }

    /// Gives `lease` up now (if it is still the current one), so another node may claim it
    /// without waiting for it to expire.
    pub async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        let Lease { key, owner, token } = lease;
        self.with_retry("release", key, |conn| async move {
            conn.client
                .execute(&conn.sql.release, &[key, owner, token])
                .await
        })
        .await?;
        Ok(())
    }

    /// Who holds `key` now, if anyone: its owner and token.
    pub async fn holder(&self, key: &str) -> Result<Option<(String, i64)>, StoreError> {
        let row = self
            .with_retry("holder", key, |conn| async move {
                conn.client.query_opt(&conn.sql.holder, &[&key]).await
            })
            .await?;
        Ok(row.map(|row| (row.get(0), row.get(1))))
    }

    /// Writes the checkpoint of `lease.key` under the lease, with the ids of the signals whose
    /// effects it includes, in one statement. Refused ([`StoreError::Refused`]) unless the
    /// lease is live and current, and over a checkpoint written under a higher token.
    pub async fn save_fenced(
        &self,
        lease: &Lease,
        checkpoint: &[u8],
        seen: &[String],
    ) -> Result<(), StoreError> {
        let Lease { key, owner, token } = lease;
        let written = self
            .with_retry("save", key, |conn| async move {
                conn.client
                    .execute(
                        &conn.sql.save_fenced,
                        &[key, &checkpoint, owner, token, &seen],
                    )
                    .await
            })
            .await?;
        if written == 0 {
            return Err(refused(lease));
        }
        Ok(())
    }

    /// Writes many checkpoints, each as [`save_fenced`](PostgresStore::save_fenced) would, in
    /// one statement and one commit: `true` for each one written, `false` for each refused.
    /// A key must not appear twice.
    pub async fn save_fenced_many(
        &self,
        writes: &[(&Lease, &[u8], &[String])],
    ) -> Result<Vec<bool>, StoreError> {
        let keys: Vec<&str> = writes.iter().map(|(l, _, _)| l.key.as_str()).collect();
        let checkpoints: Vec<&[u8]> = writes.iter().map(|(_, c, _)| *c).collect();
        let owners: Vec<&str> = writes.iter().map(|(l, _, _)| l.owner.as_str()).collect();
        let tokens: Vec<i64> = writes.iter().map(|(l, _, _)| l.token).collect();
        let seen: Vec<String> = writes
            .iter()
            .map(|(_, _, s)| serde_json::Value::from(s.to_vec()).to_string())
            .collect();
        let (keys, checkpoints, owners, tokens, seen) =
            (&keys, &checkpoints, &owners, &tokens, &seen);
        let first = keys.first().copied().unwrap_or_default();
        let rows = self
            .with_retry("save", first, |conn| async move {
                conn.client
                    .query(
                        &conn.sql.save_fenced_many,
                        &[keys, checkpoints, owners, tokens, seen],
                    )
                    .await
            })
            .await?;
        let written: std::collections::HashSet<String> =
            rows.iter().map(|r| r.get::<_, String>(0)).collect();
        Ok(keys.iter().map(|k| written.contains(*k)).collect())
    }

    /// A [`Store`] that writes through [`save_fenced`](PostgresStore::save_fenced) under
    /// `lease`, recording `seen`: what an agent's `checkpoint`/`hibernate` is given in a
    /// cluster.
    pub fn fenced(&self, lease: Lease, seen: Arc<[String]>) -> FencedStore {
        FencedStore {
            store: self.clone(),
            lease,
            seen,
        }
    }

    /// Records that `node` of `cluster` is alive for `ttl` more.
    pub async fn heartbeat(
        &self,
        cluster: &str,
        node: &str,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let ttl = secs(ttl);
        self.with_retry("heartbeat", node, |conn| async move {
            conn.client
                .execute(&conn.sql.heartbeat, &[&cluster, &node, &ttl])
                .await
        })
        .await?;
        Ok(())
    }

    /// The nodes of `cluster` whose heartbeat has not expired, by name.
    pub async fn live_nodes(&self, cluster: &str) -> Result<Vec<String>, StoreError> {
        let rows = self
            .with_retry("list nodes", cluster, |conn| async move {
                conn.client.query(&conn.sql.live_nodes, &[&cluster]).await
            })
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Removes `node` from the live nodes of `cluster` at once (a graceful leave).
    pub async fn leave(&self, cluster: &str, node: &str) -> Result<(), StoreError> {
        self.with_retry("leave", node, |conn| async move {
            conn.client
                .execute(&conn.sql.leave, &[&cluster, &node])
                .await
        })
        .await?;
        Ok(())
    }

    /// The keys of leases nobody holds now (expired or released), except those starting with
    /// `except_prefix`.
    pub async fn idle_leases(&self, except_prefix: &str) -> Result<Vec<String>, StoreError> {
        let rows = self
            .with_retry("list leases", "", |conn| async move {
                conn.client.query(&conn.sql.idle, &[&except_prefix]).await
            })
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}

/// A [`PostgresStore`] seen through one lease: `save` and journal appends and compactions are
/// fenced, reads as the store.
#[derive(Debug, Clone)]
pub struct FencedStore {
    store: PostgresStore,
    lease: Lease,
    seen: Arc<[String]>,
}

impl FencedStore {
    /// The lease writes go under.
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// Refuses a write to any key but the lease's.
    fn own(&self, key: &str) -> Result<(), StoreError> {
        if key == self.lease.key {
            return Ok(());
        }
        Err(StoreError::Refused {
            key: key.to_string(),
            reason: format!(
                "this store writes only `{}`, under its lease",
                self.lease.key
            ),
        })
    }
}

impl Store for FencedStore {
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.own(key)?;
            self.store
                .save_fenced(&self.lease, checkpoint, &self.seen)
                .await
        })
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

    /// Fenced: only for the lease's key, while the lease is live and current.
    fn append_journal<'a>(
        &'a self,
        key: &'a str,
        records: &'a [(u64, Vec<u8>)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.own(key)?;
            self.store.append_journal_fenced(&self.lease, records).await
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

    /// Fenced, as [`append_journal`](Store::append_journal).
    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            self.own(key)?;
            self.store.compact_journal_fenced(&self.lease, before).await
        })
    }
}
