//! Stratagem: agents defined declaratively, compiled into validated, fast Rust at build time.
//!
//! This facade re-exports the runtime ([`agent_runtime`]) and the macros (`#[agent]`,
//! `#[action]`). Start with the [`prelude`].

#![forbid(unsafe_code)]

pub use agent_macros::{action, agent};
pub use agent_runtime::*;

/// Everything an agent definition usually needs.
pub mod prelude {
    pub use agent_macros::{action, agent};
    pub use agent_runtime::{
        Action, ActionError, Agent, AgentSpec, Direct, Directive, Instruction, NoParams, Outcome,
        Runner, Signal, Snapshot, Status,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::json;
}
