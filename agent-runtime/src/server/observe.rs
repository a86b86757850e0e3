//! Watching an agent step by step ([`AgentRef::watch`](super::AgentRef::watch)): what each
//! `init`, signal, tick and async completion did, with the run's progress afterwards.
//!
//! An agent nobody watches pays one atomic load per step: the observation is built only while
//! a watcher holds its receiver.

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
pub enum Cause {
    /// The agent started (its strategy's `init`).
    Init,
    /// A signal: from the mailbox (`signal`), a timer (`timer`), a cron job (`cron`), a
    /// child's exit (`child`) or a model's answer (`llm`).
    Signal {
        /// Where it came from.
        origin: &'static str,
        /// The signal.
        signal: Box<Signal>,
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
    /// any: the check is one atomic load, so unwatched agents build nothing.
    pub(super) fn observe(&mut self, cause: impl FnOnce() -> Cause, directives: &[Directive]) {
        let Some(watchers) = self.shared.watchers.get() else {
            return;
        };
        let watched = watchers.receiver_count() > 0;
        if watched != self.watching {
            // The strategy records what its progress shows only while watched (a tree, each
            // node's last status): from the next step on.
            self.watching = watched;
            self.agent.watched(watched);
        }
        if !watched {
            return;
        }
        let agent = &*self.agent;
        // A panicking strategy is reported by the step itself; the observation just skips it.
        let Ok((status, progress)) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (agent.status(), agent.progress())
        })) else {
            return;
        };
        let observation = Observation {
            at: clock::now(),
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
            status,
            progress,
        };
        let _ = watchers.send(std::sync::Arc::new(observation));
    }
}
