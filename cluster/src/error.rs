//! What can go wrong in a cluster node.

use agent_runtime::server::ServerError;
use agent_runtime::store::StoreError;

/// A cluster node could not start, send or hand its agents back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// NATS could not be reached, or JetStream refused a request.
    #[error("nats at `{url}`: {message}")]
    Nats {
        /// The server's URL.
        url: String,
        /// What failed, with a hint.
        message: String,
    },
    /// PostgreSQL failed (see [`StoreError`]).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An agent failed to start, thaw or checkpoint.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The options do not make sense.
    #[error("invalid cluster options: {0}")]
    Options(String),
    /// A NATS message is not a signal of the cluster's (see [`read_message`](crate::read_message)).
    #[error("not a signal: {0}")]
    Message(String),
}

impl ClusterError {
    pub(crate) fn nats(url: &str, message: impl std::fmt::Display) -> Self {
        ClusterError::Nats {
            url: url.to_string(),
            message: message.to_string(),
        }
    }
}
