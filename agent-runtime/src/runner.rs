//! The in-process runner: executes `RunInstruction` directives without a server.

use futures::future::join_all;

use crate::agent::{Agent, AgentSpec, Command};
use crate::directive::Directive;
use crate::exec::execute;
use crate::instruction::Instruction;
use crate::signal::Signal;

/// Runs an agent in the current task, for tests and simple programs.
///
/// After each `cmd` it executes the `RunInstruction` directives (concurrently, with their
/// execution policy), feeds the outcomes back through `cmd` in directive order, and repeats
/// until no async action is in flight. Every other directive is returned, in the order produced,
/// for the caller to act on or inspect.
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
    pub async fn settle<S: AgentSpec>(
        &self,
        agent: &mut Agent<S>,
        directives: Vec<Directive>,
    ) -> Vec<Directive> {
        let mut out = Vec::new();
        let mut pending = directives;
        loop {
            let mut runs = Vec::new();
            for directive in pending.drain(..) {
                match directive {
                    Directive::RunInstruction { instruction, exec } => {
                        runs.push((instruction, exec))
                    }
                    other => out.push(other),
                }
            }
            if runs.is_empty() {
                return out;
            }
            let snapshot = agent.state().clone();
            let results = join_all(runs.into_iter().map(|(instruction, exec)| {
                let state = snapshot.clone();
                async move {
                    let outcome = execute::<S>(state, instruction.clone(), exec).await;
                    Instruction::completed(&instruction, outcome)
                }
            }))
            .await;
            pending = agent.cmd(results);
        }
    }
}
