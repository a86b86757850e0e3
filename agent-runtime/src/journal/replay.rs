//! Replaying a journal offline: the agent's strategy runs again on the journaled inputs, with
//! no network, no clock and no side effect (directives are returned, never executed), and the
//! state hash after every step is checked against the recorded one.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;

use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::instruction::Instruction;
use crate::route::Router;
use crate::store::{Store, StoreError};

use super::context::{StepScope, StepTime};
use super::diff::differences;
use super::hash::StateHash;
use super::record::{Input, Record, SnapshotKind, Step};

/// An agent's journal, read from a store: its steps and the snapshots to start a replay from.
///
/// See the [module documentation](super) for an example.
#[derive(Debug, Clone)]
pub struct Journal {
    key: String,
    records: Vec<Record>,
    bytes: u64,
}

impl Journal {
    /// Reads the journal of the agent journaled under `key` (its id).
    pub async fn load<T: Store + ?Sized>(store: &T, key: &str) -> Result<Journal, ReplayError> {
        let stored = store.read_journal(key, 0).await?;
        let mut records = Vec::with_capacity(stored.len());
        let mut bytes = 0u64;
        for (position, data) in stored {
            bytes += data.len() as u64;
            let record: Record =
                super::record::decode(&data).map_err(|message| ReplayError::Corrupt {
                    key: key.to_string(),
                    position,
                    message,
                })?;
            records.push(record);
        }
        Ok(Journal {
            key: key.to_string(),
            records,
            bytes,
        })
    }

    /// The key it was read under.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Its steps, in order.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.records.iter().filter_map(|r| match r {
            Record::Step(step) => Some(step),
            Record::Snapshot { .. } => None,
        })
    }

    /// The step numbered `seq`, if the journal holds it.
    pub fn step(&self, seq: u64) -> Option<&Step> {
        self.steps().find(|s| s.seq == seq)
    }

    /// The bytes it takes in the store (steps and snapshots).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// A replay from the first snapshot the journal holds, step by step.
    pub fn replayer<S: AgentSpec>(&self) -> Result<Replayer<'_, S>, ReplayError> {
        Replayer::new(
            self,
            S::router().map_err(|e| ReplayError::Agent {
                message: format!("the agent's routes are invalid: {e}"),
            })?,
        )
    }

    /// Replays every step, checking each state hash; the agent as it was after the last one.
    pub fn replay<S: AgentSpec>(&self) -> Result<Agent<S>, ReplayError> {
        let mut replayer = self.replayer::<S>()?;
        while replayer.next_step().transpose()?.is_some() {}
        Ok(replayer.into_agent())
    }

    /// The agent as it was right after step `seq` (time travel), replayed from the nearest
    /// snapshot before it, hashes checked.
    pub fn state_at<S: AgentSpec>(&self, seq: u64) -> Result<Agent<S>, ReplayError> {
        let start = self
            .records
            .iter()
            .rposition(|r| matches!(r, Record::Snapshot { seq: at, .. } if *at <= seq))
            .ok_or_else(|| self.not_held(seq))?;
        let mut replayer = self.replayer::<S>()?;
        replayer.seek(start)?;
        if replayer.seq == seq {
            return Ok(replayer.into_agent());
        }
        while let Some(step) = replayer.next_step().transpose()? {
            if step.seq == seq {
                return Ok(replayer.into_agent());
            }
            if step.seq > seq {
                break;
            }
        }
        Err(self.not_held(seq))
    }

    /// A new agent, with id `id`, in the state this one had right after step `seq`: start it in
    /// a server and it takes new inputs from there, while the original run stays as it was.
    pub fn fork_at<S: AgentSpec>(
        &self,
        seq: u64,
        id: impl Into<String>,
    ) -> Result<Agent<S>, ReplayError> {
        Ok(self.state_at::<S>(seq)?.with_id(id))
    }

    fn not_held(&self, seq: u64) -> ReplayError {
        let mut steps = self.steps();
        let first = steps.next().map(|s| s.seq);
        let last = steps.last().map(|s| s.seq).or(first);
        ReplayError::NotHeld {
            key: self.key.clone(),
            seq,
            held: first.zip(last),
        }
    }
}

/// A replay in progress: [`next_step`](Replayer::next_step) replays one step and checks it.
pub struct Replayer<'j, S: AgentSpec> {
    journal: &'j Journal,
    router: &'j Router,
    next: usize,
    seq: u64,
    agent: Option<Agent<S>>,
}

impl<S: AgentSpec> fmt::Debug for Replayer<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replayer")
            .field("journal", &self.journal.key)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

/// One step a [`Replayer`] replayed.
#[derive(Debug)]
#[non_exhaustive]
pub struct ReplayedStep<'j> {
    /// Its sequence number.
    pub seq: u64,
    /// The recorded step (input, time, hash).
    pub step: &'j Step,
    /// The directives the strategy returned: the effects the live run executed, here only
    /// reported.
    pub directives: Vec<Directive>,
}

impl<'j, S: AgentSpec> Replayer<'j, S> {
    fn new(journal: &'j Journal, router: &'j Router) -> Result<Self, ReplayError> {
        let start = journal
            .records
            .iter()
            .position(|r| matches!(r, Record::Snapshot { .. }))
            .ok_or_else(|| ReplayError::NoSnapshot {
                key: journal.key.clone(),
            })?;
        let mut replayer = Replayer {
            journal,
            router,
            next: 0,
            seq: 0,
            agent: None,
        };
        replayer.seek(start)?;
        Ok(replayer)
    }

    /// Replays with this router instead of the agent type's own (the server's, when its
    /// options added plugin routes).
    #[must_use]
    pub fn with_router(mut self, router: &'j Router) -> Self {
        self.router = router;
        self
    }

    /// Starts over from the snapshot at record `index`.
    fn seek(&mut self, index: usize) -> Result<(), ReplayError> {
        let Record::Snapshot { seq, agent, .. } = &self.journal.records[index] else {
            unreachable!("seek is given a snapshot's index");
        };
        self.agent = Some(self.thaw(*seq, agent)?);
        self.seq = *seq;
        self.next = index + 1;
        Ok(())
    }

    fn thaw(&self, seq: u64, agent: &Value) -> Result<Agent<S>, ReplayError> {
        // A snapshot of another build's definition is migrated as a checkpoint would be, or
        // refused: never replayed as a state it was not taken in.
        let checked = |error| ReplayError::Definition {
            key: self.journal.key.clone(),
            error,
        };
        let migrated = match crate::store::migration_for::<S>(agent).map_err(checked)? {
            Some((definition, migration)) => {
                let mut migrated = agent.clone();
                crate::store::apply_migration::<S>(definition, migration, &mut migrated, &mut [])
                    .map_err(checked)?;
                Some(migrated)
            }
            None => None,
        };
        let agent = migrated.as_ref().unwrap_or(agent);
        <Agent<S> as serde::Deserialize>::deserialize(agent).map_err(|e| ReplayError::Agent {
            message: format!(
                "the snapshot after step {seq} of journal `{}` does not restore: {e}",
                self.journal.key
            ),
        })
    }

    /// The agent as replayed so far.
    pub fn agent(&self) -> &Agent<S> {
        self.agent
            .as_ref()
            .expect("a replayer always holds an agent")
    }

    /// The agent as replayed so far, by value.
    pub fn into_agent(self) -> Agent<S> {
        self.agent.expect("a replayer always holds an agent")
    }

    /// The number of the last step replayed (or of the snapshot it started from).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Replays the next step and checks the state hash after it; `None` at the end. A run that
    /// began from a checkpoint (a thaw) starts over from the snapshot it journaled.
    pub fn next_step(&mut self) -> Option<Result<ReplayedStep<'j>, ReplayError>> {
        loop {
            let index = self.next;
            let record = self.journal.records.get(index)?;
            self.next += 1;
            match record {
                Record::Snapshot {
                    kind: SnapshotKind::Start,
                    ..
                } => {
                    if let Err(e) = self.seek(index) {
                        return Some(Err(e));
                    }
                }
                Record::Snapshot {
                    kind: SnapshotKind::Periodic,
                    seq,
                    hash,
                    agent,
                } => {
                    let found = self.agent().state_hash();
                    if found != *hash {
                        return Some(Err(self.diverged(*seq, None, *hash, Some(agent))));
                    }
                }
                Record::Step(step) => return Some(self.apply(step)),
            }
        }
    }

    fn apply(&mut self, step: &'j Step) -> Result<ReplayedStep<'j>, ReplayError> {
        let id: Arc<str> = self.agent().id().into();
        let router = self.router;
        let agent = self
            .agent
            .as_mut()
            .expect("a replayer always holds an agent");
        // As the server does: a panicking strategy leaves the agent as it was.
        let backup = agent.clone();
        let scope = StepScope::enter(&id, step.seq, StepTime::of(&step.at));
        let run = catch_unwind(AssertUnwindSafe(|| match &step.input {
            Input::Init => agent.init(),
            Input::Signal { signal, .. } => agent.handle_signal_with(router, signal),
            Input::Tick => agent.tick().into_vec(),
            Input::Completion {
                instruction,
                outcome,
            } => agent.cmd(vec![Instruction::completed(
                instruction,
                outcome.to_outcome(),
            )]),
        }));
        drop(scope);
        let directives = run.unwrap_or_else(|_| {
            *agent = backup;
            Vec::new()
        });
        self.seq = step.seq;
        let found = self.agent().state_hash();
        if found != step.hash {
            // The recorded state itself is at hand when a snapshot follows the step.
            let recorded = self.journal.records.get(self.next).and_then(|r| match r {
                Record::Snapshot { seq, agent, .. } if *seq == step.seq => Some(agent),
                _ => None,
            });
            return Err(self.diverged(step.seq, Some(&step.input), step.hash, recorded));
        }
        Ok(ReplayedStep {
            seq: step.seq,
            step,
            directives,
        })
    }

    fn diverged(
        &self,
        seq: u64,
        input: Option<&Input>,
        expected: StateHash,
        recorded: Option<&Value>,
    ) -> ReplayError {
        let replayed = serde_json::to_value(self.agent()).unwrap_or(Value::Null);
        let differences = recorded.map(|r| differences(r, &replayed));
        ReplayError::Diverged(Box::new(Divergence {
            key: self.journal.key.clone(),
            seq,
            input: input.map(Input::describe),
            expected,
            found: self.agent().state_hash(),
            replayed,
            differences,
        }))
    }
}

/// A replay whose state differs from the recorded one: the code changed since the run, or
/// something the strategy read did not come in as an input.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Divergence {
    /// The journal's key.
    pub key: String,
    /// The first step whose state differs.
    pub seq: u64,
    /// What entered the agent at that step (`None` when a snapshot check found it).
    pub input: Option<String>,
    /// The hash the run recorded.
    pub expected: StateHash,
    /// The hash the replay computed.
    pub found: StateHash,
    /// The agent as replayed, after that step.
    pub replayed: Value,
    /// The differing paths between the recorded and the replayed agent, when the journal holds
    /// the recorded state at that step (a snapshot was taken right after it).
    pub differences: Option<Vec<String>>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the replay of journal `{}` diverged at step {}",
            self.key, self.seq
        )?;
        if let Some(input) = &self.input {
            write!(f, " ({input})")?;
        }
        write!(
            f,
            ": the run recorded state hash {}, the replay has {}",
            self.expected, self.found
        )?;
        match &self.differences {
            Some(lines) if !lines.is_empty() => write!(f, "; {}", lines.join("; ")),
            _ => write!(
                f,
                "; the journal holds no copy of the state at that step, compare `replayed` with what you expected"
            ),
        }
    }
}

/// A journal that could not be read or replayed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The store failed (or keeps no journal).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A record does not decode.
    #[error("journal `{key}` has a corrupt record at position {position}: {message}")]
    Corrupt {
        /// The journal's key.
        key: String,
        /// The record's position in the store.
        position: u64,
        /// What is wrong with it.
        message: String,
    },
    /// The journal has no snapshot to start from (empty, or not journaled under that key).
    #[error(
        "journal `{key}` holds no snapshot to replay from; is the agent journaled under that id (`Options::journal`)?"
    )]
    NoSnapshot {
        /// The journal's key.
        key: String,
    },
    /// A step outside what the journal holds (compacted away, or not taken yet).
    #[error("journal `{key}` does not hold step {seq}{}", match held {
        Some((first, last)) => format!(" (it holds steps {first} to {last}; older ones were compacted)"),
        None => " (it holds no steps)".to_string(),
    })]
    NotHeld {
        /// The journal's key.
        key: String,
        /// The step asked for.
        seq: u64,
        /// The first and last steps it holds.
        held: Option<(u64, u64)>,
    },
    /// A snapshot was taken from another definition of the agent that this build cannot read
    /// ([`CheckpointError::UnknownDefinition`](crate::store::CheckpointError::UnknownDefinition)
    /// naming both fingerprints), or its migration failed.
    #[error("journal `{key}`: {error}")]
    Definition {
        /// The journal's key.
        key: String,
        /// Why the snapshot was refused.
        error: crate::store::CheckpointError,
    },
    /// A snapshot is not an agent of the type asked for.
    #[error("{message}")]
    Agent {
        /// What failed.
        message: String,
    },
    /// The replayed state differs from the recorded one.
    #[error("{0}")]
    Diverged(Box<Divergence>),
}
