//! One shard on its node: take a batch of signals from JetStream, apply them to their agents,
//! checkpoint, acknowledge.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use agent_runtime::server::{AgentServer, ServerError};
use agent_runtime::store::{MemoryStore, Store, StoreError};
use agent_runtime::{Agent, AgentSpec, Signal};
use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::{AckKind, Message};
use futures::StreamExt;
use futures::future::{BoxFuture, join_all};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::commit::GroupCommit;
use crate::host::{Node, SHARD_LEASE_PREFIX, Stats};
use crate::lease::Lease;
use crate::options::AckAfter;
use crate::outbox::Outbox;
use crate::placement::shard_of;
use crate::postgres::PostgresStore;
use crate::seen::SeenIds;
use crate::wire;

/// What the placement loop wants of a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShardMode {
    Run,
    /// Checkpoint every agent, stop them, release their leases.
    HandBack,
    /// The shard's lease is gone: stop the agents without writing anything.
    Abandon,
}

/// An agent running here, with what its checkpoints carry.
struct Active<S: AgentSpec> {
    server: AgentServer<S>,
    lease: Lease,
    seen: SeenIds,
    /// The content of the last checkpoint written, so an unchanged agent is not written again.
    fingerprint: Arc<Mutex<Option<u64>>>,
}

pub(crate) struct Shard<S: AgentSpec + Default> {
    node: Arc<Node<S>>,
    index: u32,
    consumer: PullConsumer,
    mode: watch::Receiver<ShardMode>,
    agents: HashMap<String, Active<S>>,
    last_sweep: Instant,
    /// Batches applied whose checkpoints (then acknowledgements) are under way, oldest first:
    /// the next batch is fetched and applied meanwhile. An agent writes its checkpoints one
    /// after the other (it waits for each), so they reach PostgreSQL in order.
    committing: VecDeque<JoinHandle<Vec<(String, ServerError)>>>,
}

/// An agent of a batch, its store (when acknowledged after its checkpoint) and the signals to
/// acknowledge.
type Commit<S> = (String, AgentServer<S>, Option<AgentStore>, Vec<Message>);

/// At most this many batches of a shard are being checkpointed at once.
const MAX_COMMITTING: usize = 4;

/// Why an agent could not be activated here.
enum Inactive {
    /// Another node holds its lease (it is being handed over): try again later.
    Busy,
    Failed(String),
}

impl<S: AgentSpec + Default> Shard<S> {
    pub(crate) fn new(
        node: Arc<Node<S>>,
        index: u32,
        consumer: PullConsumer,
        mode: watch::Receiver<ShardMode>,
    ) -> Self {
        Shard {
            node,
            index,
            consumer,
            mode,
            agents: HashMap::new(),
            last_sweep: Instant::now(),
            committing: VecDeque::new(),
        }
    }

    pub(crate) async fn run(mut self) {
        self.resume().await;
        loop {
            let mode = *self.mode.borrow();
            match mode {
                ShardMode::Run => {}
                ShardMode::HandBack => return self.hand_back().await,
                ShardMode::Abandon => return self.abandon().await,
            }
            self.reap(MAX_COMMITTING - 1).await;
            self.drop_lost().await;
            match self.fetch().await {
                Ok(messages) if !messages.is_empty() => self.process(messages).await,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(node = self.node.name(), shard = self.index, error = %e, "cannot fetch signals");
                    tokio::time::sleep(self.node.options.poll).await;
                }
            }
            if self.last_sweep.elapsed() >= self.node.options.sweep_interval {
                // An agent whose lease outlived the shard's (it was claimed after the shard's
                // last renewal) becomes free a little later: look again on every sweep.
                self.resume().await;
                self.sweep().await;
                self.last_sweep = Instant::now();
            }
        }
    }

    /// Brings back the agents of this shard that ran before (on a node that died or handed
    /// the shard back) and are not running anywhere, so their timers and cron jobs go on
    /// firing without waiting for a signal.
    async fn resume(&mut self) {
        let idle = match self.node.store.idle_leases(SHARD_LEASE_PREFIX).await {
            Ok(idle) => idle,
            Err(e) => {
                tracing::warn!(node = self.node.name(), shard = self.index, error = %e, "cannot list the agents to resume");
                return;
            }
        };
        let (shards, index) = (self.node.options.shards, self.index);
        let mine: Vec<String> = idle
            .into_iter()
            .filter(|a| shard_of(a, shards) == index)
            .collect();
        for (agent, why) in self.activate(mine, true).await {
            if let Inactive::Failed(e) = why {
                tracing::warn!(
                    node = self.node.name(),
                    agent,
                    error = e,
                    "cannot resume an agent"
                );
            }
        }
    }

    /// What is waiting, up to `batch`, at once; when nothing is, waits (up to `poll`) for the
    /// next signal. A pull that waited for a full batch would hold the signals it has for up
    /// to `poll` whenever fewer than `batch` are waiting.
    async fn fetch(&self) -> Result<Vec<Message>, async_nats::Error> {
        let options = &self.node.options;
        let waiting = self
            .consumer
            .fetch()
            .max_messages(options.batch)
            .messages()
            .await?;
        let messages = collect(waiting).await?;
        if !messages.is_empty() {
            return Ok(messages);
        }
        let next = self
            .consumer
            .batch()
            .max_messages(1)
            .expires(options.poll)
            .messages()
            .await?;
        // The server ends the pull after `poll` (408) or with a message. Now and then (seen
        // with nats-server 2.9 under load) neither comes, and the client would wait for its
        // own timeout, `poll` + 5 s, while signals pile up: give up at twice `poll`.
        tokio::time::timeout(options.poll * 2, collect(next))
            .await
            .unwrap_or_else(|_| Ok(Vec::new()))
    }

    async fn process(&mut self, messages: Vec<Message>) {
        // Group by agent, keeping each agent's signals in order.
        let mut groups: Vec<(String, Vec<(Message, Signal)>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for message in messages {
            if message.info().is_ok_and(|info| info.delivered > 1) {
                Stats::add(&self.node.stats.redelivered, 1);
            }
            match wire::decode(message.headers.as_ref(), &message.payload) {
                Ok((agent, signal)) => {
                    let at = *index.entry(agent.clone()).or_insert_with(|| {
                        groups.push((agent, Vec::new()));
                        groups.len() - 1
                    });
                    groups[at].1.push((message, signal));
                }
                Err(e) => {
                    // Never deliverable: terminate it rather than redeliver it forever.
                    tracing::warn!(
                        node = self.node.name(),
                        shard = self.index,
                        error = e,
                        "dropping a malformed message"
                    );
                    let _ = message.ack_with(AckKind::Term).await;
                }
            }
        }
        let mut applied: Vec<(String, Vec<Message>)> = Vec::new();
        let mut inactive = self
            .activate(groups.iter().map(|(a, _)| a.clone()).collect(), false)
            .await;
        for (agent, items) in groups {
            if let Some(why) = inactive.remove(&agent) {
                if let Inactive::Failed(e) = why {
                    tracing::warn!(
                        node = self.node.name(),
                        agent,
                        error = e,
                        "cannot activate an agent"
                    );
                }
                nak_all(items.into_iter().map(|(m, _)| m), &self.node.options).await;
                continue;
            }
            let active = self.agents.get_mut(&agent).expect("activated above");
            let mut acks = Vec::new();
            let mut refused = false;
            for (message, signal) in items {
                if refused {
                    nak(&message, &self.node.options).await;
                } else if active.seen.contains(&signal.id) {
                    // A redelivery of a signal this agent already applied.
                    acks.push(message);
                    Stats::add(&self.node.stats.duplicates, 1);
                } else {
                    let id = signal.id.clone();
                    match active.server.cast(signal) {
                        Ok(()) => {
                            active.seen.insert(id);
                            acks.push(message);
                            Stats::add(&self.node.stats.applied, 1);
                        }
                        // A full mailbox does not ack: JetStream redelivers later.
                        Err(_) => {
                            refused = true;
                            nak(&message, &self.node.options).await;
                        }
                    }
                }
            }
            applied.push((agent, acks));
        }
        // Checkpoint (or wait until applied), then acknowledge, while the next batch is fetched
        // and applied.
        let ack_after = self.node.options.ack_after;
        let options = self.node.options.clone();
        let mut work: Vec<Commit<S>> = Vec::with_capacity(applied.len());
        for (agent, acks) in applied {
            let Some(active) = self.agents.get(&agent) else {
                nak_all(acks, &options).await;
                continue;
            };
            let store = (ack_after == AckAfter::Checkpoint).then(|| self.store_of(active));
            work.push((agent, active.server.clone(), store, acks));
        }
        self.committing.push_back(tokio::spawn(async move {
            let done = join_all(
                work.into_iter()
                    .map(|(agent, server, store, acks)| async move {
                        let result = match &store {
                            Some(store) => server.checkpoint(store).await,
                            // A snapshot is answered after the queued signals: they are applied.
                            None => server.snapshot().await.map(drop),
                        };
                        (agent, result, acks)
                    }),
            )
            .await;
            let mut failed = Vec::new();
            for (agent, result, acks) in done {
                match result {
                    Ok(()) => ack_all(acks).await,
                    Err(e) => {
                        nak_all(acks, &options).await;
                        failed.push((agent, e));
                    }
                }
            }
            failed
        }));
    }

    /// Waits until at most `left` batches are being checkpointed, and handles the failures of
    /// those that finished.
    async fn reap(&mut self, left: usize) {
        while let Some(oldest) = self.committing.front() {
            if self.committing.len() <= left && !oldest.is_finished() {
                return;
            }
            let Some(task) = self.committing.pop_front() else {
                return;
            };
            let failed = task.await.unwrap_or_default();
            for (agent, e) in failed {
                self.on_checkpoint_error(&agent, e).await;
            }
        }
    }

    /// Makes sure `agents` (distinct) run here: claims their leases, thaws them from their
    /// checkpoints (or starts them fresh), with the ids of the signals each checkpoint includes;
    /// with `only_checkpointed`, an agent without a checkpoint is left alone. Claims and loads
    /// go to PostgreSQL in one statement each, whatever the number of agents. Returns the agents
    /// that could not be activated, and why.
    async fn activate(
        &mut self,
        agents: Vec<String>,
        only_checkpointed: bool,
    ) -> HashMap<String, Inactive> {
        let mut inactive = HashMap::new();
        let wanted: Vec<String> = agents
            .into_iter()
            .filter(|a| !self.agents.contains_key(a))
            .collect();
        if wanted.is_empty() {
            return inactive;
        }
        let node = self.node.clone();
        let failed = |e: &dyn std::fmt::Display| Inactive::Failed(e.to_string());
        let leases = match node
            .store
            .claim_many(&wanted, node.name(), node.options.lease_ttl)
            .await
        {
            Ok(leases) => leases,
            Err(e) => return wanted.into_iter().map(|a| (a, failed(&e))).collect(),
        };
        let mut claimed = Vec::new();
        for (agent, lease) in wanted.into_iter().zip(leases) {
            match lease {
                Some(lease) => {
                    node.hold(&lease);
                    claimed.push((agent, lease));
                }
                None => {
                    inactive.insert(agent, Inactive::Busy);
                }
            }
        }
        if claimed.is_empty() {
            return inactive;
        }
        let keys: Vec<String> = claimed.iter().map(|(a, _)| a.clone()).collect();
        let mut checkpoints = match node.store.load_many_with_seen(&keys).await {
            Ok(found) => found,
            Err(e) => {
                for (agent, lease) in claimed {
                    node.release(&lease).await;
                    inactive.insert(agent, failed(&e));
                }
                return inactive;
            }
        };
        let started = join_all(claimed.into_iter().map(|(agent, lease)| {
            let checkpoint = checkpoints.remove(&agent);
            let node = &node;
            async move {
                let options = node.options.server.clone();
                let started = match checkpoint {
                    Some(Ok((bytes, seen))) => {
                        async {
                            let one = MemoryStore::new();
                            one.save(&agent, &bytes).await?;
                            let server = AgentServer::<S>::thaw(&one, &agent, options).await?;
                            Stats::add(&node.stats.thawed, 1);
                            Ok::<_, ServerError>(Some((server, seen)))
                        }
                        .await
                    }
                    Some(Err(e)) => Err(ServerError::Store(e)),
                    None if only_checkpointed => Ok(None),
                    None => AgentServer::start(Agent::new(S::default()).with_id(&agent), options)
                        .await
                        .map(|server| Some((server, Vec::new()))),
                };
                (agent, lease, started)
            }
        }))
        .await;
        for (agent, lease, started) in started {
            match started {
                Ok(None) => node.release(&lease).await,
                Ok(Some((server, seen))) => {
                    node.register(&agent, Some(server.clone()));
                    self.agents.insert(
                        agent,
                        Active {
                            server,
                            lease,
                            seen: SeenIds::new(seen, node.options.seen_window),
                            fingerprint: Arc::default(),
                        },
                    );
                }
                Err(e) => {
                    node.release(&lease).await;
                    inactive.insert(agent, failed(&e));
                }
            }
        }
        inactive
    }

    /// The store `active`'s checkpoints go through.
    fn store_of(&self, active: &Active<S>) -> AgentStore {
        AgentStore {
            outbox: self.node.outbox.clone(),
            commit: self.node.commit.clone(),
            store: self.node.store.clone(),
            lease: active.lease.clone(),
            seen: active.seen.to_shared(),
            fingerprint: active.fingerprint.clone(),
            last_seen: active.seen.last().map(str::to_string),
        }
    }

    /// Writes `agent`'s checkpoint under its lease (skipped when nothing changed since the
    /// last one).
    async fn checkpoint(&self, agent: &str) -> Result<(), ServerError> {
        let Some(active) = self.agents.get(agent) else {
            return Err(ServerError::Store(StoreError::Refused {
                key: agent.to_string(),
                reason: "the agent no longer runs on this node".to_string(),
            }));
        };
        active.server.checkpoint(&self.store_of(active)).await
    }

    async fn on_checkpoint_error(&mut self, agent: &str, error: ServerError) {
        if self.node.outbox.take_failed(agent) {
            // Its redelivered signals must run again from the last checkpoint, emitting again.
            tracing::warn!(node = self.node.name(), agent, error = %error, "an emitted signal was not stored; restarting the agent from its checkpoint");
            self.drop_agent(agent, true).await;
        } else if let ServerError::Store(StoreError::Refused { .. }) = error {
            Stats::add(&self.node.stats.refused, 1);
            tracing::warn!(
                node = self.node.name(),
                agent,
                "checkpoint refused: the agent was taken over; dropping this copy"
            );
            self.drop_agent(agent, false).await;
        } else {
            tracing::warn!(node = self.node.name(), agent, error = %error, "cannot checkpoint; its signals will be redelivered");
        }
    }

    /// Stops the agents whose lease this node no longer holds (without writing anything).
    async fn drop_lost(&mut self) {
        let lost: Vec<String> = self
            .agents
            .iter()
            .filter(|(_, a)| !self.node.holds(&a.lease))
            .map(|(id, _)| id.clone())
            .collect();
        for agent in lost {
            tracing::warn!(
                node = self.node.name(),
                agent,
                "agent lease lost; dropping this copy"
            );
            self.drop_agent(&agent, false).await;
        }
    }

    async fn drop_agent(&mut self, agent: &str, release: bool) {
        if let Some(active) = self.agents.remove(agent) {
            self.node.register(agent, None);
            self.node.outbox.forget(agent);
            active.server.stop().await;
            if release {
                self.node.release(&active.lease).await;
            } else {
                self.node.forget(&active.lease);
            }
        }
    }

    /// Checkpoints every agent that changed: timers, cron jobs and async actions change
    /// agents between signals.
    async fn sweep(&mut self) {
        let agents: Vec<String> = self.agents.keys().cloned().collect();
        let results = join_all(agents.iter().map(|a| self.checkpoint(a))).await;
        for (agent, result) in agents.iter().zip(results) {
            if let Err(e) = result {
                self.on_checkpoint_error(agent, e).await;
            }
        }
    }

    async fn hand_back(mut self) {
        self.reap(0).await;
        self.sweep().await;
        let agents: Vec<String> = self.agents.keys().cloned().collect();
        for agent in agents {
            self.drop_agent(&agent, true).await;
        }
    }

    async fn abandon(mut self) {
        self.reap(0).await;
        let agents: Vec<String> = self.agents.keys().cloned().collect();
        for agent in agents {
            self.drop_agent(&agent, true).await;
        }
    }
}

async fn collect(
    mut batch: async_nats::jetstream::consumer::pull::Batch,
) -> Result<Vec<Message>, async_nats::Error> {
    let mut messages = Vec::new();
    while let Some(message) = batch.next().await {
        messages.push(message?);
    }
    Ok(messages)
}

async fn ack_all(messages: Vec<Message>) {
    for message in messages {
        if let Err(e) = message.ack().await {
            // Not acknowledged: it comes back, and its id makes it count once.
            tracing::debug!(error = %e, "cannot acknowledge a signal");
        }
    }
}

async fn nak(message: &Message, options: &crate::ClusterOptions) {
    let _ = message.ack_with(AckKind::Nak(Some(options.poll * 2))).await;
}

async fn nak_all(messages: impl IntoIterator<Item = Message>, options: &crate::ClusterOptions) {
    for message in messages {
        nak(&message, options).await;
    }
}

/// The store an agent's checkpoint goes through: it first waits until the signals the agent
/// addressed to others are stored in JetStream, then writes fenced, skipping a write whose
/// content (everything but the time it was taken, plus the newest signal id) equals the last.
#[derive(Debug)]
struct AgentStore {
    outbox: Arc<Outbox>,
    commit: GroupCommit,
    store: PostgresStore,
    lease: Lease,
    seen: Arc<[String]>,
    fingerprint: Arc<Mutex<Option<u64>>>,
    last_seen: Option<String>,
}

impl Store for AgentStore {
    fn save<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a [u8],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.outbox.flush(key).await.map_err(|e| {
                StoreError::io(
                    "save",
                    key,
                    format!("a signal it emitted was not delivered: {e}"),
                )
            })?;
            let fingerprint = fingerprint(checkpoint, self.last_seen.as_deref());
            let last = *self.fingerprint.lock().unwrap_or_else(|p| p.into_inner());
            if last == Some(fingerprint) {
                return Ok(());
            }
            if key != self.lease.key {
                return Err(StoreError::io(
                    "save",
                    key,
                    "not the key of this agent's lease",
                ));
            }
            self.commit
                .save(&self.lease, checkpoint, self.seen.clone())
                .await?;
            *self.fingerprint.lock().unwrap_or_else(|p| p.into_inner()) = Some(fingerprint);
            Ok(())
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
}

/// A hash of a checkpoint without the time it was taken, and of the newest signal id: `saved_at`
/// is the body's last field, followed only by the checksum (which covers it), so everything
/// before it is what changes when the agent does.
fn fingerprint(checkpoint: &[u8], last_seen: Option<&str>) -> u64 {
    const SAVED_AT: &[u8] = b"\"saved_at\":";
    let content = checkpoint
        .windows(SAVED_AT.len())
        .rposition(|w| w == SAVED_AT)
        .map_or(checkpoint, |at| &checkpoint[..at]);
    let mut hasher = DefaultHasher::new();
    content.hash(&mut hasher);
    last_seen.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::fingerprint;
    use agent_runtime::store::Checkpoint;
    use serde_json::json;

    fn encoded(count: u64, saved_at: &str) -> Vec<u8> {
        Checkpoint {
            agent: json!({"agent": "Tally", "id": "t", "state": {"count": count, "saved_at": 1}}),
            timers: Vec::new(),
            cron: Vec::new(),
            in_flight: Vec::new(),
            llm_calls: Vec::new(),
            saved_at: saved_at.parse().unwrap(),
        }
        .encode()
        .unwrap()
    }

    #[test]
    fn ignores_when_a_checkpoint_was_taken_and_nothing_else() {
        let (early, late) = ("2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z");
        let same = fingerprint(&encoded(1, early), Some("s1"));
        assert_eq!(fingerprint(&encoded(1, late), Some("s1")), same);
        assert_ne!(fingerprint(&encoded(2, late), Some("s1")), same);
        assert_ne!(fingerprint(&encoded(1, late), Some("s2")), same);
    }
}
