//! Transports: where emitted signals go besides subscribers and the parent.

use std::fmt;

use crate::signal::Signal;

/// An outbound signal transport (a message bus such as NATS, a webhook, a log).
///
/// `publish` is called in the agent's task for every emitted signal, in order, so it must not
/// block: a networked transport hands the signal to its own client task or buffer. Inbound
/// signals need no trait: a transport's subscriber delivers them with
/// [`AgentRef::cast`](super::AgentRef::cast), which applies the same backpressure as any caller.
pub trait Transport: Send + Sync + fmt::Debug {
    /// A name for errors and logs.
    fn name(&self) -> &str;

    /// Publishes a signal emitted by `origin`. An error becomes an `Error` directive of the
    /// emitting agent.
    fn publish(&self, origin: &Origin<'_>, signal: &Signal) -> Result<(), TransportError>;
}

/// The agent a signal was emitted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin<'a> {
    /// Its agent type's name.
    pub agent: &'static str,
    /// Its id.
    pub id: &'a str,
}

/// A transport could not publish a signal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TransportError {
    /// What went wrong.
    pub message: String,
}

impl TransportError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        TransportError {
            message: message.into(),
        }
    }
}
