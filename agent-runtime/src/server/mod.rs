//! The agent server: runs agents for real on tokio.
//!
//! Each agent runs in its own task with a bounded mailbox. Signals arrive with
//! [`cast`](AgentRef::cast) (fire and forget) or [`call`](AgentRef::call) (wait for the outcome);
//! the server routes each one (strategy routes, agent routes, plugin routes: all matches run as
//! one `cmd`), then executes the directives in order: `Emit` to subscribers, the parent and
//! transports; `Schedule` and `Cron` as real timers whose signals come back through routing;
//! `SpawnAgent`/`StopChild` as child agents in their own tasks; `RunInstruction` in a task whose
//! outcome is fed back through `cmd`; `Error` through the [`ErrorPolicy`]; `Stop`; custom
//! directives through registered executors. While the strategy reports `Running`, the server
//! ticks it. Panics in user code never take the task down. Agents are checkpointed to a
//! [`Store`](crate::store::Store) with [`hibernate`](AgentRef::hibernate) and brought back with
//! [`AgentServer::thaw`].
//!
//! ```
//! use agent_runtime::server::{AgentServer, Options};
//! use agent_runtime::{Agent, AgentSpec, Signal, Snapshot, Status, Strategy};
//! # use agent_runtime::{ActionEntry, Directive, Instruction};
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Debug, Clone, Default, Serialize, Deserialize)]
//! # struct Echo;
//! # struct Emits;
//! # impl Strategy<Echo> for Emits {
//! #     type State = ();
//! #     fn cmd(_: &mut Agent<Echo>, i: Vec<Instruction>) -> Vec<Directive> {
//! #         i.into_iter().map(|i| Directive::Emit(Signal::new("echoed", i.params))).collect()
//! #     }
//! #     fn snapshot(_: &Agent<Echo>) -> Snapshot { Snapshot::new(Status::Idle) }
//! #     fn signal_routes() -> Vec<agent_runtime::RouteSpec> {
//! #         vec![agent_runtime::RouteSpec::new("echo", agent_runtime::RouteTarget::Custom("echo".into()), 50)]
//! #     }
//! # }
//! # impl AgentSpec for Echo {
//! #     const NAME: &'static str = "Echo";
//! #     type Strategy = Emits;
//! #     fn actions() -> &'static [ActionEntry<Self>] { &[] }
//! # }
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let server = AgentServer::start(Echo::new(), Options::default()).await?;
//! let mut events = server.subscribe();
//! let outcome = server.call(Signal::new("echo", serde_json::json!({"n": 1}))).await?;
//! assert_eq!(outcome.emitted().count(), 1);
//! assert_eq!(events.recv().await.unwrap().signal_type, "echoed");
//! let report = server.stop().await;
//! assert_eq!(report.processed, 1);
//! # Ok::<_, agent_runtime::server::ServerError>(()) }).unwrap();
//! ```

mod ai;
mod children;
pub(crate) mod clock;
mod core;
mod cron;
mod directives;
mod error;
mod executor;
mod handle;
mod message;
mod observe;
mod options;
mod report;
mod shutdown;
mod step;
mod timers;
mod trace_link;
mod transport;

pub use children::CHILD_EXIT_SIGNAL;
pub use error::ServerError;
pub use executor::ExecutorContext;
pub use handle::{AgentRef, AgentServer, CallOutcome};
pub use observe::{Cause, Observation};
pub use options::{ERROR_SIGNAL, ErrorPolicy, Options};
pub use report::{ChildReport, StopReason, StopReport};
pub use trace_link::TraceLink;
pub use transport::{Origin, Transport, TransportError};

#[cfg(test)]
mod tests;
