//! The step context: while a journaled agent takes a step, the ids and the time its strategy
//! reads come from the step, not from a random generator or the clock, so a replay of the step
//! produces the same ids and the same state.
//!
//! A thread-local set by the host around one strategy call (`cmd`, `tick`, `init`) and read by
//! [`Instruction::new`](crate::Instruction::new), [`Signal::new`](crate::Signal::new) and the
//! behaviour tree's host clock. Without a journal nothing sets it, and those read it as `None`.

use std::cell::RefCell;
use std::sync::Arc;

use chrono::{DateTime, Utc};

struct Step {
    agent: Arc<str>,
    seq: u64,
    at: DateTime<Utc>,
    next: u32,
}

thread_local! {
    static STEP: RefCell<Option<Step>> = const { RefCell::new(None) };
}

/// Sets the step context until dropped.
pub(crate) struct StepScope(());

impl StepScope {
    /// Enters step `seq` of `agent`, taken at `at`.
    pub(crate) fn enter(agent: Arc<str>, seq: u64, at: DateTime<Utc>) -> Self {
        STEP.with(|step| {
            *step.borrow_mut() = Some(Step {
                agent,
                seq,
                at,
                next: 0,
            });
        });
        StepScope(())
    }
}

impl Drop for StepScope {
    fn drop(&mut self) {
        STEP.with(|step| step.borrow_mut().take());
    }
}

/// The next deterministic id of the current step, `{agent}/{step}/{index}`, when inside one.
pub(crate) fn next_id() -> Option<String> {
    STEP.with(|step| {
        let mut step = step.borrow_mut();
        let step = step.as_mut()?;
        let index = step.next;
        step.next += 1;
        Some(format!("{}/{}/{index}", step.agent, step.seq))
    })
}

/// The time of the current step, when inside one.
pub(crate) fn step_time() -> Option<DateTime<Utc>> {
    STEP.with(|step| step.borrow().as_ref().map(|step| step.at))
}

/// A deterministic id inside a journaled step, else a fresh UUIDv7.
pub(crate) fn fresh_id() -> String {
    next_id().unwrap_or_else(|| uuid::Uuid::now_v7().to_string())
}

/// The step's time inside a journaled step, else the wall clock.
pub(crate) fn now() -> DateTime<Utc> {
    step_time().unwrap_or_else(Utc::now)
}
