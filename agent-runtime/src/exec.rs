//! Running async actions with the execution policy: timeout per attempt, retries of retryable
//! errors with doubling backoff, panics caught. Used by the in-process runner and the server.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use crate::action::{ActionFn, Outcome};
use crate::agent::AgentSpec;
use crate::error::ActionError;
use crate::instruction::{ExecOptions, Instruction};

/// Runs `attempt` under `exec`: each attempt gets `exec.timeout`; a retryable failure (timeouts
/// are retryable) is retried up to `exec.max_retries` times after `exec.backoff_for(n)`; a panic
/// is a non-retryable failure. `attempt` receives the 0-based attempt number.
///
/// Time is tokio's, so tests drive it with a paused clock.
pub async fn with_policy<T, F, Fut>(
    name: &str,
    exec: &ExecOptions,
    mut attempt: F,
) -> Result<T, ActionError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, ActionError>>,
{
    let mut retry = 0;
    loop {
        let run = AssertUnwindSafe(attempt(retry)).catch_unwind();
        let result = match tokio::time::timeout(exec.timeout, run).await {
            Err(_elapsed) => Err(ActionError::timeout(name, exec.timeout)),
            Ok(Err(payload)) => Err(ActionError::panicked(name, payload.as_ref())),
            Ok(Ok(result)) => result,
        };
        match result {
            Err(e) if e.is_retryable() && retry < exec.max_retries => {
                let wait = exec.backoff_for(retry);
                tracing::debug!(action = name, retry, ?wait, error = %e, "retrying");
                tokio::time::sleep(wait).await;
                retry += 1;
            }
            other => return other,
        }
    }
}

/// Runs the async action `instruction` names on a snapshot of an agent's state, under `exec`.
///
/// Each attempt starts from the same snapshot. An unknown or synchronous action is an error (a
/// strategy only issues `RunInstruction` for async actions).
pub async fn execute<S: AgentSpec>(
    state: S,
    instruction: Instruction,
    exec: ExecOptions,
) -> Result<Outcome, ActionError> {
    let name = instruction.action.as_str();
    let Some(entry) = S::action(name) else {
        return Err(ActionError::new(format!(
            "agent `{}` has no action `{name}`",
            S::NAME
        )));
    };
    let ActionFn::Async(run) = entry.run else {
        return Err(ActionError::new(format!(
            "`{name}` is synchronous; it runs inside `cmd`, not in the host"
        )));
    };
    with_policy(name, &exec, |_| {
        run(state.clone(), instruction.params.clone())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ActionErrorKind;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;
    use tokio::time::Instant;

    fn opts(max_retries: u32) -> ExecOptions {
        ExecOptions {
            max_retries,
            ..ExecOptions::DEFAULT
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retryable_errors_are_retried_with_doubling_backoff() {
        let calls = Arc::new(std::sync::Mutex::new(Vec::new()));
        let start = Instant::now();
        let seen = calls.clone();
        let result: Result<u32, _> = with_policy("flaky", &opts(3), move |n| {
            seen.lock().unwrap().push(start.elapsed());
            async move {
                if n < 3 {
                    Err(ActionError::retryable("busy"))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(result, Ok(3));
        assert_eq!(
            *calls.lock().unwrap(),
            [
                Duration::ZERO,
                Duration::from_millis(250),
                Duration::from_millis(750),
                Duration::from_millis(1750),
            ],
            "waits of 250, 500 and 1000 ms between attempts"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn non_retryable_errors_are_not_retried() {
        let count = AtomicU32::new(0);
        let result: Result<(), _> = with_policy("strict", &opts(5), |_| {
            count.fetch_add(1, Ordering::SeqCst);
            async { Err(ActionError::new("declined")) }
        })
        .await;
        assert_eq!(result.unwrap_err().message(), "declined");
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn retries_stop_at_max_retries() {
        let count = AtomicU32::new(0);
        let result: Result<(), _> = with_policy("down", &ExecOptions::DEFAULT, |_| {
            count.fetch_add(1, Ordering::SeqCst);
            async { Err(ActionError::retryable("still down")) }
        })
        .await;
        assert!(result.unwrap_err().is_retryable());
        assert_eq!(
            count.load(Ordering::SeqCst),
            2,
            "one attempt plus one retry"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_attempt_times_out_and_is_retried() {
        let start = Instant::now();
        let count = AtomicU32::new(0);
        let exec = ExecOptions {
            timeout: Duration::from_secs(5),
            ..ExecOptions::DEFAULT
        };
        let result: Result<(), _> = with_policy("slow", &exec, |_| {
            count.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(())
            }
        })
        .await;
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ActionErrorKind::Timeout);
        assert_eq!(count.load(Ordering::SeqCst), 2);
        assert_eq!(start.elapsed(), Duration::from_millis(10_250));
    }

    #[tokio::test]
    async fn a_panicking_attempt_is_a_failure() {
        let result: Result<(), _> = with_policy("explode", &opts(3), |_| async {
            panic!("kaboom");
        })
        .await;
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ActionErrorKind::Panicked);
        assert!(!err.is_retryable());
    }
}
