//! How many steps of one agent reach the page: a token bucket. A page cannot show 100,000 steps
//! a second, and serializing each would cost the agent more than the step itself; bursts up to
//! the bucket's size pass whole, beyond that the steps in between are coalesced into the next
//! one shown (which says how many it stands for).

use std::time::Duration;

use tokio::time::Instant;

/// A token bucket refilled at `rate` steps a second, holding at most `rate` (one second's
/// worth, so short bursts are shown step by step).
#[derive(Debug)]
pub(crate) struct Pace {
    tokens: u32,
    capacity: u32,
    period: Duration,
    refilled: Instant,
}

impl Pace {
    /// A full bucket; `rate` 0 means no limit.
    pub(crate) fn new(rate: u32) -> Self {
        Pace {
            tokens: rate,
            capacity: rate,
            period: Duration::from_secs(1)
                .checked_div(rate)
                .unwrap_or(Duration::ZERO),
            refilled: Instant::now(),
        }
    }

    /// Takes a token when there is one: the step may be shown now. The clock is read only
    /// when the bucket is empty.
    pub(crate) fn take(&mut self) -> bool {
        if self.capacity == 0 {
            return true;
        }
        if self.tokens == 0 {
            self.refill();
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    /// When the next token arrives.
    pub(crate) fn next_token(&self) -> Instant {
        self.refilled + self.period
    }

    fn refill(&mut self) {
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(self.refilled);
        let earned = elapsed.as_nanos() / self.period.as_nanos().max(1);
        if earned == 0 {
            return;
        }
        let earned = u32::try_from(earned).unwrap_or(u32::MAX);
        self.tokens = self.capacity.min(self.tokens.saturating_add(earned));
        // Time not yet worth a token carries over; a full bucket drops it.
        self.refilled = if self.tokens == self.capacity {
            now
        } else {
            self.refilled + self.period * earned
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_whole_then_steps_pass_at_the_rate() {
        let mut pace = Pace::new(4);
        assert!((0..4).all(|_| pace.take()), "a burst up to the rate passes");
        assert!(!pace.take(), "then the bucket is empty");
        assert_eq!(
            pace.next_token(),
            Instant::now() + Duration::from_millis(250)
        );
        tokio::time::advance(Duration::from_millis(260)).await;
        assert!(pace.take());
        assert!(!pace.take(), "one token in 260 ms");
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(
            (0..10).filter(|_| pace.take()).count(),
            4,
            "never above the capacity"
        );
    }

    #[test]
    fn rate_zero_means_no_limit() {
        let mut pace = Pace::new(0);
        assert!((0..10_000).all(|_| pace.take()));
    }
}
