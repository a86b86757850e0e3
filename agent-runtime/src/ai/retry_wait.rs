//! How long to wait before retrying a model call: exponential backoff with full jitter, never
//! shorter than the server asked (`retry-after-ms`, `Retry-After` as seconds or an HTTP date),
//! never longer than the cap.
//!
//! Full jitter (a uniform draw between zero and the exponential ceiling) spreads the retries
//! of many agents that failed together, which a fixed doubling would send back in lockstep.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::instruction::ExecOptions;

/// The wait before retry number `retry` (0 for the first), given what the server asked for
/// and a uniform `random` draw.
pub(crate) fn wait_before_retry(
    options: &ExecOptions,
    retry: u32,
    asked: Option<Duration>,
    random: u64,
) -> Duration {
    let ceiling = options.backoff_for(retry);
    let jittered = ceiling.mul_f64(random as f64 / u64::MAX as f64);
    asked
        .map_or(jittered, |asked| asked.max(jittered))
        .min(options.backoff_cap)
}

/// A uniform draw from the standard library's per-process random hash keys (no extra crate).
pub(crate) fn random_draw() -> u64 {
    // Inside a journaled step the draw is a function of the step, so a replay draws the same.
    if let Some(id) = crate::journal::context::next_id() {
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write(id.as_bytes());
        return hasher.finish();
    }
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// What the server asked for: `retry-after-ms` (OpenAI, Azure) first, then `Retry-After` as
/// delay-seconds or as an HTTP date (IMF-fixdate, RFC 850 or asctime, as RFC 9110 requires
/// recipients to accept). A date in the past asks for no wait.
pub(crate) fn server_asked(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: DateTime<Utc>,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = retry_after?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = http_date(value)?;
    Some((date - now).to_std().unwrap_or(Duration::ZERO))
}

fn http_date(value: &str) -> Option<DateTime<Utc>> {
    if let Ok(date) = DateTime::parse_from_rfc2822(value) {
        return Some(date.with_timezone(&Utc));
    }
    ["%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(value, format).ok())
        .map(|naive| naive.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(backoff_ms: u64, cap_ms: u64) -> ExecOptions {
        ExecOptions {
            timeout: Duration::from_secs(1),
            max_retries: 5,
            backoff: Duration::from_millis(backoff_ms),
            backoff_cap: Duration::from_millis(cap_ms),
        }
    }

    #[test]
    fn full_jitter_spans_zero_to_the_exponential_ceiling() {
        let o = options(100, 10_000);
        assert_eq!(wait_before_retry(&o, 0, None, 0), Duration::ZERO);
        assert_eq!(
            wait_before_retry(&o, 0, None, u64::MAX),
            Duration::from_millis(100)
        );
        assert_eq!(
            wait_before_retry(&o, 3, None, u64::MAX),
            Duration::from_millis(800)
        );
        let half = wait_before_retry(&o, 3, None, u64::MAX / 2);
        assert!(half > Duration::from_millis(399) && half < Duration::from_millis(401));
        assert_eq!(
            wait_before_retry(&o, 30, None, u64::MAX),
            Duration::from_secs(10),
            "the ceiling stops at the cap"
        );
    }

    #[test]
    fn the_server_sets_a_floor_and_the_cap_still_holds() {
        let o = options(100, 5_000);
        assert_eq!(
            wait_before_retry(&o, 0, Some(Duration::from_secs(2)), 0),
            Duration::from_secs(2)
        );
        assert_eq!(
            wait_before_retry(&o, 0, Some(Duration::from_secs(3600)), 0),
            Duration::from_secs(5)
        );
        assert_eq!(
            wait_before_retry(&o, 0, Some(Duration::ZERO), u64::MAX),
            Duration::from_millis(100),
            "a zero ask does not shorten the backoff"
        );
    }

    #[test]
    fn retry_after_in_every_form() {
        let now = DateTime::parse_from_rfc3339("1994-11-06T08:49:30Z")
            .unwrap()
            .with_timezone(&Utc);
        let seven = Some(Duration::from_secs(7));
        assert_eq!(server_asked(None, Some("7"), now), seven);
        assert_eq!(server_asked(None, Some(" 7 "), now), seven);
        assert_eq!(
            server_asked(None, Some("Sun, 06 Nov 1994 08:49:37 GMT"), now),
            seven
        );
        assert_eq!(
            server_asked(None, Some("Sunday, 06-Nov-94 08:49:37 GMT"), now),
            seven
        );
        assert_eq!(
            server_asked(None, Some("Sun Nov  6 08:49:37 1994"), now),
            seven
        );
        assert_eq!(
            server_asked(None, Some("Sun, 06 Nov 1994 08:00:00 GMT"), now),
            Some(Duration::ZERO),
            "a date in the past"
        );
        assert_eq!(
            server_asked(Some("1500"), Some("7"), now),
            Some(Duration::from_millis(1500)),
            "retry-after-ms wins"
        );
        assert_eq!(
            server_asked(Some("12.5"), None, now),
            Some(Duration::from_micros(12_500))
        );
        assert_eq!(server_asked(Some("soon"), Some("7"), now), seven);
        assert_eq!(server_asked(Some("-1"), None, now), None);
        assert_eq!(server_asked(None, Some("tomorrow"), now), None);
        assert_eq!(server_asked(None, Some("-3"), now), None);
        assert_eq!(server_asked(None, None, now), None);
    }

    #[test]
    fn draws_differ() {
        let draws: std::collections::BTreeSet<u64> = (0..16).map(|_| random_draw()).collect();
        assert!(draws.len() > 1);
    }
}
