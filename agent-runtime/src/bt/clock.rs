//! Where trees get the time: the host's clock, or a manual one in tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A source of time for ticks. Readings are durations since an origin the clock picks; only
/// differences matter to the tree, and they must never go backwards.
pub trait Clock {
    /// The current time.
    fn now(&self) -> Duration;
}

/// The host's clock: tokio's monotonic clock mapped onto the wall clock (milliseconds since the
/// Unix epoch), as the agent server uses for its timers. It follows tokio's paused clock in tests
/// and, being wall-clock based, keeps a checkpointed timer meaningful after a restart.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostClock;

impl Clock for HostClock {
    fn now(&self) -> Duration {
        // Inside a journaled step, the time the step was taken at (a replay reads the same).
        let wall = crate::journal::context::step_time().unwrap_or_else(crate::server::clock::now);
        Duration::from_millis(u64::try_from(wall.timestamp_millis()).unwrap_or(0))
    }
}

/// A clock that moves only when told to; clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use agent_runtime::bt::{Clock, ManualClock};
/// let clock = ManualClock::new();
/// let seen_by_tree = clock.clone();
/// clock.advance(Duration::from_millis(250));
/// assert_eq!(seen_by_tree.now(), Duration::from_millis(250));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        ManualClock::default()
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(millis(by), Ordering::SeqCst);
    }

    /// Sets the clock; a time earlier than the current one is ignored (clocks never go back).
    pub fn set(&self, to: Duration) {
        self.0.fetch_max(millis(to), Ordering::SeqCst);
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_millis(self.0.load(Ordering::SeqCst))
    }
}
