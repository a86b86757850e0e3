//! [`Cluster`]: one node of a cluster: placement, leases, shard consumers, hand-back.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_runtime::journal::JournalOptions;
use agent_runtime::server::AgentServer;
use agent_runtime::store::StoreError;
use agent_runtime::{AgentSpec, Signal};
use async_nats::jetstream::{consumer, stream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::client::ClusterClient;
use crate::commit::GroupCommit;
use crate::error::ClusterError;
use crate::journal::{HeldLeases, NodeJournal};
use crate::lease::Lease;
use crate::options::ClusterOptions;
use crate::outbox::Outbox;
use crate::postgres::PostgresStore;
use crate::shard::{Shard, ShardMode};
use crate::transport::NatsTransport;
use crate::wire;

/// Shard leases are keyed under this prefix; agent leases by agent id.
pub(crate) const SHARD_LEASE_PREFIX: &str = "stratagem/shard/";

/// What a node's tasks share.
pub(crate) struct Node<S: AgentSpec> {
    pub(crate) options: ClusterOptions,
    /// The cluster's name (its stream's): nodes are live per cluster.
    pub(crate) cluster: String,
    pub(crate) stats: Stats,
    pub(crate) store: PostgresStore,
    pub(crate) client: ClusterClient,
    /// Where agents' checkpoints are written, many per statement.
    pub(crate) commit: GroupCommit,
    /// Addressed signals the agents here emitted, until JetStream stored them.
    pub(crate) outbox: Arc<Outbox>,
    stream: stream::Stream,
    /// Every lease this node believes it holds, by key: what renewals keep alive, and what
    /// shards and agents check before they act.
    leases: HeldLeases,
    /// The agents running here.
    pub(crate) agents: Mutex<HashMap<String, AgentServer<S>>>,
    shards: Mutex<BTreeSet<u32>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing here panics while holding a lock; poison is moot.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<S: AgentSpec + Default> Node<S> {
    pub(crate) fn name(&self) -> &str {
        &self.options.node
    }

    pub(crate) fn hold(&self, lease: &Lease) {
        lock(&self.leases).insert(lease.key.clone(), lease.token);
    }

    pub(crate) fn holds(&self, lease: &Lease) -> bool {
        lock(&self.leases).get(&lease.key) == Some(&lease.token)
    }

    pub(crate) fn forget(&self, lease: &Lease) {
        let mut leases = lock(&self.leases);
        if leases.get(&lease.key) == Some(&lease.token) {
            leases.remove(&lease.key);
        }
    }

    pub(crate) fn register(&self, id: &str, server: Option<AgentServer<S>>) {
        let mut agents = lock(&self.agents);
        match server {
            Some(server) => agents.insert(id.to_string(), server),
            None => agents.remove(id),
        };
    }

    fn shard_key(&self, shard: u32) -> String {
        format!("{SHARD_LEASE_PREFIX}{}/{shard}", self.cluster)
    }

    /// Heartbeat, lease renewal, and the placement decision: which shards to claim, which to
    /// give back, which were lost.
    async fn tick(
        self: &Arc<Self>,
        running: &mut BTreeMap<u32, RunningShard>,
    ) -> Result<(), ClusterError> {
        let ttl = self.options.lease_ttl;
        self.store
            .heartbeat(&self.cluster, self.name(), ttl)
            .await?;
        let held: Vec<(String, i64)> = lock(&self.leases)
            .iter()
            .map(|(key, token)| (key.clone(), *token))
            .collect();
        let keys: Vec<String> = held.iter().map(|(key, _)| key.clone()).collect();
        let renewed = self.store.renew(self.name(), &keys, ttl).await?;
        {
            let renewed: HashMap<&str, i64> =
                renewed.iter().map(|l| (l.key.as_str(), l.token)).collect();
            let mut leases = lock(&self.leases);
            // Only the leases asked for can be lost: one claimed while the renewal ran was not
            // in it, and is live.
            let mut lost = 0;
            for (key, token) in &held {
                if renewed.get(key.as_str()) != Some(token) && leases.get(key) == Some(token) {
                    leases.remove(key);
                    lost += 1;
                }
            }
            if lost > 0 {
                tracing::warn!(node = self.name(), lost, "leases expired or taken over");
            }
        }
        running.retain(|shard, s| {
            let held = self.holds(&s.lease);
            if !held {
                tracing::warn!(
                    node = self.name(),
                    shard,
                    "shard lease lost; abandoning its agents"
                );
                let _ = s.mode.send(ShardMode::Abandon);
                lock(&self.shards).remove(shard);
            }
            held
        });
        let live = self.store.live_nodes(&self.cluster).await?;
        for shard in 0..self.options.shards {
            let mine = self.options.placement.owner(shard, &live) == Some(self.name());
            if mine && !running.contains_key(&shard) {
                if let Some(lease) = self
                    .store
                    .claim(&self.shard_key(shard), self.name(), ttl)
                    .await?
                {
                    self.hold(&lease);
                    let started = self.start_shard(shard, lease.clone()).await;
                    match started {
                        Ok(s) => {
                            running.insert(shard, s);
                            lock(&self.shards).insert(shard);
                        }
                        Err(e) => {
                            tracing::warn!(node = self.name(), shard, error = %e, "cannot start a shard");
                            self.release(&lease).await;
                        }
                    }
                }
            } else if !mine && let Some(s) = running.remove(&shard) {
                tracing::info!(node = self.name(), shard, "handing a shard back");
                lock(&self.shards).remove(&shard);
                s.hand_back(self).await;
            }
        }
        Ok(())
    }

    async fn start_shard(
        self: &Arc<Self>,
        shard: u32,
        lease: Lease,
    ) -> Result<RunningShard, ClusterError> {
        let name = format!("{}-{shard}", S::NAME);
        let consumer = self
            .stream
            .get_or_create_consumer(
                &name,
                consumer::pull::Config {
                    durable_name: Some(name.clone()),
                    filter_subject: wire::shard_subject(&self.options.prefix, S::NAME, shard),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait: self.options.ack_wait,
                    max_ack_pending: 100_000,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| {
                ClusterError::nats(
                    self.client.url(),
                    format!("cannot create consumer `{name}`: {e}"),
                )
            })?;
        let (mode, watch) = watch::channel(ShardMode::Run);
        let task = tokio::spawn(Shard::new(self.clone(), shard, consumer, watch).run());
        Ok(RunningShard { lease, mode, task })
    }

    pub(crate) async fn release(&self, lease: &Lease) {
        self.forget(lease);
        if let Err(e) = self.store.release(lease).await {
            tracing::warn!(node = self.name(), key = lease.key, error = %e, "cannot release a lease; it will expire");
        }
    }
}

struct RunningShard {
    lease: Lease,
    mode: watch::Sender<ShardMode>,
    task: JoinHandle<()>,
}

impl RunningShard {
    async fn hand_back<S: AgentSpec + Default>(self, node: &Node<S>) {
        let _ = self.mode.send(ShardMode::HandBack);
        let _ = self.task.await;
        node.release(&self.lease).await;
    }
}

/// One node of a cluster serving agents of type `S`.
///
/// [`connect`](Cluster::connect) joins the cluster: the node heartbeats in PostgreSQL, claims
/// the shards that consistent hashing over the live nodes gives it, and consumes their
/// signals from JetStream. An agent is thawed from its last checkpoint (or created with its
/// default state) when its first signal arrives, under a lease of its own; each batch of
/// signals is applied, checkpointed with the ids of the signals it includes, and only then
/// acknowledged. Leases are renewed every third of `lease_ttl`; a node that stops renewing
/// (it died, paused or lost PostgreSQL) loses its shards and agents to the others once they
/// expire, and a checkpoint it still tries to write is refused.
///
/// [`shutdown`](Cluster::shutdown) hands everything back: each agent is checkpointed and its
/// lease released, so other nodes take over at once instead of waiting for expiry.
///
/// ```no_run
/// # use agent_runtime::*;
/// # async fn demo<S: AgentSpec + Default>() -> Result<(), agent_cluster::ClusterError> {
/// use agent_cluster::{Cluster, ClusterOptions};
/// let node = Cluster::<S>::connect_with(
///     "nats://127.0.0.1:4222",
///     "postgres://stratagem@127.0.0.1/stratagem",
///     ClusterOptions::new().node("eu-1"),
/// )
/// .await?;
/// node.send("order-17", &Signal::new("order.pay", serde_json::json!({"amount": 12.5}))).await?;
/// node.shutdown().await?;
/// # Ok(()) }
/// ```
pub struct Cluster<S: AgentSpec + Default> {
    node: Arc<Node<S>>,
    stop: watch::Sender<bool>,
    placement: JoinHandle<()>,
}

impl<S: AgentSpec + Default> Cluster<S> {
    /// Starts a node with the default options (a random node name).
    pub async fn connect(nats_url: &str, postgres_url: &str) -> Result<Self, ClusterError> {
        Self::connect_with(nats_url, postgres_url, ClusterOptions::default()).await
    }

    /// Starts a node; returns once it has claimed its first shards.
    pub async fn connect_with(
        nats_url: &str,
        postgres_url: &str,
        mut options: ClusterOptions,
    ) -> Result<Self, ClusterError> {
        options.validate().map_err(ClusterError::Options)?;
        let store = PostgresStore::connect_pool(
            postgres_url,
            options.reconnect,
            options.postgres_connections,
        )
        .await?;
        let client = ClusterClient::connect(nats_url, &options).await?;
        let stream = client.ensure_stream(S::NAME).await?;
        let outbox = Arc::new(Outbox::default());
        let commit = GroupCommit::start(store.clone(), options.postgres_connections);
        let leases = HeldLeases::default();
        if let Some((snapshot_every, keep_snapshots)) = options.journal {
            let journal = NodeJournal {
                store: store.clone(),
                owner: options.node.clone(),
                leases: leases.clone(),
            };
            options.server = options.server.journal(
                JournalOptions::new(journal)
                    .snapshot_every(snapshot_every)
                    .keep_snapshots(keep_snapshots),
            );
        }
        options.server = options.server.transport(Arc::new(
            NatsTransport::for_client(&client).with_outbox(outbox.clone()),
        ));
        let node = Arc::new(Node {
            cluster: client.stream_name(S::NAME),
            stats: Stats::default(),
            options,
            store,
            commit,
            client,
            outbox,
            stream,
            leases,
            agents: Mutex::new(HashMap::new()),
            shards: Mutex::new(BTreeSet::new()),
        });
        let mut running = BTreeMap::new();
        node.tick(&mut running).await?;
        let (stop, stopped) = watch::channel(false);
        let placement = tokio::spawn(placement_loop(node.clone(), running, stopped));
        Ok(Cluster {
            node,
            stop,
            placement,
        })
    }

    /// This node's name.
    pub fn name(&self) -> &str {
        self.node.name()
    }

    /// A client that sends signals to the cluster's agents.
    pub fn client(&self) -> &ClusterClient {
        &self.node.client
    }

    /// The PostgreSQL store checkpoints and leases live in.
    pub fn store(&self) -> &PostgresStore {
        &self.node.store
    }

    /// Sends `signal` to agent `agent_id`, wherever it runs.
    pub async fn send(&self, agent_id: &str, signal: &Signal) -> Result<(), ClusterError> {
        self.node.client.send::<S>(agent_id, signal).await
    }

    /// Answers the pending interrupt `interrupt_id` of agent `agent_id`, wherever it runs:
    /// see [`ClusterClient::resume`].
    pub async fn resume(
        &self,
        agent_id: &str,
        interrupt_id: &str,
        value: impl serde::Serialize,
    ) -> Result<(), ClusterError> {
        self.node
            .client
            .resume::<S>(agent_id, interrupt_id, value)
            .await
    }

    /// The agent `id`, if it runs on this node now.
    pub fn agent(&self, id: &str) -> Option<AgentServer<S>> {
        lock(&self.node.agents).get(id).cloned()
    }

    /// The ids of the agents running on this node, sorted.
    pub fn agents(&self) -> Vec<String> {
        let mut ids: Vec<String> = lock(&self.node.agents).keys().cloned().collect();
        ids.sort();
        ids
    }

    /// What this node did so far.
    pub fn stats(&self) -> ClusterStats {
        self.node.stats.snapshot()
    }

    /// The shards this node holds.
    pub fn shards(&self) -> Vec<u32> {
        lock(&self.node.shards).iter().copied().collect()
    }

    /// Leaves the cluster gracefully: every agent is checkpointed and stopped, every lease
    /// released, the node removed from the live nodes; the others take over at once.
    pub async fn shutdown(self) -> Result<(), ClusterError> {
        let _ = self.stop.send(true);
        let _ = self.placement.await;
        self.node
            .store
            .leave(&self.node.cluster, self.node.name())
            .await?;
        Ok(())
    }
}

/// Counters of a node, shared by its tasks.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) applied: AtomicU64,
    pub(crate) duplicates: AtomicU64,
    pub(crate) redelivered: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) thawed: AtomicU64,
}

impl Stats {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    fn snapshot(&self) -> ClusterStats {
        ClusterStats {
            applied: self.applied.load(Ordering::Relaxed),
            duplicates: self.duplicates.load(Ordering::Relaxed),
            redelivered: self.redelivered.load(Ordering::Relaxed),
            refused_checkpoints: self.refused.load(Ordering::Relaxed),
            thawed: self.thawed.load(Ordering::Relaxed),
        }
    }
}

/// What a node did since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterStats {
    /// Signals from JetStream applied to agents.
    pub applied: u64,
    /// Redelivered signals recognised by their id and not applied again.
    pub duplicates: u64,
    /// Signals JetStream delivered more than once (a node died or did not acknowledge in
    /// time, or an agent was busy or being handed over).
    pub redelivered: u64,
    /// Checkpoints PostgreSQL refused because another node had taken the agent over.
    pub refused_checkpoints: u64,
    /// Agents brought back from a checkpoint on this node.
    pub thawed: u64,
}

async fn placement_loop<S: AgentSpec + Default>(
    node: Arc<Node<S>>,
    mut running: BTreeMap<u32, RunningShard>,
    mut stopped: watch::Receiver<bool>,
) {
    let period = node.options.lease_ttl / 3;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = stopped.changed() => break,
        }
        if let Err(e) = node.tick(&mut running).await {
            let unavailable = matches!(e, ClusterError::Store(StoreError::Unavailable { .. }));
            tracing::warn!(node = node.name(), error = %e, unavailable, "cluster placement round failed");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for (shard, s) in std::mem::take(&mut running) {
        lock(&node.shards).remove(&shard);
        s.hand_back(&node).await;
    }
}

impl<S: AgentSpec + Default> fmt::Debug for Cluster<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.node.name())
            .field("agent", &S::NAME)
            .field("shards", &self.shards())
            .finish_non_exhaustive()
    }
}
