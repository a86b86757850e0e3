//! Stratagem agents across machines: signals over NATS JetStream, checkpoints and agent
//! ownership in PostgreSQL.
//!
//! The single-machine agent server (`agent_runtime::server`) with its embedded store stays the
//! default; this crate (the facade's `cluster` feature, `stratagem::cluster`) runs the same
//! agents, unchanged, on several nodes:
//!
//! - [`PostgresStore`] keeps checkpoints (one row per agent, with a checksum) and [`Lease`]s:
//!   an agent runs on at most one node, and a checkpoint written by a node that lost its lease
//!   is refused (fencing tokens).
//! - [`Cluster`] is a node: it claims shards of the agent id space by consistent hashing over
//!   the live nodes, consumes their signals from JetStream, thaws agents from PostgreSQL,
//!   acknowledges a signal only once the step that processed it is checkpointed, and hands
//!   its agents back on shutdown. When a node dies its leases expire and the others take its
//!   agents over from their last checkpoint; JetStream redelivers what was not acknowledged,
//!   and the ids recorded with each checkpoint make a redelivered signal count once.
//! - [`ClusterClient`] sends signals to agents wherever they run.

#![forbid(unsafe_code)]

mod lease;
mod postgres;

pub use lease::{FencedStore, Lease};
pub use postgres::{PostgresStore, Reconnect};
mod client;
mod error;
mod host;
mod options;
mod placement;
mod seen;
mod shard;
mod transport;
mod wire;

pub use client::ClusterClient;
pub use error::ClusterError;
pub use host::{Cluster, ClusterStats};
pub use options::{AckAfter, ClusterOptions};
pub use placement::{Placement, shard_of};
pub use transport::NatsTransport;
pub use wire::{AGENT_HEADER, CONTENT_TYPE};
