//! The `tracing` events the runtime emits: one function per event, with stable targets, messages
//! and field names (listed in the guide's observability chapter).
//!
//! Each function is out of line and its call sites test [`on`] first, so a process without a
//! subscriber (or with these levels filtered out) pays one relaxed atomic load per site: no
//! formatting, no clock read, no allocation.

use std::fmt;
use std::time::{Duration, Instant};

use crate::error::{ActionError, AgentError};

/// Target of FSM transitions and refused events.
pub(crate) const FSM: &str = "stratagem::fsm";
/// Target of action runs.
pub(crate) const ACTION: &str = "stratagem::action";
/// Target of behaviour-tree node status changes.
pub(crate) const TREE: &str = "stratagem::tree";
/// Target of directives a host executes.
pub(crate) const DIRECTIVE: &str = "stratagem::directive";
/// Target of signals an agent emits.
pub(crate) const SIGNAL: &str = "stratagem::signal";
/// Target of AI strategy steps.
pub(crate) const AI: &str = "stratagem::ai";

/// Whether some subscriber may want events at `level`: the global maximum level, one load.
macro_rules! on {
    ($level:ident) => {
        ::tracing::level_enabled!(::tracing::Level::$level)
    };
}
pub(crate) use on;

/// The start of an action run when its event may be recorded: the clock is read only then.
#[inline(always)]
pub(crate) fn start() -> Option<Instant> {
    if on!(DEBUG) {
        Some(Instant::now())
    } else {
        None
    }
}

/// How an action run ended, as the `outcome` field says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    /// It finished and its changes were committed.
    Success,
    /// It committed its changes and runs again next tick (a tree leaf).
    Running,
    /// It failed; nothing it did was kept.
    Failure,
    /// An async action handed to the host.
    Started,
}

impl Ran {
    fn as_str(self) -> &'static str {
        match self {
            Ran::Success => "success",
            Ran::Running => "running",
            Ran::Failure => "failure",
            Ran::Started => "started",
        }
    }
}

/// `stratagem::action` DEBUG `action ran`: `agent`, `id`, `action`, `outcome`, `duration_us`,
/// and `error` when it failed.
#[cold]
#[inline(never)]
pub(crate) fn action_ran(
    agent: &str,
    id: &str,
    action: &str,
    started: Option<Instant>,
    outcome: Ran,
    error: Option<&ActionError>,
) {
    let elapsed = started.map_or(Duration::ZERO, |s| s.elapsed());
    action_event(agent, id, action, elapsed, outcome, error);
}

/// [`action_ran`] for an async action the host ran (`outcome` is `success` or `failure`).
#[cold]
#[inline(never)]
pub(crate) fn async_action_ran(
    agent: &str,
    id: &str,
    action: &str,
    elapsed: Duration,
    error: Option<&ActionError>,
) {
    let outcome = if error.is_some() {
        Ran::Failure
    } else {
        Ran::Success
    };
    action_event(agent, id, action, elapsed, outcome, error);
}

fn action_event(
    agent: &str,
    id: &str,
    action: &str,
    elapsed: Duration,
    outcome: Ran,
    error: Option<&ActionError>,
) {
    tracing::debug!(
        target: ACTION,
        agent,
        id,
        action,
        outcome = outcome.as_str(),
        duration_us = micros(elapsed),
        error = error.map(tracing::field::display),
        "action ran"
    );
}

/// `stratagem::action` DEBUG `action ran` of a tree leaf: the fields of [`action_ran`] but
/// `agent` and `id`, which are on the enclosing `tree` span (a separate call site: a call site's
/// fields are fixed).
#[cold]
#[inline(never)]
pub(crate) fn leaf_action_ran(
    action: &str,
    started: Option<Instant>,
    outcome: Ran,
    error: Option<&ActionError>,
) {
    let duration_us = started.map_or(0, |s| micros(s.elapsed()));
    tracing::debug!(
        target: ACTION,
        action,
        outcome = outcome.as_str(),
        duration_us,
        error = error.map(tracing::field::display),
        "action ran"
    );
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// `stratagem::fsm` DEBUG `transition`: `agent`, `id`, `from`, `event`, `to`, `internal`
/// (a row without a target state: `to` is `from` and nothing is exited or entered).
#[cold]
#[inline(never)]
pub(crate) fn transition(
    agent: &str,
    id: &str,
    from: &str,
    event: &dyn fmt::Display,
    to: &str,
    internal: bool,
) {
    tracing::debug!(
        target: FSM,
        agent,
        id,
        from,
        event = %event,
        to,
        internal,
        "transition"
    );
}

/// `stratagem::fsm` DEBUG `event refused`: `agent`, `id`, `state`, `event`, `error`. Not a
/// warning: the caller gets the error, and refusing is how a machine ignores what it does not
/// expect.
#[cold]
#[inline(never)]
pub(crate) fn refused(
    agent: &str,
    id: &str,
    state: &str,
    event: &dyn fmt::Display,
    error: &AgentError,
) {
    tracing::debug!(
        target: FSM,
        agent,
        id,
        state,
        event = %event,
        error = %error,
        "event refused"
    );
}

/// `stratagem::tree` TRACE `node status`: `node` (as the language writes it: `action move_to`,
/// `timeout(2s)`), `from` (`idle` or `running`), `to` (`running`, `success`, `failure`). The
/// agent and id are on the enclosing `tree` span.
#[cold]
#[inline(never)]
pub(crate) fn node_status(node: &dyn fmt::Display, was_running: bool, to: crate::bt::Status) {
    tracing::trace!(
        target: TREE,
        node = %node,
        from = %if was_running { "running" } else { "idle" },
        to = %to,
        "node status"
    );
}

/// `stratagem::tree` DEBUG span `tree` (`agent`, `id`) around one tick of an agent's tree: the
/// events of its nodes and leaves, which do not know the agent, are inside it.
#[cold]
#[inline(never)]
pub(crate) fn tree_span(agent: &str, id: &str) -> tracing::Span {
    tracing::debug_span!(target: TREE, "tree", agent, id)
}

/// `stratagem::directive` DEBUG `directive`: `agent`, `id`, `kind`.
#[cold]
#[inline(never)]
pub(crate) fn directive(agent: &str, id: &str, kind: &str) {
    tracing::debug!(target: DIRECTIVE, agent, id, kind, "directive");
}

/// `stratagem::signal` DEBUG `signal emitted`: `agent`, `id`, `signal_type`, `signal_id`.
#[cold]
#[inline(never)]
pub(crate) fn signal_emitted(agent: &str, id: &str, signal: &crate::signal::Signal) {
    tracing::debug!(
        target: SIGNAL,
        agent,
        id,
        signal_type = %signal.signal_type,
        signal_id = %signal.id,
        "signal emitted"
    );
}

/// `stratagem::ai` DEBUG `ai step`: `agent`, `id`, `step` (what the strategy did: `model call`,
/// `tool call`, `tool result`, `answer`...), `detail`.
#[cold]
#[inline(never)]
pub(crate) fn ai_step(agent: &str, id: &str, step: &str, detail: &dyn fmt::Display) {
    tracing::debug!(target: AI, agent, id, step, detail = %detail, "ai step");
}
