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
//! - [`ClusterClient`] sends signals to agents wherever they run, and so do the agents: a
//!   signal an agent emits [`address`]ed to another agent travels over JetStream to whichever
//!   node runs it, and the signal that caused it is acknowledged only once it is stored.
//! - Signals travel by the CloudEvents NATS protocol binding, in structured mode (CloudEvents
//!   JSON) or binary mode (`ce-*` headers, the same mapping as the HTTP binding, the payload as
//!   the body): [`ClusterOptions::content_mode`] and [`NatsTransport::content_mode`] choose,
//!   and every receiver reads both ([`read_message`] for your own subscribers).
//!
//! The NATS half ([`Cluster`], [`ClusterClient`], [`NatsTransport`]) is behind the `nats`
//! feature, off by default: `async-nats` turns on `tracing`'s `attributes`, which brings a second
//! `syn` into every build it is part of. The facade's `cluster` feature enables it.

#![forbid(unsafe_code)]

mod address;
mod lease;
mod postgres;

pub use address::{RECIPIENT, address, address_to, recipient};
pub use lease::{FencedStore, Lease};
pub use postgres::{PostgresStore, Reconnect};
#[cfg(feature = "nats")]
mod client;
#[cfg(feature = "nats")]
mod commit;
#[cfg(feature = "nats")]
mod error;
#[cfg(feature = "nats")]
mod host;
#[cfg(feature = "nats")]
mod journal;
#[cfg(feature = "nats")]
mod options;
#[cfg(feature = "nats")]
mod outbox;
#[cfg(feature = "nats")]
mod placement;
#[cfg(feature = "nats")]
mod seen;
#[cfg(feature = "nats")]
mod shard;
#[cfg(feature = "nats")]
mod transport;
#[cfg(feature = "nats")]
mod wire;

#[cfg(feature = "nats")]
pub use client::ClusterClient;
#[cfg(feature = "nats")]
pub use error::ClusterError;
#[cfg(feature = "nats")]
pub use host::{Cluster, ClusterStats};
#[cfg(feature = "nats")]
pub use options::{AckAfter, ClusterOptions};
#[cfg(feature = "nats")]
pub use placement::{Placement, shard_of};
#[cfg(feature = "nats")]
pub use transport::NatsTransport;
#[cfg(feature = "nats")]
pub use wire::{AGENT_HEADER, CONTENT_TYPE, read_message};
