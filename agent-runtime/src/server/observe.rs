//! Watching an agent step by step ([`AgentRef::watch`](super::AgentRef::watch)): what each
//! `init`, signal, tick and async completion did, with the run's progress afterwards.
//!
//! An agent nobody watches pays one atomic load per step: the observation is built only while
//! a watcher holds its receiver. For watchers that want the latest step more than every step
//! ([`AgentRef::watch_coalesced`](super::AgentRef::watch_coalesced), the inspector), steps made
//! while the last observation is unread are held back, the latest replacing the one before.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::directive::Directive;
use crate::inspect::Progress;
use crate::signal::Signal;
use crate::snapshot::Status;

use super::clock;
use super::core::Core;

/// What made an agent step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // one per observation; boxing would allocate per step
pub enum Cause {
    /// The agent started (its strategy's `init`).
    Init,
    /// A signal: from the mailbox (`signal`), a timer (`timer`), a cron job (`cron`), a
    /// child's exit (`child`) or a model's answer (`llm`).
    Signal {
        /// Where it came from.
        origin: &'static str,
        /// The signal (not boxed: a step held back for coalescing watchers keeps it without
        /// an allocation).
        signal: Signal,
    },
    /// A tick of a running strategy.
    Tick,
    /// The completion of an async action.
    Completion {
        /// The action.
        action: String,
    },
}

/// One step of a watched agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// When the step ran.
    pub at: DateTime<Utc>,
    /// What made it.
    pub cause: Cause,
    /// The signals it emitted.
    pub emitted: Vec<Signal>,
    /// The errors it produced, as their messages.
    pub errors: Vec<String>,
    /// The agent's status afterwards.
    pub status: Status,
    /// Where the run stands afterwards ([`Strategy::progress`](crate::Strategy::progress)).
    pub progress: Progress,
    /// How many steps just before this one were not observed: held back for coalescing
    /// watchers ([`AgentRef::watch_coalesced`](super::AgentRef::watch_coalesced)) and replaced
    /// by a later step. Always 0 while a watcher wants every step.
    pub skipped: u64,
}

/// While a step is held back, how often the agent asks whether its watchers caught up.
const RECHECK: u64 = 32;

/// A step observed but not sent yet: its status and progress are read when it is sent (only
/// another step changes the agent, and that one replaces it).
#[derive(Debug)]
struct Step {
    cause: Cause,
    emitted: Vec<Signal>,
    errors: Vec<String>,
}

/// The agent's side of its watchers.
#[derive(Debug, Default)]
pub(super) struct Watching {
    /// What the strategy was last told ([`Strategy::watched`](crate::Strategy::watched)).
    told: bool,
    /// The latest step held back from coalescing watchers.
    held: Option<Step>,
    /// Steps held back and replaced since the last observation sent.
    skipped: u64,
}

impl Core {
    /// Whether a watcher is subscribed: one atomic load.
    pub(super) fn watched(&self) -> bool {
        self.shared
            .watchers
            .get()
            .is_some_and(|watchers| watchers.receiver_count() > 0)
    }

    /// Publishes the step `cause` made (its directives not yet executed) to the watchers, if
    /// any: the check is one atomic load, so unwatched agents build nothing. For coalescing
    /// watchers still reading the last observation, the step is held back instead.
    pub(super) fn observe(&mut self, cause: impl FnOnce() -> Cause, directives: &[Directive]) {
        let Some(watchers) = self.shared.watchers.get() else {
            return;
        };
        let watched = watchers.receiver_count() > 0;
        if watched != self.watching.told {
            // The strategy records what its progress shows only while watched (a tree, each
            // node's last status): from the next step on.
            self.watching.told = watched;
            self.agent.watched(watched);
            if !watched {
                self.watching.held = None;
                self.watching.skipped = 0;
            }
        }
        if !watched {
            return;
        }
        let step = Step {
            cause: cause(),
            emitted: directives
                .iter()
                .filter_map(|d| match d {
                    Directive::Emit(signal) | Directive::Interrupt(signal) => Some(signal.clone()),
                    _ => None,
                })
                .collect(),
            errors: directives
                .iter()
                .filter_map(Directive::as_error)
                .map(ToString::to_string)
                .collect(),
        };
        // The last observation is still unread (and nobody was promised every step). While a
        // step is held, whether the watchers caught up is asked every `RECHECK` steps only
        // (it takes two locks); the agent going idle sends the held step anyway.
        let recheck = self.watching.held.is_none() || self.watching.skipped.is_multiple_of(RECHECK);
        if !self.shared.every_step.load(Ordering::Relaxed) && (!recheck || !watchers.is_empty()) {
            if self.watching.held.replace(step).is_some() {
                self.watching.skipped += 1;
            }
            return;
        }
        if self.watching.held.take().is_some() {
            self.watching.skipped += 1;
        }
        self.send(step);
    }

    /// Sends the step held back from coalescing watchers, if any: the agent has nothing left
    /// to do, so its last step is never left unseen.
    pub(super) fn flush_observation(&mut self) {
        if let Some(step) = self.watching.held.take() {
            self.send(step);
        }
    }

    fn send(&mut self, step: Step) {
        let Some(watchers) = self.shared.watchers.get() else {
            return;
        };
        let agent = &*self.agent;
        // A panicking strategy is reported by the step itself; the observation just skips it.
        let Ok((status, progress)) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (agent.status(), agent.progress())
        })) else {
            return;
        };
        let observation = Observation {
            at: clock::now(),
            cause: step.cause,
            emitted: step.emitted,
            errors: step.errors,
            status,
            progress,
            skipped: std::mem::take(&mut self.watching.skipped),
        };
        let _ = watchers.send(Arc::new(observation));
    }
}
