//! Diagnostics for people and for tools: rustc-style text through codespan-reporting, and one
//! JSON object per diagnostic (`agentc --message-format json`, editors, CI annotations).

mod json;
mod sources;
mod text;

pub use json::{Location, json_line, location};
pub use sources::Sources;
pub use text::{render, render_one};
