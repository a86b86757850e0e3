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

/// The step being taken on this thread. It stays after the step, inactive, so that the next
/// step of the same agent reuses it without touching the id's reference count.
struct Step {
    agent: Arc<str>,
    active: bool,
    seq: u64,
    /// The step's time: given (a replay), or read from the clock when first asked for (a live
    /// step: most never ask, and a clock read is not free).
    at: Option<StepTime>,
    /// Whether `at` was read from the clock during the step (the journal records it).
    read: bool,
    /// The time the last live step read, until the journal takes it.
    handed: Option<StepTime>,
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
    /// Enters step `seq` of `agent`, taken at `at` (a replay gives the recorded time).
    pub(crate) fn enter(agent: &Arc<str>, seq: u64, at: StepTime) -> Self {
        Self::set(agent, seq, Some(at))
    }

    /// Enters live step `seq` of `agent`: the clock is read if the strategy asks for the time,
    /// and that reading is then [`take_time_read`]'s.
    pub(crate) fn enter_live(agent: &Arc<str>, seq: u64) -> Self {
        Self::set(agent, seq, None)
    }

    fn set(agent: &Arc<str>, seq: u64, at: Option<StepTime>) -> Self {
        STEP.with(|step| {
            let mut step = step.borrow_mut();
            match &mut *step {
                Some(step) if Arc::ptr_eq(&step.agent, agent) => {
                    step.active = true;
                    step.seq = seq;
                    step.at = at;
                    step.read = false;
                    step.handed = None;
                    step.next = 0;
                }
                other => {
                    *other = Some(Step {
                        agent: agent.clone(),
                        active: true,
                        seq,
                        at,
                        read: false,
                        handed: None,
                        next: 0,
                    });
                }
            }
        });
        StepScope(())
    }
}

impl Drop for StepScope {
    fn drop(&mut self) {
        STEP.with(|step| {
            if let Some(step) = step.borrow_mut().as_mut() {
                step.active = false;
                if step.read {
                    step.handed = step.at;
                }
            }
        });
    }
}

/// The step being taken on this thread, if any.
fn with_step<T>(f: impl FnOnce(&mut Step) -> T) -> Option<T> {
    STEP.with(|step| step.borrow_mut().as_mut().filter(|step| step.active).map(f))
}

/// The time the live step that ended last read from the clock, if it read one.
pub(crate) fn take_time_read() -> Option<StepTime> {
    STEP.with(|step| step.borrow_mut().as_mut()?.handed.take())
}

/// The next deterministic id of the current step, `{agent}/{step}/{index}`, when inside one.
pub(crate) fn next_id() -> Option<String> {
    with_step(|step| {
        let index = step.next;
        step.next += 1;
        format!("{}/{}/{index}", step.agent, step.seq)
    })
}

/// The time of the current step, when inside one.
pub(crate) fn step_time() -> Option<DateTime<Utc>> {
    with_step(|step| {
        let at = match step.at {
            Some(at) => at,
            None => {
                step.read = true;
                *step.at.insert(crate::server::clock::now_parts())
            }
        };
        at.to_datetime()
    })
}

/// A deterministic id inside a journaled step, else a fresh UUIDv7.
pub(crate) fn fresh_id() -> String {
    next_id().unwrap_or_else(|| uuid::Uuid::now_v7().to_string())
}

/// The step's time inside a journaled step, else the wall clock.
pub(crate) fn now() -> DateTime<Utc> {
    step_time().unwrap_or_else(Utc::now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_step_reads_the_clock_only_when_asked_and_hands_the_reading_to_the_journal() {
        let agent: Arc<str> = "a".into();
        drop(StepScope::enter_live(&agent, 1));
        assert_eq!(take_time_read(), None, "no time asked for, none read");
        let scope = StepScope::enter_live(&agent, 2);
        let first = step_time().unwrap();
        assert_eq!(step_time(), Some(first), "one reading per step");
        drop(scope);
        assert_eq!(take_time_read(), Some(StepTime::of(&first)));
        assert_eq!(take_time_read(), None);
        // A replayed step is given its time: nothing is read or handed on.
        let recorded = StepTime::of(&DateTime::from_timestamp(1_790_000_000, 7).unwrap());
        let scope = StepScope::enter(&agent, 3, recorded);
        assert_eq!(step_time(), Some(recorded.to_datetime()));
        drop(scope);
        assert_eq!(take_time_read(), None);
        assert_eq!(step_time(), None, "outside a step");
    }
}
