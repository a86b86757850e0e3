//! The step context: while a journaled agent takes a step, the ids and the time its strategy
//! reads come from the step, not from a random generator or the clock, so a replay of the step
//! produces the same ids and the same state.
//!
//! A thread-local set by the host around one strategy call (`cmd`, `tick`, `init`) and read by
//! [`Instruction::new`](crate::Instruction::new), [`Signal::new`](crate::Signal::new) and the
//! behaviour tree's host clock. Without a journal nothing sets it, and those read it as `None`.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

struct Step {
    agent: Arc<str>,
    seq: u64,
    at: StepTime,
    next: u32,
}

/// A step's time as seconds and nanoseconds since the Unix epoch: what the journal writes,
/// turned into a chrono time only when the strategy reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepTime {
    pub(crate) seconds: i64,
    pub(crate) nanos: u32,
}

const NANOS: u32 = 1_000_000_000;

impl StepTime {
    pub(crate) fn of(time: &DateTime<Utc>) -> Self {
        StepTime {
            seconds: time.timestamp(),
            nanos: time.timestamp_subsec_nanos(),
        }
    }

    /// The chrono time; out of its range (±262,000 years, no clock reads that) the epoch.
    pub(crate) fn to_datetime(self) -> DateTime<Utc> {
        DateTime::from_timestamp(self.seconds, self.nanos).unwrap_or_default()
    }

    /// This time plus `by`; `None` past the calendar's range.
    pub(crate) fn plus(self, by: Duration) -> Option<Self> {
        let mut seconds = self
            .seconds
            .checked_add(i64::try_from(by.as_secs()).ok()?)?;
        let mut nanos = self.nanos + by.subsec_nanos();
        if nanos >= NANOS {
            seconds = seconds.checked_add(1)?;
            nanos -= NANOS;
        }
        Some(StepTime { seconds, nanos }).filter(StepTime::in_range)
    }

    /// This time minus `by`; `None` past the calendar's range.
    pub(crate) fn minus(self, by: Duration) -> Option<Self> {
        let mut seconds = self
            .seconds
            .checked_sub(i64::try_from(by.as_secs()).ok()?)?;
        let mut nanos = self.nanos;
        if nanos < by.subsec_nanos() {
            seconds = seconds.checked_sub(1)?;
            nanos += NANOS;
        }
        nanos -= by.subsec_nanos();
        Some(StepTime { seconds, nanos }).filter(StepTime::in_range)
    }

    fn in_range(&self) -> bool {
        (DateTime::<Utc>::MIN_UTC.timestamp()..=DateTime::<Utc>::MAX_UTC.timestamp())
            .contains(&self.seconds)
    }
}

thread_local! {
    static STEP: RefCell<Option<Step>> = const { RefCell::new(None) };
}

/// Sets the step context until dropped.
pub(crate) struct StepScope(());

impl StepScope {
    /// Enters step `seq` of `agent`, taken at `at`.
    pub(crate) fn enter(agent: Arc<str>, seq: u64, at: StepTime) -> Self {
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
    STEP.with(|step| step.borrow().as_ref().map(|step| step.at.to_datetime()))
}

/// A deterministic id inside a journaled step, else a fresh UUIDv7.
pub(crate) fn fresh_id() -> String {
    next_id().unwrap_or_else(|| uuid::Uuid::now_v7().to_string())
}

/// The step's time inside a journaled step, else the wall clock.
pub(crate) fn now() -> DateTime<Utc> {
    step_time().unwrap_or_else(Utc::now)
}
