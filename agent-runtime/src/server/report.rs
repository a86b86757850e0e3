//! Why an agent stopped and what it left behind.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::AgentError;
use crate::snapshot::Snapshot;
use crate::store::PendingTimer;

/// Why an agent stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// `stop()` was called.
    Requested,
    /// The agent returned a `Stop` directive.
    Directive {
        /// The reason it gave.
        reason: String,
    },
    /// The error policy stopped it.
    Errors {
        /// How many errors it had.
        count: u64,
        /// The error that stopped it.
        last: AgentError,
    },
    /// It was hibernated: its checkpoint is in the store.
    Hibernated,
    /// Its parent stopped it (`StopChild`, or the parent stopping).
    StoppedByParent,
    /// Every handle to it was dropped.
    HandlesDropped,
    /// The agent's task ended without stopping: its tokio runtime shut down while the agent
    /// ran, or the server itself failed (never user code: that is caught).
    Crashed {
        /// What happened.
        message: String,
    },
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Requested => f.write_str("stop requested"),
            StopReason::Directive { reason } => write!(f, "the agent stopped itself: {reason}"),
            StopReason::Errors { count, last } => {
                write!(
                    f,
                    "the error policy stopped it after {count} error(s); last: {last}"
                )
            }
            StopReason::Hibernated => f.write_str("hibernated"),
            StopReason::StoppedByParent => f.write_str("stopped by its parent"),
            StopReason::HandlesDropped => f.write_str("every handle to it was dropped"),
            StopReason::Crashed { message } => f.write_str(message),
        }
    }
}

/// What an agent did and left behind when it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopReport {
    /// The agent type's name.
    pub agent: String,
    /// The agent's id.
    pub id: String,
    /// Why it stopped.
    pub reason: StopReason,
    /// Signals taken from the mailbox and processed (casts, calls, a child's emits).
    pub processed: u64,
    /// Signals still in the mailbox when it stopped: not processed; their callers got
    /// [`ServerError::Stopped`](super::ServerError::Stopped).
    pub unprocessed: u64,
    /// `Schedule` and cron timers that fired.
    pub timers_fired: u64,
    /// Ticks the server performed.
    pub ticks: u64,
    /// `Error` directives handled.
    pub errors: u64,
    /// Directives not executed because they came after a stop in the same batch.
    pub skipped_directives: u64,
    /// `Schedule` timers that had not fired.
    pub pending_timers: Vec<PendingTimer>,
    /// Cron jobs that were active.
    pub cron_jobs: Vec<String>,
    /// Async instructions cancelled while running (ids).
    pub in_flight: Vec<String>,
    /// The children it had, stopped with it.
    pub children: Vec<ChildReport>,
    /// Its last snapshot.
    pub snapshot: Option<Snapshot>,
}

impl StopReport {
    pub(crate) fn new(agent: &str, id: &str, reason: StopReason) -> Self {
        StopReport {
            agent: agent.to_string(),
            id: id.to_string(),
            reason,
            processed: 0,
            unprocessed: 0,
            timers_fired: 0,
            ticks: 0,
            errors: 0,
            skipped_directives: 0,
            pending_timers: Vec::new(),
            cron_jobs: Vec::new(),
            in_flight: Vec::new(),
            children: Vec::new(),
            snapshot: None,
        }
    }
}

/// A child's stop report, under its tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildReport {
    /// The child's tag.
    pub tag: String,
    /// Its report.
    pub report: StopReport,
}
