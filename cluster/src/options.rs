//! How a cluster node runs.

use std::fmt;
use std::time::Duration;

use agent_runtime::server::Options;
use agent_runtime::signal::ContentMode;

use crate::placement::Placement;
use crate::postgres::Reconnect;

/// When a signal taken from JetStream is acknowledged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AckAfter {
    /// Once the step that processed it is applied and the agent's checkpoint (with the
    /// signal's id) is in PostgreSQL: a crash at any point redelivers it, and its id makes
    /// the redelivery count once. The default.
    #[default]
    Checkpoint,
    /// Once the step is applied; checkpoints follow every `sweep_interval`. Faster, but a
    /// node that dies loses the effects of the signals acknowledged since its last
    /// checkpoint.
    Applied,
}

/// The knobs of a cluster node. Every node of a cluster must agree on `shards`, `prefix` and
/// `stream`.
///
/// ```
/// use std::time::Duration;
/// use agent_cluster::ClusterOptions;
/// let options = ClusterOptions::new()
///     .node("eu-1")
///     .shards(64)
///     .lease_ttl(Duration::from_secs(5));
/// assert_eq!(options.get_node(), "eu-1");
/// ```
#[derive(Clone)]
pub struct ClusterOptions {
    pub(crate) node: String,
    pub(crate) shards: u32,
    pub(crate) lease_ttl: Duration,
    pub(crate) ack_wait: Duration,
    pub(crate) batch: usize,
    pub(crate) poll: Duration,
    pub(crate) prefix: String,
    pub(crate) stream: String,
    pub(crate) placement: Placement,
    pub(crate) ack_after: AckAfter,
    pub(crate) seen_window: usize,
    pub(crate) sweep_interval: Duration,
    pub(crate) server: Options,
    pub(crate) reconnect: Reconnect,
    pub(crate) postgres_connections: usize,
    pub(crate) content_mode: ContentMode,
    /// Journal every agent to PostgreSQL: (snapshot every, snapshots kept).
    pub(crate) journal: Option<(u64, usize)>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            node: format!("node-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]),
            shards: 32,
            lease_ttl: Duration::from_secs(10),
            ack_wait: Duration::from_secs(10),
            batch: 256,
            poll: Duration::from_millis(250),
            prefix: "stratagem".to_string(),
            stream: "STRATAGEM".to_string(),
            placement: Placement::default(),
            ack_after: AckAfter::default(),
            seen_window: 1024,
            sweep_interval: Duration::from_secs(1),
            server: Options::default(),
            reconnect: Reconnect::default(),
            postgres_connections: 4,
            content_mode: ContentMode::Structured,
            journal: None,
        }
    }
}

impl ClusterOptions {
    /// The defaults: a random node name, 32 shards, 10 s leases, 10 s ack wait, batches of
    /// 256, acknowledgement after the checkpoint, the last 1,024 signal ids remembered per
    /// agent, a checkpoint sweep every second, 4 PostgreSQL connections, signals in structured
    /// mode.
    pub fn new() -> Self {
        Self::default()
    }

    /// This node's name, unique among live nodes (leases are held under it).
    pub fn node(mut self, name: impl Into<String>) -> Self {
        self.node = name.into();
        self
    }

    /// Into how many shards agent ids are hashed (each has its own JetStream consumer).
    pub fn shards(mut self, shards: u32) -> Self {
        self.shards = shards;
        self
    }

    /// How long a lease lasts without renewal (renewed every third of it): how soon the agents
    /// of a dead node are taken over.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl;
        self
    }

    /// How long JetStream waits for an acknowledgement before redelivering.
    pub fn ack_wait(mut self, wait: Duration) -> Self {
        self.ack_wait = wait;
        self
    }

    /// At most how many signals a shard takes from JetStream at once (and checkpoints once).
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch;
        self
    }

    /// The subject prefix: signals to an agent of type `T` go to `<prefix>.T.<shard>`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The JetStream stream name prefix (the stream of type `T` is `<stream>_T`).
    pub fn stream(mut self, stream: impl Into<String>) -> Self {
        self.stream = stream.into();
        self
    }

    /// How shards are spread over the nodes.
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// When signals are acknowledged.
    pub fn ack_after(mut self, ack_after: AckAfter) -> Self {
        self.ack_after = ack_after;
        self
    }

    /// How many recent signal ids each agent remembers (and stores with its checkpoint) to
    /// recognise redeliveries; at least `batch`.
    pub fn seen_window(mut self, window: usize) -> Self {
        self.seen_window = window;
        self
    }

    /// How often every agent is checkpointed if it changed (timers, cron jobs and async
    /// actions change agents between signals).
    pub fn sweep_interval(mut self, interval: Duration) -> Self {
        self.sweep_interval = interval;
        self
    }

    /// The options every agent runs with.
    pub fn server(mut self, options: Options) -> Self {
        self.server = options;
        self
    }

    /// How a lost PostgreSQL connection is retried.
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// How many PostgreSQL connections the node writes checkpoints over (4 by default).
    pub fn postgres_connections(mut self, connections: usize) -> Self {
        self.postgres_connections = connections.max(1);
        self
    }

    /// How the signals this node and its client publish are put in NATS messages:
    /// [`ContentMode::Structured`] (CloudEvents JSON in the body, the default) or
    /// [`ContentMode::Binary`] (attributes as `ce-*` headers, the payload as the body, which
    /// consumers can route on without parsing it). Nodes read both, whatever this says, so
    /// nodes of one cluster may differ.
    pub fn content_mode(mut self, mode: ContentMode) -> Self {
        self.content_mode = mode;
        self
    }

    /// Journals every input of every agent (see `agent_runtime::journal`) to PostgreSQL, in
    /// `stratagem_journal`, with a snapshot every `snapshot_every` steps and the
    /// `keep_snapshots` latest kept (older records are compacted away). Appends and
    /// compactions are fenced by the node's lease on the agent, like checkpoints: a node that
    /// lost an agent cannot write its journal. Read it back anywhere, offline, with
    /// `Journal::load(&postgres_store, agent_id)`. Off by default.
    pub fn journal(mut self, snapshot_every: u64, keep_snapshots: usize) -> Self {
        self.journal = Some((snapshot_every.max(1), keep_snapshots.max(1)));
        self
    }

    /// This node's name.
    pub fn get_node(&self) -> &str {
        &self.node
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        let token = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if self.shards == 0 {
            return Err("`shards` must be at least 1".into());
        }
        if self.batch == 0 || self.seen_window < self.batch {
            return Err(format!(
                "`seen_window` ({}) must be at least `batch` ({}), which must be at least 1",
                self.seen_window, self.batch
            ));
        }
        if self.lease_ttl < Duration::from_millis(300) {
            return Err("`lease_ttl` must be at least 300ms".into());
        }
        if !token(&self.stream) || self.prefix.split('.').any(|p| !token(p)) {
            return Err(format!(
                "`prefix` (`{}`) must be dot-separated and `stream` (`{}`) one token of letters, digits, `_` and `-`",
                self.prefix, self.stream
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for ClusterOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterOptions")
            .field("node", &self.node)
            .field("shards", &self.shards)
            .field("lease_ttl", &self.lease_ttl)
            .field("ack_wait", &self.ack_wait)
            .field("batch", &self.batch)
            .field("prefix", &self.prefix)
            .field("stream", &self.stream)
            .field("placement", &self.placement)
            .field("ack_after", &self.ack_after)
            .field("seen_window", &self.seen_window)
            .field("sweep_interval", &self.sweep_interval)
            .field("content_mode", &self.content_mode)
            .field("journal", &self.journal)
            .finish_non_exhaustive()
    }
}
