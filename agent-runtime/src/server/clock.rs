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

fn anchor() -> (Instant, DateTime<Utc>) {
    static ANCHOR: OnceLock<(std::time::Instant, DateTime<Utc>)> = OnceLock::new();
    let (instant, wall) = *ANCHOR.get_or_init(|| (std::time::Instant::now(), Utc::now()));
    (Instant::from_std(instant), wall)
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
}
