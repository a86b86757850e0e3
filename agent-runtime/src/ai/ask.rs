//! The in-process host for AI agents: `agent.ask(&runner, "...")` runs one request to its end
//! without a server, calling the model and the async tools, for programs and tests.

use std::fmt;
use std::sync::Arc;

use futures::future::join_all;
use serde_json::json;

use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::instruction::Instruction;
use crate::runner::run_async_actions;

use super::machine::{LlmReply, QUERY};
use super::model::{EmbeddingRequest, Embeddings, LlmDelta, LlmError, collect_stream};
use super::models::{ModelTable, UnknownAlias};
use super::spec::AiAgent;
use super::state::{AiResult, EmbedReply, LlmCall, Phase};
use super::strategies::AiStrategy;

type DeltaFn = dyn Fn(&LlmCall, &LlmDelta) + Send + Sync;

/// Runs AI agents in the current task: executes their `Llm` directives through a
/// [`ModelTable`] and their async tools with their execution policy, feeding every result back
/// through `cmd` until the request ends.
#[derive(Clone)]
pub struct AiRunner {
    models: ModelTable,
    on_delta: Option<Arc<DeltaFn>>,
}

impl fmt::Debug for AiRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AiRunner")
            .field("models", &self.models)
            .field("streaming", &self.on_delta.is_some())
            .finish()
    }
}

/// A finished request.
#[derive(Debug, Clone)]
pub struct AiAnswer {
    /// How it ended: reason, answer, reasoning, steps, usage.
    pub result: AiResult,
    /// The other directives the agent produced meanwhile (signals, errors), in order.
    pub directives: Vec<Directive>,
}

impl AiAnswer {
    /// The answer text, if the request produced one.
    pub fn answer(&self) -> Option<&str> {
        self.result.answer.as_deref()
    }
}

/// Why [`Agent::ask`] returned no answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The agent's model alias is not in the runner's table.
    #[error(transparent)]
    UnknownModel(#[from] UnknownAlias),
    /// The agent refused the request (it was busy).
    #[error("{message}")]
    Refused {
        /// Why.
        message: String,
    },
    /// The request failed (the model call failed and no `on_error` fallback answered), or
    /// was cancelled.
    #[error("{}", result.error.as_deref().unwrap_or("the request failed"))]
    Failed {
        /// The request's end, with its error.
        result: Box<AiResult>,
        /// The other directives the agent produced.
        directives: Vec<Directive>,
    },
}

impl AiRunner {
    /// A runner that resolves model aliases through `models`.
    pub fn new(models: ModelTable) -> Self {
        AiRunner {
            models,
            on_delta: None,
        }
    }

    /// Streams model answers and hands every delta to `f` (with the call it belongs to).
    #[must_use]
    pub fn on_delta(mut self, f: impl Fn(&LlmCall, &LlmDelta) + Send + Sync + 'static) -> Self {
        self.on_delta = Some(Arc::new(f));
        self
    }

    /// The model table.
    pub fn models(&self) -> &ModelTable {
        &self.models
    }

    /// Asks the agent: starts a request with `query` and runs it to its end.
    pub async fn ask<S>(&self, agent: &mut Agent<S>, query: &str) -> Result<AiAnswer, AskError>
    where
        S: AiAgent,
        S::Strategy: AiStrategy<S>,
    {
        self.models.resolve(S::AI.model)?;
        let instruction = Instruction::new(QUERY, json!({ "query": query }));
        let request_id = instruction.id.clone();
        let directives = agent.cmd(instruction);
        let directives = self.settle(agent, directives).await;
        let ai = S::Strategy::ai_state(agent);
        let run = ai.run.as_ref().filter(|r| r.request_id == request_id);
        let Some(result) = run.and_then(|r| r.result.clone()) else {
            if !ai.interrupts.pending.is_empty() {
                let ids: Vec<&str> = ai
                    .interrupts
                    .pending
                    .iter()
                    .map(|p| p.id.as_str())
                    .collect();
                return Err(AskError::Refused {
                    message: format!(
                        "request `{request_id}` waits for a person's approval of {}; answer with `agent.cmd(Resume {{ id, value }})` and run the directives with `settle`",
                        crate::error::list_or_none(&ids)
                    ),
                });
            }
            let message = directives
                .iter()
                .find_map(|d| d.as_error().map(ToString::to_string))
                .unwrap_or_else(|| format!("request `{request_id}` did not run"));
            return Err(AskError::Refused { message });
        };
        if ai.phase == Phase::Failed {
            return Err(AskError::Failed {
                result: Box::new(result),
                directives,
            });
        }
        Ok(AiAnswer { result, directives })
    }

    /// Executes the `Llm`, `Embed` and `RunInstruction` directives among `directives` (each
    /// batch concurrently), feeding results back, until the agent starts no more work;
    /// returns every other directive in order. Tool results go through `cmd`; model answers
    /// too for an agent without plugins (all of a batch at once), and through
    /// [`handle_signal`](Agent::handle_signal) one by one for an agent with plugins, as a
    /// server routes them, so the plugins' hooks see them and a plugin's own calls (Chat's,
    /// Reasoning's) reach the plugin. Embeddings always go through `handle_signal`.
    pub async fn settle<S: AgentSpec>(
        &self,
        agent: &mut Agent<S>,
        directives: impl Into<Vec<Directive>>,
    ) -> Vec<Directive> {
        let directives = directives.into();
        let mut out = Vec::new();
        let mut pending = directives;
        loop {
            let mut calls = Vec::new();
            let mut embeds = Vec::new();
            let mut runs = Vec::new();
            for directive in pending.drain(..) {
                match directive {
                    Directive::Llm(call) => calls.push(*call),
                    Directive::Embed(call) => embeds.push(*call),
                    Directive::RunInstruction { instruction, exec } => {
                        runs.push((instruction, exec))
                    }
                    other => out.push(other),
                }
            }
            if calls.is_empty() && runs.is_empty() && embeds.is_empty() {
                return out;
            }
            let tools = run_async_actions(agent, runs);
            let replies = join_all(calls.into_iter().map(|call| async move {
                let result = self.call_model(&call).await;
                LlmReply::new(call.call_id, result)
            }));
            let embedded = join_all(embeds.into_iter().map(|call| async move {
                let result = self.embed(&call.request).await;
                EmbedReply::new(call.call_id, result)
            }));
            let (results, replies, embedded) = futures::join!(tools, replies, embedded);
            let mut instructions = results;
            // With plugins, each answer is routed as a server routes it: the plugins' hooks
            // see it, and a plugin's own calls reach the plugin.
            let to_route = if S::plugins().is_empty() {
                instructions.extend(replies.into_iter().map(LlmReply::into_instruction));
                Vec::new()
            } else {
                replies
            };
            pending = if instructions.is_empty() {
                Vec::new()
            } else {
                agent.cmd(instructions)
            };
            for reply in to_route {
                pending.extend(agent.handle_signal(&reply.into_signal()));
            }
            for reply in embedded {
                pending.extend(agent.handle_signal(&reply.into_signal()));
            }
        }
    }

    /// Resolves the request's alias and asks its provider for embeddings.
    pub async fn embed(&self, request: &EmbeddingRequest) -> Result<Embeddings, LlmError> {
        let entry = self.models.resolve(&request.model)?;
        let mut request = request.clone();
        request.model.clone_from(&entry.model);
        entry.provider.embed(request).await
    }

    /// Resolves the call's alias and asks the model (streaming when `on_delta` is set).
    pub async fn call_model(&self, call: &LlmCall) -> Result<super::model::LlmResponse, LlmError> {
        let entry = self.models.resolve(&call.request.model)?;
        let mut request = call.request.clone();
        request.model.clone_from(&entry.model);
        match &self.on_delta {
            None => entry.provider.generate(request).await,
            Some(on_delta) => {
                collect_stream(entry.provider.stream(request), |delta| {
                    on_delta(call, delta)
                })
                .await
            }
        }
    }
}

impl<S> Agent<S>
where
    S: AiAgent,
    S::Strategy: AiStrategy<S>,
{
    /// Asks this agent (see [`AiRunner::ask`]).
    pub async fn ask(&mut self, runner: &AiRunner, query: &str) -> Result<AiAnswer, AskError> {
        runner.ask(self, query).await
    }
}
