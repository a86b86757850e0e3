//! Undoing a strategy call that panicked: a copy of the agent is kept before the call and put
//! back if it panics. One copy per call is enough: when a host already holds a copy of the
//! whole agent (the agent server's `Options::isolate_strategy_panics`), the agent does not
//! take a second one; it types the panic and lets the host put its copy back.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::error::{ActionError, AgentError, ErrorContext};

thread_local! {
    /// Whether the call running on this thread is covered by a host's copy of the agent.
    static HOST_COPY: Cell<bool> = const { Cell::new(false) };
}

/// The panic payload [`isolated`] raises under a host's copy: the error the host reports once
/// it has put its copy back.
pub(crate) struct StrategyPanic(pub(crate) AgentError);

/// Runs `f` (a host's call into an agent) as covered by the host's own copy of the agent: a
/// strategy that panics inside unwinds to the host as a [`StrategyPanic`] instead of being
/// undone from a second copy.
pub(crate) fn with_host_copy<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(HOST_COPY.with(|c| c.replace(true)));
    f()
}

/// Puts the flag back as it was, also when the call unwinds.
struct Restore(bool);

impl Drop for Restore {
    fn drop(&mut self) {
        HOST_COPY.with(|c| c.set(self.0));
    }
}

/// Runs a strategy call on the agent with a copy kept: if it panics, the copy is put back and
/// the panic is one `StrategyPanicked` (or `Hook`) error. Under a host's copy no copy is taken:
/// the typed error unwinds to the host ([`with_host_copy`]).
#[cold]
pub(crate) fn isolated<S: AgentSpec>(
    agent: &mut Agent<S>,
    call: &str,
    f: impl FnOnce(&mut Agent<S>) -> Vec<Directive>,
) -> Vec<Directive> {
    // The host's copy covers this agent only: another agent run inside the call (say, by an
    // action) takes its own copy, so the flag is off while `f` runs.
    if HOST_COPY.with(|c| c.replace(false)) {
        let _restore = Restore(true);
        return match catch_unwind(AssertUnwindSafe(|| f(agent))) {
            Ok(directives) => directives,
            Err(payload) => resume_unwind(Box::new(StrategyPanic(typed::<S>(call, payload)))),
        };
    }
    let backup = agent.clone();
    match catch_unwind(AssertUnwindSafe(|| f(agent))) {
        Ok(directives) => directives,
        Err(payload) => {
            *agent = backup;
            vec![Directive::error(
                typed::<S>(call, payload),
                ErrorContext::Strategy,
            )]
        }
    }
}

/// What a strategy's panic is reported as.
fn typed<S: AgentSpec>(call: &str, payload: Box<dyn std::any::Any + Send>) -> AgentError {
    match payload.downcast::<crate::ai::HookPanic>() {
        // A step hook broke, not the strategy: name the hook.
        Ok(hook) => AgentError::Hook {
            hook: hook.hook.to_string(),
            error: hook.error,
        },
        Err(payload) => AgentError::StrategyPanicked {
            strategy: std::any::type_name::<S::Strategy>().to_string(),
            error: ActionError::panicked(call, payload.as_ref()),
        },
    }
}
