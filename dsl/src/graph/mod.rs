//! Diagrams of models: what `agentc graph` prints and what generated types expose as constants.

pub mod fsm;
mod statechart;
pub mod tree;
