//! The server's clock: tokio's monotonic time, anchored to the wall clock once per process.
//!
//! Timers run on tokio's clock, cron expressions and checkpoints speak wall-clock time. Mapping
//! one onto the other through a single anchor keeps them consistent: under a paused tokio clock
//! (tests) cron jobs and hibernated timers move with virtual time, and in production the mapping
//! equals the wall clock up to the drift accumulated since the process started.

use std::sync::OnceLock;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use crate::journal::context::StepTime;

struct Anchor {
    instant: std::time::Instant,
    wall: DateTime<Utc>,
    /// `wall` as seconds and nanoseconds since the epoch.
    wall_parts: StepTime,
}

fn the_anchor() -> &'static Anchor {
    static ANCHOR: OnceLock<Anchor> = OnceLock::new();
    ANCHOR.get_or_init(|| {
        let wall = Utc::now();
        Anchor {
            instant: std::time::Instant::now(),
            wall,
            wall_parts: StepTime::of(&wall),
        }
    })
}

fn anchor() -> (Instant, DateTime<Utc>) {
    let anchor = the_anchor();
    (Instant::from_std(anchor.instant), anchor.wall)
}

/// The wall-clock time of a tokio instant.
pub(crate) fn to_wall(at: Instant) -> DateTime<Utc> {
    let (base, wall) = anchor();
    let signed = match at.checked_duration_since(base) {
        Some(ahead) => chrono::Duration::from_std(ahead).unwrap_or(chrono::Duration::MAX),
        None => -chrono::Duration::from_std(base - at).unwrap_or(chrono::Duration::MAX),
    };
    wall.checked_add_signed(signed).unwrap_or(wall)
}

/// Now, on the wall clock.
pub(crate) fn now() -> DateTime<Utc> {
    to_wall(Instant::now())
}

/// Now, on the wall clock, as seconds and nanoseconds: what [`now`] reads, without building a
/// chrono time (a journaled step reads the clock every time, and rarely needs one).
pub(crate) fn now_parts() -> StepTime {
    let anchor = the_anchor();
    let base = Instant::from_std(anchor.instant);
    let at = Instant::now();
    let wall = anchor.wall_parts;
    let moved = match at.checked_duration_since(base) {
        Some(ahead) => wall.plus(ahead),
        None => wall.minus(base - at),
    };
    // As `to_wall`, a reading too far off for the calendar is the anchor.
    moved.unwrap_or(wall)
}

/// The tokio instant of a wall-clock time; a time in the past is now.
pub(crate) fn to_instant(at: DateTime<Utc>) -> Instant {
    let now = Instant::now();
    let ahead = (at - to_wall(now)).to_std().unwrap_or(Duration::ZERO);
    now.checked_add(ahead)
        .unwrap_or(now + Duration::from_secs(86_400 * 365 * 30))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn wall_time_follows_tokio_time() {
        let before = now();
        tokio::time::advance(Duration::from_secs(90)).await;
        let after = now();
        assert_eq!((after - before).num_seconds(), 90);
        let due = after + chrono::Duration::seconds(30);
        assert_eq!(to_instant(due) - Instant::now(), Duration::from_secs(30));
        assert_eq!(to_instant(before), Instant::now(), "the past is now");
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_read_as_parts_is_the_chrono_reading() {
        for step in [0, 1, 999_999_999, 1_000_000_000, 86_400_123_456_789] {
            tokio::time::advance(Duration::from_nanos(step)).await;
            assert_eq!(now_parts().to_datetime(), now());
        }
        // Before the anchor (a paused clock starts wherever the runtime did).
        let past = Instant::now() - Duration::from_secs(10);
        let (base, _) = anchor();
        if past < base {
            let parts = the_anchor()
                .wall_parts
                .minus(base - past)
                .unwrap()
                .to_datetime();
            assert_eq!(parts, to_wall(past));
        }
    }
}
