//! The in-process runner: executes `RunInstruction` directives without a server.

use futures::FutureExt;
use futures::future::{AbortHandle, Abortable, Aborted, join_all};
use futures::stream::{FuturesUnordered, StreamExt};

use crate::agent::{Agent, AgentSpec, Command};
use crate::directive::Directive;
use crate::exec::execute;
use crate::instruction::{ExecOptions, Instruction};
use crate::signal::Signal;

/// Runs an agent in the current task, for tests and simple programs.
///
/// After each `cmd` it executes the `RunInstruction` directives (concurrently, with their
/// execution policy), feeds each outcome back through `cmd` as it arrives, and repeats until no
/// async action is in flight; a `CancelInstruction` aborts the action it names. Every other
/// directive is returned, in the order produced, for the caller to act on or inspect.
///
/// ```
/// # use agent_runtime::*;
/// # async fn demo<S: AgentSpec>(agent: &mut Agent<S>) {
/// let directives = Runner::new().run(agent, Instruction::new("fetch", serde_json::json!({}))).await;
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Runner {
    _private: (),
}

impl Runner {
    /// A runner.
    pub fn new() -> Self {
        Runner::default()
    }

    /// Runs a command and settles every async action it starts.
    pub async fn run<S, C>(&self, agent: &mut Agent<S>, command: C) -> Vec<Directive>
    where
        S: AgentSpec,
        C: Command<S, Output = Vec<Directive>>,
    {
        let directives = agent.cmd(command);
        self.settle(agent, directives).await
    }

    /// Routes a signal and settles every async action it starts.
    pub async fn signal<S: AgentSpec>(
        &self,
        agent: &mut Agent<S>,
        signal: &Signal,
    ) -> Vec<Directive> {
        let directives = agent.handle_signal(signal);
        self.settle(agent, directives).await
    }

    /// Executes the `RunInstruction` directives among `directives` until the agent starts no
    /// more; returns the rest.
    ///
    /// Completions are fed back as they arrive (those that finish at the same moment together,
    /// in the order their directives came), so what the agent does with one can cancel another:
    /// a `CancelInstruction` drops that action's future, which stops its work, and its
    /// completion never reaches the agent. `CancelInstruction`s are executed, not returned.
    pub async fn settle<S: AgentSpec>(
        &self,
        agent: &mut Agent<S>,
        directives: impl Into<Vec<Directive>>,
    ) -> Vec<Directive> {
        let directives = directives.into();
        let mut out = Vec::new();
        let mut running = FuturesUnordered::new();
        // The abort handle of each running instruction, by id, in start order.
        let mut handles: Vec<(String, AbortHandle)> = Vec::new();
        let mut started = 0u64;
        let mut pending = directives;
        loop {
            for directive in pending.drain(..) {
                match directive {
                    Directive::RunInstruction { instruction, exec } => {
                        let (handle, registration) = AbortHandle::new_pair();
                        handles.push((instruction.id.clone(), handle));
                        started += 1;
                        let order = started;
                        let state = agent.state().clone();
                        running.push(Abortable::new(
                            async move {
                                let outcome = execute::<S>(state, instruction.clone(), exec).await;
                                (order, Instruction::completed(&instruction, outcome))
                            },
                            registration,
                        ));
                    }
                    Directive::CancelInstruction { id } => {
                        if let Some(pos) = handles.iter().position(|(h, _)| *h == id) {
                            handles.remove(pos).1.abort();
                        }
                    }
                    other => out.push(other),
                }
            }
            // Wait for the next completion, then take every other one ready at this moment.
            let mut done = Vec::new();
            match running.next().await {
                None => return out,
                Some(Ok(completion)) => done.push(completion),
                Some(Err(Aborted)) => {}
            }
            while let Some(Some(next)) = running.next().now_or_never() {
                if let Ok(completion) = next {
                    done.push(completion);
                }
            }
            if done.is_empty() {
                continue;
            }
            done.sort_unstable_by_key(|(order, _)| *order);
            handles.retain(|(id, _)| !done.iter().any(|(_, c)| c.id == *id));
            pending = agent.cmd(done.into_iter().map(|(_, c)| c).collect::<Vec<_>>());
        }
    }
}

/// Runs async actions concurrently on one copy of the agent's state, each with its execution
/// policy; their completions come back in the order given, ready for `cmd`. Shared by
/// [`Runner`] and the AI runner, so both hosts settle async work the same way.
pub(crate) async fn run_async_actions<S: AgentSpec>(
    agent: &Agent<S>,
    runs: Vec<(Instruction, ExecOptions)>,
) -> Vec<Instruction> {
    let snapshot = agent.state().clone();
    join_all(runs.into_iter().map(|(instruction, exec)| {
        let state = snapshot.clone();
        async move {
            let outcome = execute::<S>(state, instruction.clone(), exec).await;
            Instruction::completed(&instruction, outcome)
        }
    }))
    .await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use tokio::time::Instant;

    use super::*;
    use crate::error::{ActionErrorKind, AgentError};
    use crate::instruction::ExecOptions;
    use crate::testing::{Counter, attempts};

    fn fetch(key: &str, params: serde_json::Value, exec: ExecOptions) -> Instruction {
        let mut p = params;
        p["key"] = json!(key);
        Instruction::new("fetch", p).with_exec(exec)
    }

    #[tokio::test(start_paused = true)]
    async fn an_async_result_is_applied() {
        let mut agent = Counter::new();
        let out = Runner::new()
            .run(
                &mut agent,
                fetch("applied", json!({"sleep_ms": 40}), ExecOptions::DEFAULT),
            )
            .await;
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(agent.state().value, 1);
        assert_eq!(agent.snapshot().status, crate::Status::Idle);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_action_times_out() {
        let mut agent = Counter::new();
        let exec = ExecOptions {
            timeout: Duration::from_secs(1),
            max_retries: 0,
            ..ExecOptions::DEFAULT
        };
        let start = Instant::now();
        let out = Runner::new()
            .run(&mut agent, fetch("slow", json!({"sleep_ms": 60_000}), exec))
            .await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        let Some(AgentError::Action { error, .. }) = out[0].as_error() else {
            panic!("{out:?}")
        };
        assert_eq!(error.kind(), ActionErrorKind::Timeout);
        assert_eq!(agent.state().value, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn retryable_errors_are_retried_with_backoff() {
        let mut agent = Counter::new();
        let exec = ExecOptions {
            max_retries: 2,
            ..ExecOptions::DEFAULT
        };
        let start = Instant::now();
        let out = Runner::new()
            .run(
                &mut agent,
                fetch("flaky", json!({"failures": 2, "retryable": true}), exec),
            )
            .await;
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(attempts("flaky"), 3);
        assert_eq!(
            agent.state().value,
            3,
            "the third attempt's outcome was applied"
        );
        assert_eq!(start.elapsed(), Duration::from_millis(250 + 500));
    }

    #[tokio::test(start_paused = true)]
    async fn non_retryable_errors_are_not_retried() {
        let mut agent = Counter::new();
        let exec = ExecOptions {
            max_retries: 5,
            ..ExecOptions::DEFAULT
        };
        let out = Runner::new()
            .run(&mut agent, fetch("strict", json!({"failures": 1}), exec))
            .await;
        assert_eq!(attempts("strict"), 1);
        let Some(AgentError::Action { error, .. }) = out[0].as_error() else {
            panic!("{out:?}")
        };
        assert_eq!(error.message(), "attempt 1 failed");
        assert_eq!(agent.state().value, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn async_actions_of_one_batch_run_concurrently() {
        let mut agent = Counter::new();
        let start = Instant::now();
        let out = Runner::new()
            .run(
                &mut agent,
                vec![
                    fetch("par-a", json!({"sleep_ms": 1000}), ExecOptions::DEFAULT),
                    fetch("par-b", json!({"sleep_ms": 1000}), ExecOptions::DEFAULT),
                ],
            )
            .await;
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        assert!(agent.strategy_state().in_flight.is_empty());
    }
}
