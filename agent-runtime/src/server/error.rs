//! What the server's callers can be told.

use std::time::Duration;

use crate::route::RouteError;
use crate::signal::SignalError;
use crate::snapshot::Snapshot;
use crate::store::{CheckpointError, StoreError};

use super::report::StopReason;

/// An error a server handle returns.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// `resume(id, value)` was refused: an unknown or already answered interrupt, or a value
    /// that is not the interrupt's resume type. The agent is unchanged.
    #[error("agent `{agent}` (`{id}`) refused the answer: {error}")]
    Interrupt {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
        /// Why (boxed: rare, and every other server error stays small).
        error: Box<crate::interrupt::InterruptError>,
    },
    /// The options cannot run an agent.
    #[error("invalid server options: {message}")]
    InvalidOptions {
        /// What is wrong, with a hint.
        message: String,
    },
    /// The agent's routes (or the plugin routes) are invalid.
    #[error(
        "cannot start agent `{agent}`: {error}; fix the route ({declared_in}): a pattern is dot-separated segments of letters, digits, `_`, `-`, `*` or `**`, and a priority lies in -100..=100"
    )]
    InvalidRoutes {
        /// The agent type.
        agent: &'static str,
        /// Where the bad route was declared: `"its routes"` or `"the plugin routes in Options"`.
        declared_in: &'static str,
        /// The route error.
        error: RouteError,
    },
    /// A tool the agent offers a model has a parameter schema with a keyword the argument
    /// validator does not enforce ([`crate::ai::schema::unenforced_keywords`]): the model
    /// would be shown a limit nobody checks, so the agent does not start.
    #[error(
        "cannot start agent `{agent}`: {problems}; the tool argument validator does not enforce these keywords: drop the attribute that emits them, or check the value in the action"
    )]
    UnenforcedToolSchema {
        /// The agent type.
        agent: &'static str,
        /// Each tool and keyword, as `` tool `lookup`: `pattern` at `/properties/code` ``.
        problems: String,
    },
    /// The mailbox is full: the signal was refused, not queued.
    #[error(
        "the mailbox of agent `{agent}` (`{id}`) is full ({capacity} signals waiting); the signal was refused: retry later, slow the sender down, or raise `Options::mailbox_capacity`"
    )]
    MailboxFull {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
        /// The mailbox capacity.
        capacity: usize,
    },
    /// The signal breaks a CloudEvents 1.0 rule: it was refused, not queued.
    #[error("agent `{agent}` (`{id}`) refused a signal: {error}")]
    InvalidSignal {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
        /// The attribute at fault and why.
        error: SignalError,
    },
    /// The signal is larger than `Options::max_signal_bytes`: refused, nothing processed.
    #[error(
        "signal {signal_type} to agent `{agent}` (`{id}`) was refused: as JSON it takes more than {} (`Options::max_signal_bytes`); nothing was processed: send less, or raise the limit",
        crate::quote::ByteSize(*limit)
    )]
    SignalTooLarge {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
        /// The signal's type, quoted (and cut if long).
        signal_type: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The agent has stopped (or is stopping): nothing was delivered.
    #[error("agent `{agent}` (`{id}`) has stopped; nothing was delivered")]
    Stopped {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
    },
    /// `call` got no answer in time. The signal may still be processed.
    #[error(
        "agent `{agent}` (`{id}`) did not answer `{signal_type}` within {timeout:?}; the signal stays queued and may still be processed: raise `Options::call_timeout`, or `cast` it"
    )]
    CallTimeout {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
        /// The signal's type.
        signal_type: String,
        /// How long the caller waited.
        timeout: Duration,
    },
    /// `await_completion` timed out.
    #[error(
        "agent `{agent}` (`{id}`) did not complete within {timeout:?}; {}; it completes when its strategy reports `success` or `failure`",
        describe(snapshot.as_deref())
    )]
    CompletionTimeout {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
        /// How long the caller waited.
        timeout: Duration,
        /// Where it stood when the wait ended, if it could be asked.
        snapshot: Option<Box<Snapshot>>,
    },
    /// The agent stopped before its strategy reported completion.
    #[error(
        "agent `{agent}` (`{id}`) stopped before completing ({reason}); {}",
        describe(snapshot.as_deref())
    )]
    StoppedBeforeCompletion {
        /// The agent type.
        agent: &'static str,
        /// The agent's id.
        id: String,
        /// Why it stopped.
        reason: Box<StopReason>,
        /// Its last snapshot.
        snapshot: Option<Box<Snapshot>>,
    },
    /// The agent is not of the type asked for.
    #[error("agent `{actual}` is not a `{expected}`; ask for its state as `{actual}`")]
    WrongType {
        /// The type asked for.
        expected: &'static str,
        /// The agent's type.
        actual: &'static str,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A checkpoint could not be written or restored.
    #[error("checkpoint `{key}`: {error}")]
    Checkpoint {
        /// Its key in the store.
        key: String,
        /// What is wrong.
        error: CheckpointError,
    },
}

fn describe(snapshot: Option<&Snapshot>) -> String {
    match snapshot {
        None => "its status is unknown".to_string(),
        Some(s) if s.details.is_null() => {
            format!("its status is `{}`", status_name(s))
        }
        Some(s) => format!("its status is `{}` ({})", status_name(s), s.details),
    }
}

fn status_name(snapshot: &Snapshot) -> String {
    serde_json::to_value(snapshot.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{:?}", snapshot.status))
}
