//! The Stratagem compiler, for `build.rs`: [`Builder`] compiles `.agent` files into Rust that
//! the crate includes with `stratagem::include_agents!`.
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     agent_dsl::Builder::new().compile(&["agents/order.agent"])?;
//!     Ok(())
//! }
//! ```
//!
//! The `agentc` binary (default feature `cli`) checks, formats, draws and expands files and
//! explains error codes. The language is documented in the `stratagem` crate's guide
//! (`stratagem::guide`).
//!
//! Inside, two front-ends (`tokens` for the procedural macros, `syntax` for `.agent` files) build
//! one `model`; one validator (`check`) collects every diagnostic; one code generator (`emit`)
//! turns an accepted model into Rust. Those modules are public for `agent-macros` and `agentc`
//! only and hidden from the documentation: they are not a stable API.

#![forbid(unsafe_code)]

#[doc(hidden)]
pub mod build;
#[doc(hidden)]
pub mod check;
#[doc(hidden)]
pub mod emit;
#[doc(hidden)]
pub mod expand;
#[doc(hidden)]
pub mod graph;
/// The compiler's limits: past one, a file or a macro gets one error, never a crash.
pub mod limits;
#[doc(hidden)]
pub mod model;
#[doc(hidden)]
pub mod report;
mod stack;
#[doc(hidden)]
pub mod syntax;
#[doc(hidden)]
pub mod tokens;

pub use build::{BuildError, Builder};
