//! [`PostgresStore`]: checkpoints, leases and node heartbeats in PostgreSQL.

mod journal;
mod schema;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_runtime::store::{JournalRecords, Store, StoreError};
use futures::future::BoxFuture;
use tokio_postgres::{Client, Config, NoTls, Statement};

/// How a lost connection is retried: the delay starts at `first`, doubles up to `max`, and
/// after `budget` without a connection the operation fails with [`StoreError::Unavailable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconnect {
    /// The first delay.
    pub first: Duration,
    /// The longest delay.
    pub max: Duration,
    /// How long an operation keeps retrying.
    pub budget: Duration,
}

impl Default for Reconnect {
    /// 100 ms doubling up to 2 s, for 30 s.
    fn default() -> Self {
        Reconnect {
            first: Duration::from_millis(100),
            max: Duration::from_secs(2),
            budget: Duration::from_secs(30),
        }
    }
}

/// One open connection with its prepared statements.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) sql: Statements,
}

pub(crate) struct Statements {
    pub(crate) save: Statement,
    pub(crate) save_fenced: Statement,
    pub(crate) save_fenced_many: Statement,
    pub(crate) load: Statement,
    pub(crate) load_many: Statement,
    pub(crate) delete: Statement,
    pub(crate) keys: Statement,
    pub(crate) claim: Statement,
    pub(crate) claim_many: Statement,
    pub(crate) renew: Statement,
    pub(crate) release: Statement,
    pub(crate) holder: Statement,
    pub(crate) heartbeat: Statement,
    pub(crate) live_nodes: Statement,
    pub(crate) leave: Statement,
    pub(crate) idle: Statement,
    pub(crate) journal_append: Statement,
    pub(crate) journal_append_fenced: Statement,
    pub(crate) journal_read: Statement,
    pub(crate) journal_end: Statement,
    pub(crate) journal_compact: Statement,
    pub(crate) journal_compact_fenced: Statement,
}

impl Statements {
    async fn prepare(client: &Client) -> Result<Self, tokio_postgres::Error> {
        Ok(Statements {
            save: client.prepare(schema::SAVE).await?,
            save_fenced: client.prepare(schema::SAVE_FENCED).await?,
            save_fenced_many: client.prepare(schema::SAVE_FENCED_MANY).await?,
            load: client.prepare(schema::LOAD).await?,
            load_many: client.prepare(schema::LOAD_MANY).await?,
            delete: client.prepare(schema::DELETE).await?,
            keys: client.prepare(schema::KEYS).await?,
            claim: client.prepare(schema::CLAIM).await?,
            claim_many: client.prepare(schema::CLAIM_MANY).await?,
            renew: client.prepare(schema::RENEW).await?,
            release: client.prepare(schema::RELEASE).await?,
            holder: client.prepare(schema::HOLDER).await?,
            heartbeat: client.prepare(schema::HEARTBEAT).await?,
            live_nodes: client.prepare(schema::LIVE_NODES).await?,
            leave: client.prepare(schema::LEAVE).await?,
            idle: client.prepare(schema::IDLE).await?,
            journal_append: client.prepare(schema::JOURNAL_APPEND).await?,
            journal_append_fenced: client.prepare(schema::JOURNAL_APPEND_FENCED).await?,
            journal_read: client.prepare(schema::JOURNAL_READ).await?,
            journal_end: client.prepare(schema::JOURNAL_END).await?,
            journal_compact: client.prepare(schema::JOURNAL_COMPACT).await?,
            journal_compact_fenced: client.prepare(schema::JOURNAL_COMPACT_FENCED).await?,
        })
    }
}

/// Checkpoints in PostgreSQL, one row per key, with the leases that say which node owns an
/// agent (see [`Lease`](crate::Lease)).
///
/// The tables (`stratagem_checkpoints`, `stratagem_leases`, `stratagem_nodes`) are created at
/// [`connect`](PostgresStore::connect) when missing. Each save is one statement, so it is
/// atomic; the server computes an MD5 checksum of the bytes beside them and a load whose bytes
/// no longer match it is an error, never a silently different agent. A lost connection is
/// re-opened with backoff ([`Reconnect`]) and the operation retried; if the database stays
/// away longer than the budget the operation fails with [`StoreError::Unavailable`]. A plain
/// [`Store::save`] is refused ([`StoreError::Refused`]) for a key that was ever written under a
/// lease: clustered agents are written only through [`PostgresStore::save_fenced`].
///
/// Pipelining: one connection carries concurrent operations (tokio-postgres pipelines them),
/// so the store is cheap to clone and share.
///
/// ```no_run
/// # async fn demo() -> Result<(), agent_runtime::store::StoreError> {
/// use agent_cluster::PostgresStore;
/// use agent_runtime::store::Store;
/// let store = PostgresStore::connect("postgres://stratagem@localhost/stratagem").await?;
/// store.save("order-17", b"{}").await?;
/// assert_eq!(store.load("order-17").await?.as_deref(), Some(&b"{}"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    location: String,
    reconnect: Reconnect,
    /// Operations go round-robin over these: PostgreSQL runs one statement at a time per
    /// connection, and commits on several connections share their WAL flushes.
    slots: Vec<Slot>,
    next: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    current: Mutex<Option<Arc<Connection>>>,
    /// Held while (re)connecting, so a lost connection is re-opened once, not by every caller.
    connecting: tokio::sync::Mutex<()>,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/db`, or key-value form
    /// `host=/run/postgresql user=...`), creating the tables when missing.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, Reconnect::default()).await
    }

    /// [`connect`](PostgresStore::connect) with its own reconnection policy.
    pub async fn connect_with(url: &str, reconnect: Reconnect) -> Result<Self, StoreError> {
        Self::connect_pool(url, reconnect, 1).await
    }

    /// [`connect_with`](PostgresStore::connect_with) over `connections` connections (at least
    /// one), used in turn: what a cluster node uses, so the checkpoints of many agents are
    /// written side by side.
    pub async fn connect_pool(
        url: &str,
        reconnect: Reconnect,
        connections: usize,
    ) -> Result<Self, StoreError> {
        let config: Config = url.parse().map_err(|e| StoreError::Open {
            location: "<unparsable url>".to_string(),
            message: format!(
                "{e}; expected `postgres://user:password@host:port/database` or `host=... user=...`"
            ),
        })?;
        let location = location(&config);
        let store = PostgresStore {
            inner: Arc::new(Inner {
                config,
                location,
                reconnect,
                slots: (0..connections.max(1)).map(|_| Slot::default()).collect(),
                next: AtomicUsize::new(0),
            }),
        };
        store
            // Opening the first connection creates the tables.
            .with_retry("migrate", "", |_| async { Ok(()) })
            .await
            .map_err(|e| match e {
                StoreError::Io { message, .. } => StoreError::Open {
                    location: store.inner.location.clone(),
                    message: format!("cannot create the tables: {message}"),
                },
                other => other,
            })?;
        Ok(store)
    }

    /// Where the database is (host, port and database name; never the password).
    pub fn location(&self) -> &str {
        &self.inner.location
    }

    async fn connection(&self) -> Result<Arc<Connection>, tokio_postgres::Error> {
        let slots = &self.inner.slots;
        let slot = &slots[self.inner.next.fetch_add(1, Ordering::Relaxed) % slots.len()];
        let current = || {
            let current = slot.current.lock().unwrap_or_else(|p| p.into_inner());
            current.as_ref().filter(|c| !c.client.is_closed()).cloned()
        };
        if let Some(conn) = current() {
            return Ok(conn);
        }
        let _connecting = slot.connecting.lock().await;
        if let Some(conn) = current() {
            return Ok(conn);
        }
        let (client, connection) = self.inner.config.connect(NoTls).await?;
        let location = self.inner.location.clone();
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(location, error = %e, "postgres connection closed");
            }
        });
        // The tables may not exist yet on the very first connection: prepare after migrating.
        client.batch_execute(schema::MIGRATION).await?;
        let sql = Statements::prepare(&client).await?;
        let conn = Arc::new(Connection { client, sql });
        *slot.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(conn.clone());
        Ok(conn)
    }

    /// Runs `op` on the current connection; a lost connection is re-opened with backoff and
    /// `op` run again (every statement of this store is idempotent), within the budget.
    pub(crate) async fn with_retry<T, F, Fut>(
        &self,
        operation: &'static str,
        key: &str,
        op: F,
    ) -> Result<T, StoreError>
    where
        F: Fn(Arc<Connection>) -> Fut,
        Fut: Future<Output = Result<T, tokio_postgres::Error>>,
    {
        let Reconnect { first, max, budget } = self.inner.reconnect;
        let started = Instant::now();
        let mut delay = first;
        loop {
            let result = match self.connection().await {
                Ok(conn) => op(conn).await,
                Err(e) => Err(e),
            };
            match result {
                Ok(value) => return Ok(value),
                Err(e) if connection_lost(&e) => {
                    if started.elapsed() + delay > budget {
                        return Err(StoreError::Unavailable {
                            location: self.inner.location.clone(),
                            message: format!(
                                "{} (retried for {budget:?}); check that the server runs and the url is right",
                                describe(&e)
                            ),
                        });
                    }
                    tracing::warn!(location = %self.inner.location, error = %e, ?delay, "postgres connection lost; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(max);
                }
                Err(e) => return Err(StoreError::io(operation, key, describe(&e))),
            }
        }
    }

    /// The checkpoint under `key` and the ids of the signals it includes (see
    /// [`save_fenced`](PostgresStore::save_fenced)).
    pub async fn load_with_seen(
        &self,
        key: &str,
    ) -> Result<Option<(Vec<u8>, Vec<String>)>, StoreError> {
        let row = self
            .with_retry("load", key, |conn| async move {
                conn.client.query_opt(&conn.sql.load, &[&key]).await
            })
            .await?;
        let Some(row) = row else { return Ok(None) };
        intact(key, &row, 0).map(Some)
    }

    /// [`load_with_seen`](PostgresStore::load_with_seen) for many keys in one query: the keys
    /// that have a checkpoint, each with it (or the error of a checkpoint whose checksum no
    /// longer matches).
    pub async fn load_many_with_seen(
        &self,
        keys: &[String],
    ) -> Result<HashMap<String, Result<(Vec<u8>, Vec<String>), StoreError>>, StoreError> {
        let first = keys.first().map_or("", String::as_str);
        let rows = self
            .with_retry("load", first, |conn| async move {
                conn.client.query(&conn.sql.load_many, &[&keys]).await
            })
            .await?;
        Ok(rows
            .iter()
            .map(|row| {
                let key: String = row.get(0);
                let checkpoint = intact(&key, row, 1);
                (key, checkpoint)
            })
            .collect())
    }
}

/// The checkpoint and ids of a row whose columns from `at` are (bytes, checksum matches, ids).
fn intact(
    key: &str,
    row: &tokio_postgres::Row,
    at: usize,
) -> Result<(Vec<u8>, Vec<String>), StoreError> {
    let matches: bool = row.get(at + 1);
    if !matches {
        return Err(StoreError::io(
            "load",
            key,
            "the stored bytes do not match their checksum (the row was altered outside the store); restore it from a backup or delete it",
        ));
    }
    Ok((row.get(at), row.get(at + 2)))
}

/// The error with the server's own message (tokio-postgres shows only "db error").
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// Whether the error means the connection is gone (so retrying on a new one makes sense).
fn connection_lost(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(db) = e.as_db_error() {
        // 08: connection exceptions; 57P01-03: the server is shutting down or starting.
        let code = db.code().code();
        return code.starts_with("08") || code.starts_with("57P");
    }
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

fn location(config: &Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(""))
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.inner.location)
            .finish_non_exhaustive()
    }
}

impl Store for PostgresStore {
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let written = self
                .with_retry("save", key, |conn| async move {
                    conn.client
                        .execute(&conn.sql.save, &[&key, &checkpoint])
                        .await
                })
                .await?;
            if written == 0 {
                return Err(StoreError::Refused {
                    key: key.to_string(),
                    reason: "it belongs to a clustered agent and is written only under its lease (`PostgresStore::save_fenced`)".to_string(),
                });
            }
            Ok(())
        })
    }

    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(async move { Ok(self.load_with_seen(key).await?.map(|(bytes, _)| bytes)) })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let deleted = self
                .with_retry("delete", key, |conn| async move {
                    conn.client.execute(&conn.sql.delete, &[&key]).await
                })
                .await?;
            Ok(deleted > 0)
        })
    }

    fn keys(&self) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let rows = self
                .with_retry("list", "", |conn| async move {
                    conn.client.query(&conn.sql.keys, &[]).await
                })
                .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    /// Refused for a key ever leased (a clustered agent's journal is written under its lease:
    /// [`PostgresStore::append_journal_fenced`]).
    fn append_journal<'a>(
        &'a self,
        key: &'a str,
        records: &'a [(u64, Vec<u8>)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.append_journal_plain(key, records))
    }

    fn read_journal<'a>(
        &'a self,
        key: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<JournalRecords, StoreError>> {
        Box::pin(self.read_journal_rows(key, from))
    }

    fn journal_end<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(self.journal_last(key))
    }

    /// Refused for a key ever leased, as [`append_journal`](Store::append_journal).
    fn compact_journal<'a>(
        &'a self,
        key: &'a str,
        before: u64,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(self.compact_journal_plain(key, before))
    }
}
