//! A live inspector for Stratagem agents: one local web page that shows every watched agent as
//! it runs — an FSM's diagram with its current state and last transition, a behaviour tree with
//! its running nodes, an AI agent's conversation step by step, and a log of the signals that
//! went in and out.
//!
//! The facade exposes it as `stratagem::inspector` behind the off-by-default `inspector`
//! feature. The page and its scripts are embedded in the binary (no CDN: it works offline).
//!
//! ```no_run
//! # use agent_runtime::server::AgentRef;
//! # async fn demo(barista: AgentRef, patrol: AgentRef) -> Result<(), agent_inspector::InspectorError> {
//! use agent_inspector::Inspector;
//! let inspector = Inspector::new()
//!     .agent(&barista)
//!     .agent(&patrol)
//!     .serve(Inspector::DEFAULT_ADDR)
//!     .await?;
//! println!("inspecting at {}", inspector.url());
//! // ... the agents run; dropping `inspector` stops it.
//! # Ok(()) }
//! ```
//!
//! # Security
//!
//! - It binds to loopback unless told otherwise; a non-loopback address needs a token
//!   ([`Inspector::token`]), sent as `Authorization: Bearer <token>` or `?token=<token>`.
//! - Without a token, requests must name a loopback host (`Host: localhost:..`), so a web page
//!   elsewhere cannot reach it through DNS rebinding.
//! - It is read-only unless [`Inspector::allow_signals`] turns on sending signals from the page.
//! - Payloads are shown truncated ([`Truncation`]).
//!
//! # HTTP API
//!
//! | Route | Answer |
//! |---|---|
//! | `GET /` | the page |
//! | `GET /api/agents` | every agent: index, name, id, status, whether it stopped |
//! | `GET /api/agents/{n}` | agent `n`: its snapshot, [`Shape`](agent_runtime::inspect::Shape) and [`Progress`](agent_runtime::inspect::Progress) |
//! | `GET /api/agents/{n}/events` | agent `n`'s recent steps, oldest first |
//! | `GET /api/stream` | every step of every agent as Server-Sent Events (`step`, `lagged`, `stopped`); a `step` may stand for `skipped` steps before it that were not shown (past [`Inspector::steps_per_second`], or coalesced by a busy agent) |
//! | `POST /api/agents/{n}/signals` | `{"type": .., "data": ..}` sent to agent `n` (only with [`Inspector::allow_signals`]) |

#![forbid(unsafe_code)]

mod assets;
mod error;
mod feed;
mod inspector;
mod pace;
mod routes;
mod truncate;

pub use error::InspectorError;
pub use inspector::{Inspector, RunningInspector};
pub use truncate::Truncation;
