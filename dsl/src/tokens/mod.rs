//! The macro front-end: syn parses macro input into the model. It validates only what the token
//! grammar itself rules out (an unknown option, a malformed duration); every semantic rule lives
//! in `check/`.

mod action;
mod agent;
pub mod ai;
pub mod common;
mod fsm;
mod migration;
pub mod nesting;
mod plugins;
mod routes;
pub mod tree;

pub use action::{OPTIONS as ACTION_OPTIONS, action};
pub use agent::{OPTIONS as AGENT_OPTIONS, STRATEGIES, agent};
pub use fsm::transitions;
pub use routes::routes;
pub use tree::bt;
