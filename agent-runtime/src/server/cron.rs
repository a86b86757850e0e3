//! Cron jobs: expressions parsed by `croner`, firings mapped onto the server's clock.

use chrono::{DateTime, SubsecRound, Utc};
use croner::Cron;

use super::timers::TimerKey;
use crate::signal::Signal;

/// A cron job of one agent.
#[derive(Debug)]
pub(crate) struct CronJob {
    pub(crate) expression: String,
    pub(crate) signal: Signal,
    schedule: Cron,
    /// The occurrence the armed timer stands for.
    pub(crate) next: DateTime<Utc>,
    pub(crate) timer: Option<TimerKey>,
}

impl CronJob {
    /// Parses `expression` (five fields, or six with seconds first) and finds its first
    /// occurrence after `now`.
    pub(crate) fn new(
        expression: &str,
        signal: Signal,
        now: DateTime<Utc>,
    ) -> Result<CronJob, String> {
        let schedule = Cron::new(expression)
            .with_seconds_optional()
            .parse()
            .map_err(|e| {
                format!(
                    "invalid cron expression `{expression}`: {e}; write five fields (minute hour day month weekday, e.g. `*/5 * * * *`) or six with seconds first (`*/10 * * * * *`)"
                )
            })?;
        let next = next_after(&schedule, expression, now)?;
        Ok(CronJob {
            expression: expression.to_string(),
            signal,
            schedule,
            next,
            timer: None,
        })
    }

    /// Moves to the first occurrence after both the current one and `now`, so a late firing
    /// skips the occurrences it missed instead of firing them in a burst.
    pub(crate) fn advance(&mut self, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
        self.next = next_after(&self.schedule, &self.expression, self.next.max(now))?;
        Ok(self.next)
    }
}

fn next_after(
    schedule: &Cron,
    expression: &str,
    after: DateTime<Utc>,
) -> Result<DateTime<Utc>, String> {
    // Cron has one-second resolution; `after` itself never fires again.
    schedule
        .find_next_occurrence(&after.trunc_subsecs(0), false)
        .map_err(|e| format!("cron expression `{expression}` has no occurrence after {after}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn occurrences_follow_the_expression() {
        let signal = Signal::new("a", json!(null));
        let mut job = CronJob::new("*/10 * * * * *", signal, at("2026-01-01T00:00:03.5Z")).unwrap();
        assert_eq!(job.next, at("2026-01-01T00:00:10Z"));
        assert_eq!(
            job.advance(at("2026-01-01T00:00:10Z")).unwrap(),
            at("2026-01-01T00:00:20Z")
        );
        // Late by a minute: the missed occurrences are skipped.
        assert_eq!(
            job.advance(at("2026-01-01T00:01:25Z")).unwrap(),
            at("2026-01-01T00:01:30Z")
        );
        let hourly = CronJob::new(
            "0 * * * *",
            Signal::new("b", json!(null)),
            at("2026-01-01T10:59:59Z"),
        );
        assert_eq!(hourly.unwrap().next, at("2026-01-01T11:00:00Z"));
    }

    #[test]
    fn bad_expressions_are_explained() {
        let err = CronJob::new("every day", Signal::new("a", json!(null)), Utc::now()).unwrap_err();
        assert!(
            err.starts_with("invalid cron expression `every day`"),
            "{err}"
        );
        assert!(err.contains("five fields"), "{err}");
    }
}
