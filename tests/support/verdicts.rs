//! What the statechart model tests compare after each step: a generated machine's result and
//! the reference interpreter's, as one [`Verdict`].

use stratagem::AgentError;
use stratagem::prelude::*;

/// The last segment of an action's path: the name the reference runs it by.
pub fn action_name(path: &syn::Path) -> String {
    path.segments.last().unwrap().ident.to_string()
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Rows fired, arming these timers: (delay ms, state, generation).
    Fired(Vec<(u128, String, u64)>),
    /// A stale timer, dropped.
    Ignored,
    Invalid,
    Rejected,
    /// This action failed: nothing changed.
    Failed(String),
}

/// The generated machine's result as a verdict, with the timer signals it armed.
pub fn verdict_of(result: Result<Vec<Directive>, AgentError>) -> (Verdict, Vec<Signal>) {
    match result {
        Ok(directives) => {
            let mut armed = Vec::new();
            let mut signals = Vec::new();
            for d in directives {
                match d {
                    Directive::Schedule { delay, signal } => {
                        armed.push((
                            delay.as_millis(),
                            signal.data["state"].as_str().unwrap().to_string(),
                            signal.data["generation"].as_u64().unwrap(),
                        ));
                        signals.push(signal);
                    }
                    other => panic!("unexpected directive {other:?}"),
                }
            }
            (Verdict::Fired(armed), signals)
        }
        Err(AgentError::InvalidTransition { .. }) => (Verdict::Invalid, Vec::new()),
        Err(AgentError::GuardRejected { .. }) => (Verdict::Rejected, Vec::new()),
        Err(AgentError::Action { action, .. }) => {
            (Verdict::Failed(action.into_owned()), Vec::new())
        }
        Err(other) => panic!("unexpected error {other:?}"),
    }
}
