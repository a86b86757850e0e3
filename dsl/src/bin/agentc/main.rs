//! `agentc`: check, format, draw and expand `.agent` files.
//!
//! ```text
//! agentc check FILE... [--message-format human|json]
//! agentc fmt FILE... [--check]
//! agentc graph FILE [--item NAME] [--format dot|mermaid]
//! agentc expand FILE
//! agentc explain CODE
//! ```
//!
//! Exit codes: 0 success (warnings allowed), 1 errors in a file (or, for
//! `fmt --check`, a file that would change), 2 usage or I/O error.

#![forbid(unsafe_code)]

mod args;
mod commands;

use std::process::ExitCode;

fn main() -> ExitCode {
    let command = match args::parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("error: {message}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    let code = commands::run(command);
    ExitCode::from(code)
}
