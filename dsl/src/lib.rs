//! The Stratagem compiler.
//!
//! Two front-ends ([`tokens`] for the procedural macros; `.agent` files) build one [`model`];
//! one validator ([`check`]) collects every diagnostic; one code generator ([`emit`]) turns an
//! accepted model into Rust. The macros call [`expand`]; `build.rs` and `agentc` use the same
//! pipeline.

#![forbid(unsafe_code)]

pub mod build;
pub mod check;
pub mod emit;
pub mod expand;
pub mod graph;
pub mod limits;
pub mod model;
pub mod report;
mod stack;
pub mod syntax;
pub mod tokens;

pub use build::{BuildError, Builder};
