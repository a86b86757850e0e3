//! The input journal: exact replay and time travel for agents run by the server.
//!
//! A strategy's `cmd` is pure: everything nondeterministic enters an agent as data (a signal, an
//! async action's outcome, a model's answer, a timer firing, a tick and the clock reading it
//! saw). With [`Options::journal`](crate::server::Options::journal) the server appends each of
//! those inputs to the agent's journal in a [`Store`], with a sequence number and the
//! [`StateHash`] of the agent after the step. Journaling is off by default and costs nothing
//! then.
//!
//! Inside a journaled step the ids the strategy draws ([`Instruction::new`], [`Signal::new`])
//! are `{agent}/{step}/{index}` and the time it reads is the step's, so a replay rebuilds the
//! same states, and a cluster can de-duplicate external effects by id.
//!
//! [`Journal::load`] reads a journal back; [`Journal::replay`] runs the strategy again over
//! every input, offline (no network, no clock, no side effect: directives are returned, never
//! executed), checking the hash after every step; a difference is a [`Divergence`] naming the
//! first differing step. [`Journal::state_at`] is the agent right after any step it holds,
//! [`Journal::fork_at`] the same under a new id, to start in a server and give new inputs.
//!
//! Growth is bounded: every [`snapshot_every`](JournalOptions::snapshot_every) steps the whole
//! agent is written once, and the records before the oldest of the
//! [`keep_snapshots`](JournalOptions::keep_snapshots) latest snapshots are compacted away, so a
//! step costs the bytes of its input and a hash, however long the run.
//!
//! ```
//! # use agent_runtime::{ActionEntry, Agent, AgentSpec, Directive, Instruction, Signal, Snapshot, Status, Strategy};
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Debug, Clone, Default, Serialize, Deserialize)]
//! # struct Counter { total: i64 }
//! # struct Adds;
//! # impl Strategy<Counter> for Adds {
//! #     type State = ();
//! #     fn cmd(agent: &mut Agent<Counter>, i: Vec<Instruction>) -> Vec<Directive> {
//! #         for i in i { agent.state_mut().total += i.params["n"].as_i64().unwrap_or(0); }
//! #         Vec::new()
//! #     }
//! #     fn snapshot(_: &Agent<Counter>) -> Snapshot { Snapshot::new(Status::Idle) }
//! #     fn signal_routes() -> Vec<agent_runtime::RouteSpec> {
//! #         vec![agent_runtime::RouteSpec::new("add", agent_runtime::RouteTarget::Custom("add".into()), 50)]
//! #     }
//! # }
//! # impl AgentSpec for Counter {
//! #     const NAME: &'static str = "Counter";
//! #     type Strategy = Adds;
//! #     fn actions() -> &'static [ActionEntry<Self>] { &[] }
//! # }
//! use agent_runtime::journal::{Journal, JournalOptions};
//! use agent_runtime::server::{AgentServer, Options};
//! use agent_runtime::store::MemoryStore;
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let store = MemoryStore::new();
//! let options = Options::default().journal(JournalOptions::new(store.clone()));
//! let server = AgentServer::start(Counter::new().with_id("counter-1"), options).await?;
//! for n in [5, 7, -2] {
//!     server.call(Signal::new("add", serde_json::json!({ "n": n }))).await?;
//! }
//! server.stop().await; // stopping writes the last records
//!
//! let journal = Journal::load(&store, "counter-1").await?;
//! assert_eq!(journal.steps().count(), 4); // init and three signals
//! assert_eq!(journal.replay::<Counter>()?.state().total, 10);
//! assert_eq!(journal.state_at::<Counter>(2)?.state().total, 5); // after init and the first add
//! let fork = journal.fork_at::<Counter>(3, "counter-1-fork")?;
//! assert_eq!((fork.id(), fork.state().total), ("counter-1-fork", 12));
//! # Ok::<_, Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
//!
//! [`Instruction::new`]: crate::Instruction::new
//! [`Signal::new`]: crate::Signal::new

pub(crate) mod context;
mod diff;
pub(crate) mod hash;
mod record;
pub(crate) mod recorder;
mod replay;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::store::Store;

pub use hash::StateHash;
pub use record::{Completed, Input, Step};
pub use replay::{Divergence, Journal, ReplayError, ReplayedStep, Replayer};

/// Where and how the server journals agents (see the [module documentation](self)).
#[derive(Clone)]
pub struct JournalOptions {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) snapshot_every: u64,
    pub(crate) keep_snapshots: usize,
    pub(crate) sync_delay: Duration,
}

impl JournalOptions {
    /// Journals to `store` (a `RedbStore`, a `MemoryStore`), under each agent's id, with a
    /// snapshot every 1,000 steps and the 4 latest snapshots (and the steps after the oldest of
    /// them) kept.
    pub fn new(store: impl Store + 'static) -> Self {
        JournalOptions {
            store: Arc::new(store),
            snapshot_every: 1_000,
            keep_snapshots: 4,
            sync_delay: Self::DEFAULT_SYNC_DELAY,
        }
    }

    /// The default [`sync_delay`](JournalOptions::sync_delay): 100 ms.
    pub const DEFAULT_SYNC_DELAY: Duration = Duration::from_millis(100);

    /// How long a stored record may wait to be made durable (100 ms by default): what a crash
    /// may take from the journal.
    ///
    /// The journal's writer stores each batch of records (what the agent recorded since the
    /// writer's last append) as soon as it can, readable at once, but syncs the store (for a
    /// `RedbStore`, one fsync) only when it has caught up with the agent, or when its oldest
    /// unsynced record is `delay` old, instead of once per batch: a flood of signals then costs
    /// one fsync per `delay` rather than one per batch. A process killed (`kill -9`) or a
    /// machine losing power may therefore lose the journal's last records, stored less than
    /// `delay` before while the agent was busy, together with those the writer had not taken
    /// yet (the agent never waits for its journal); the journal then ends earlier, intact.
    /// Stopping the server makes everything durable, and the agent's checkpoints are written
    /// durably whatever this is. `Duration::ZERO` syncs every batch, as a store's plain
    /// appends do.
    #[must_use]
    pub fn sync_delay(mut self, delay: Duration) -> Self {
        self.sync_delay = delay;
        self
    }

    /// Writes the whole agent every `steps` steps (at least 1): fewer steps to replay before
    /// any state, more bytes.
    #[must_use]
    pub fn snapshot_every(mut self, steps: u64) -> Self {
        self.snapshot_every = steps.max(1);
        self
    }

    /// Keeps the `snapshots` latest snapshots (at least 1) and every step after the oldest of
    /// them; older records are compacted away. What time travel can reach back to.
    #[must_use]
    pub fn keep_snapshots(mut self, snapshots: usize) -> Self {
        self.keep_snapshots = snapshots.max(1);
        self
    }
}

impl fmt::Debug for JournalOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JournalOptions")
            .field("store", &self.store)
            .field("snapshot_every", &self.snapshot_every)
            .field("keep_snapshots", &self.keep_snapshots)
            .field("sync_delay", &self.sync_delay)
            .finish()
    }
}
