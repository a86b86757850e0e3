//! Stratagem: agents defined declaratively, compiled into validated, fast Rust at build time.
//!
//! An agent is a typed state struct plus a strategy; actions are functions with typed,
//! schema-described parameters; everything the agent wants done outside itself comes back as
//! [`Directive`]s. This facade re-exports the runtime ([`agent_runtime`]) and the macros. Start with
//! the [`prelude`]; the [`guide`] explains everything, from a first agent to the exact semantics
//! of every construct and every error code.
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

pub use agent_macros::{Params, action, agent, bt};
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

/// The guide and the language reference: every `#[agent]` option, every `.agent` construct,
/// the exact rules of FSMs and behaviour trees, the error codes, and how-tos. Its examples are
/// doc tests.
pub mod guide {
    #![doc = include_str!("../docs/guide.md")]

    #[doc = include_str!("../docs/agents.md")]
    pub mod agents {}

    #[doc = include_str!("../docs/fsm.md")]
    pub mod fsm {}

    #[doc = include_str!("../docs/trees.md")]
    pub mod trees {}

    #[doc = include_str!("../docs/ai.md")]
    pub mod ai {}

    #[doc = include_str!("../docs/agent_files.md")]
    pub mod agent_files {}

    #[doc = include_str!("../docs/plugins.md")]
    pub mod plugins {}

    #[doc = include_str!("../docs/server.md")]
    pub mod server {}

    #[doc = include_str!("../docs/interrupts.md")]
    pub mod interrupts {}

    #[doc = include_str!("../docs/migrations.md")]
    pub mod migrations {}

    #[doc = include_str!("../docs/testing.md")]
    pub mod testing {}

    #[doc = include_str!("../docs/durable.md")]
    pub mod durable {}

    #[doc = include_str!("../docs/observability.md")]
    pub mod observability {}

    #[doc = include_str!("../docs/inspector.md")]
    pub mod inspector {}

    // The compiler's own copy, which `agentc explain` prints.
    #[doc = include_str!("../dsl/docs/errors.md")]
    pub mod errors {}
}

/// Everything an agent definition usually needs.
pub mod prelude {
    pub use agent_macros::{Params, action, agent, bt};
    pub use agent_runtime::ai::{AiRunner, ModelTable, ScriptedModel};
    pub use agent_runtime::bt;
    pub use agent_runtime::bt::Params;
    pub use agent_runtime::server::{AgentServer, ErrorPolicy, Options};
    pub use agent_runtime::{
        Action, ActionError, Agent, AgentSpec, BehaviorTree, Direct, Directive, Directives, Fsm,
        Instruction, NoParams, Outcome, Runner, Signal, Snapshot, Status,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::json;
}

/// Agents across machines (the `cluster` feature): signals over NATS JetStream, checkpoints
/// and leases in PostgreSQL. See [`agent_cluster`].
#[cfg(feature = "cluster")]
pub use agent_cluster as cluster;

/// A live inspector in the browser (the `inspector` feature): every agent's state machine,
/// tree or conversation as it runs. See [`agent_inspector`] and the
/// [inspector chapter](guide::inspector).
#[cfg(feature = "inspector")]
pub use agent_inspector as inspector;
