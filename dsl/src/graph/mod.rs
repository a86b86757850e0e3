//! Diagrams of models: what `agentc graph` prints and what generated types expose as constants.

pub mod fsm;
pub mod tree;
