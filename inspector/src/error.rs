//! Why an inspector could not start.

use std::net::SocketAddr;

/// Why [`Inspector::serve`](crate::Inspector::serve) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectorError {
    /// The address could not be resolved or bound.
    #[error("cannot listen on `{addr}`: {source}")]
    Bind {
        /// The address as given.
        addr: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A non-loopback address without a token.
    #[error(
        "the inspector would be reachable from other machines on `{addr}` without a token; \
         set one with `Inspector::token`, or bind to 127.0.0.1"
    )]
    TokenRequired {
        /// The non-loopback address.
        addr: SocketAddr,
    },
    /// An empty token.
    #[error("the inspector's token is empty; give a secret of at least one character")]
    EmptyToken,
}
