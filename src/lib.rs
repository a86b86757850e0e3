//! Stratagem: agents defined declaratively, compiled into validated, fast Rust at build time.
//!
//! An agent is a typed state struct plus a strategy; actions are functions with typed,
//! schema-described parameters; everything the agent wants done outside itself comes back as
//! [`Directive`]s. This facade re-exports the runtime ([`agent_runtime`]) and the macros. Start with
//! the [`prelude`].
//!
//! ```
//! use stratagem::prelude::*;
//!
//! /// Counts what it is told to.
//! #[agent(strategy = Direct, actions [add], routes { "counter.add" => add })]
//! #[derive(Debug, Clone, Default, Serialize, Deserialize)]
//! struct Counter { value: i64 }
//!
//! #[derive(Debug, Serialize, Deserialize, JsonSchema)]
//! struct By { by: i64 }
//!
//! /// Adds to the counter, refusing to go negative.
//! #[action]
//! fn add(counter: &mut Counter, params: By) -> Result<(), ActionError> {
//!     counter.value += params.by;
//!     if counter.value < 0 {
//!         return Err(ActionError::new("the counter cannot go negative"));
//!     }
//!     Ok(())
//! }
//!
//! let mut counter = Counter::new();
//! counter.cmd(Instruction::new("add", json!({"by": 2})));
//! counter.handle_signal(&Signal::new("counter.add", json!({"by": 3})));
//! assert_eq!(counter.state().value, 5);
//!
//! // A failing action changes nothing and becomes an `Error` directive.
//! let directives = counter.cmd(Instruction::new("add", json!({"by": -10})));
//! assert_eq!(counter.state().value, 5);
//! assert!(matches!(directives.as_slice(), [Directive::Error { .. }]));
//! ```

#![forbid(unsafe_code)]

pub use agent_macros::{action, agent, bt};
pub use agent_runtime::*;

/// Includes the Rust that `agent_dsl::Builder` generated from `agents/<name>.agent` into
/// `$OUT_DIR/<name>.rs` (see the `order-service` example).
///
/// ```ignore
/// mod agents {
///     use super::*; // the actions and types the `.agent` file names
///     stratagem::include_agents!("order");
/// }
/// ```
#[macro_export]
macro_rules! include_agents {
    ($name:literal) => {
        ::core::include!(::core::concat!(::core::env!("OUT_DIR"), "/", $name, ".rs"));
    };
}

/// Everything an agent definition usually needs.
pub mod prelude {
    pub use agent_macros::{action, agent, bt};
    pub use agent_runtime::ai::{AiRunner, ModelTable, ScriptedModel};
    pub use agent_runtime::bt;
    pub use agent_runtime::server::{AgentServer, ErrorPolicy, Options};
    pub use agent_runtime::{
        Action, ActionError, Agent, AgentSpec, BehaviorTree, Direct, Directive, Fsm, Instruction,
        NoParams, Outcome, Runner, Signal, Snapshot, Status,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::json;
}

/// Agents across machines (the `cluster` feature): signals over NATS JetStream, checkpoints
/// and leases in PostgreSQL. See [`agent_cluster`].
#[cfg(feature = "cluster")]
pub use agent_cluster as cluster;
