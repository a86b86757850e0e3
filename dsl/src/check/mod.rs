//! The one validator. Every check runs on the model, so it protects both front-ends; all
//! diagnostics are collected before anything is reported.

mod action;
mod agent;
mod ai;
mod cap;
pub mod codes;
mod ctxt;
mod diagnostic;
mod expansion;
pub mod explain;
mod file;
pub mod fsm;
mod interrupt;
mod migration;
mod names;
mod plugins;
pub mod quote;
mod reasoning;
mod regions;
mod repeats;
mod routes;
mod settings;
mod statechart;
pub mod suggest;
pub mod tree;

pub use action::{ActionShape, StateAccess};
pub use cap::cap;
pub use codes::Code;
pub use ctxt::Ctxt;
pub use diagnostic::{Diagnostic, Label, Severity, to_syn_error};
pub use file::type_text;
pub use names::{is_identifier, is_keyword};
pub use plugins::model_route;
pub use routes::check_pattern;

use crate::model::{ActionDef, AgentDef, BehaviorDef, BtDef};

/// Checks an agent: `Ok(warnings)` or `Err(all diagnostics)`.
pub fn agent(def: &AgentDef) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let cx = Ctxt::new();
    agent::check_agent(&cx, def);
    cx.finish()
}

/// Checks a `bt! { ... }` invocation: `Ok(warnings)` or `Err(all diagnostics)`.
pub fn bt(def: &BtDef) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let cx = Ctxt::new();
    tree::check_bt(&cx, def);
    cx.finish()
}

/// Checks every agent and behaviour of a `.agent` file: `Ok(warnings)` or `Err(all diagnostics)`.
pub fn file(
    agents: &[AgentDef],
    behaviors: &[BehaviorDef],
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let cx = Ctxt::new();
    file::check_file(&cx, agents, behaviors);
    cx.finish()
}

/// Checks an `#[action]` function: its validated shape (and warnings), or every diagnostic.
pub fn action(def: &ActionDef) -> Result<(ActionShape, Vec<Diagnostic>), Vec<Diagnostic>> {
    let cx = Ctxt::new();
    let shape = action::check_action(&cx, def);
    match (shape, cx.finish()) {
        (Some(shape), Ok(warnings)) => Ok((shape, warnings)),
        (_, Err(all)) => Err(all),
        // Unreachable in practice: a missing shape always comes with an error.
        (None, Ok(mut warnings)) => {
            warnings.push(Diagnostic::error(
                codes::ACTION_SIGNATURE,
                def.name.span,
                "unsupported action signature",
            ));
            Err(warnings)
        }
    }
}
