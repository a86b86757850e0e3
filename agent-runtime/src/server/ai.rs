//! Running AI strategies' model calls: each `Llm` directive's call is polled by the agent's own
//! task (no task of its own: a spawn per call cost more than the rest of the call's handling
//! on the server); deltas go to subscribers as `ai.llm.delta` signals while the answer streams
//! in (only when someone is subscribed: otherwise the answer is fetched in one piece); the
//! answer is routed to the agent as an `ai.llm.response` signal.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt;
use futures::future::{AbortHandle, BoxFuture, abortable};
use futures::stream::FuturesUnordered;
use serde_json::{Value, json};
use tracing::Instrument;

use crate::ai::{
    EmbedCall, EmbedReply, LLM_DELTA, LLM_RESPONSE, LanguageModel, LlmCall, LlmError, LlmErrorKind,
    LlmReply, REQUEST_COMPLETED, REQUEST_FAILED, REQUEST_STARTED, collect_stream, semconv,
};
use crate::directive::Directive;
use crate::error::{AgentError, ErrorContext};
use crate::signal::{Signal, TraceContext};

use crate::agent::DynAgent;

use super::core::Core;
use super::error::ServerError;
use super::message::{Internal, Message};
use super::options::Options;

/// A model call the server is running.
pub(super) struct LlmInFlight {
    pub(super) call: LlmCall,
    /// Which run of the call this is: a call id can be made again (a request id reused after a
    /// cancel), and only the latest run's answer may reach the agent.
    pub(super) run: u64,
    pub(super) abort: AbortHandle,
    /// The trace context of the step that made the call: its answer continues that trace.
    pub(super) trace_context: Option<TraceContext>,
}

/// What a model call ends with: its answer, tagged with the run it belongs to.
pub(crate) struct LlmOutcome {
    run: u64,
    reply: LlmReply,
}

/// The model calls an agent's task polls, next to its mailbox and timers: each ends with its
/// outcome, or `None` when it was stopped.
pub(super) type LlmTasks = FuturesUnordered<BoxFuture<'static, Option<LlmOutcome>>>;

/// Numbers model-call runs across the process, so a run is never confused with another.
static NEXT_RUN: AtomicU64 = AtomicU64::new(0);

fn failed(message: String) -> Box<Directive> {
    Box::new(Directive::error(
        AgentError::Directive {
            directive: "llm_call".to_string(),
            message,
        },
        ErrorContext::Directive {
            directive: "llm_call".to_string(),
        },
    ))
}

/// What a GenAI span says of a call's provider: its name, the provider's model and its
/// server, or `unknown` and the alias asked for when the alias did not resolve.
fn labels<'a, E>(
    resolved: &'a Result<(Arc<dyn LanguageModel>, String), E>,
    alias: &'a str,
) -> (&'a str, &'a str, Option<&'a str>) {
    match resolved {
        Ok((provider, model)) => (provider.name(), model.as_str(), provider.server_address()),
        Err(_) => ("unknown", alias, None),
    }
}

/// What a model alias resolves to: the provider and the model name it is asked for.
type ResolvedModel = Result<(Arc<dyn LanguageModel>, String), crate::ai::UnknownAlias>;

/// A provider's call, with a panic in it turned into an error.
async fn unless_panicked<T>(
    call: impl std::future::Future<Output = Result<T, LlmError>>,
) -> Result<T, LlmError> {
    AssertUnwindSafe(call)
        .catch_unwind()
        .await
        .unwrap_or_else(|_| {
            Err(LlmError::new(
                LlmErrorKind::Other,
                "the model provider panicked",
            ))
        })
}

/// Refuses to start an agent whose model aliases the options cannot resolve.
pub(super) fn check_models(agent: &dyn DynAgent, options: &Options) -> Result<(), ServerError> {
    let aliases = agent.required_models();
    let Some(alias) = aliases.first() else {
        return Ok(());
    };
    let Some(models) = &options.models else {
        return Err(ServerError::InvalidOptions {
            message: format!(
                "agent `{}` calls model `{alias}`, but the options have no model table; add one with `Options::models`",
                agent.agent_name()
            ),
        });
    };
    for alias in aliases {
        models
            .resolve(alias)
            .map_err(|e| ServerError::InvalidOptions {
                message: format!("agent `{}`: {e}", agent.agent_name()),
            })?;
    }
    Ok(())
}

impl Core {
    /// Starts a model call in its own task.
    pub(super) fn run_llm(&mut self, call: LlmCall) -> Result<(), Box<Directive>> {
        let run = NEXT_RUN.fetch_add(1, Ordering::Relaxed);
        if let Some(pos) = self
            .llm_calls
            .iter()
            .position(|c| c.call.call_id == call.call_id)
        {
            // The strategy asks again for a call that is still running: the running one is
            // stopped (its answer belongs to an earlier request) and the new one is refused,
            // as a failed model call, so the refusal reaches the request's result.
            let earlier = self.llm_calls.remove(pos);
            earlier.abort.abort();
            let error = LlmError::new(
                LlmErrorKind::Other,
                format!(
                    "model call `{}` is already running; the earlier call was stopped",
                    call.call_id
                ),
            );
            let refusal = LlmReply::new(call.call_id.clone(), Err(error));
            let outcome = LlmOutcome {
                run,
                reply: refusal,
            };
            let abort = self.poll_llm(futures::future::ready(outcome));
            self.llm_calls.push(LlmInFlight {
                call,
                run,
                abort,
                trace_context: self.trace_context.clone(),
            });
            return Ok(());
        }
        let resolved = self.resolve_model("model", &call.request.model)?;
        // The call's span is a child of its request's `invoke_agent` span, when there is one.
        let span = {
            let (provider, model, server) = labels(&resolved, &call.request.model);
            let request = self.ai_requests.get(&call.request_id);
            semconv::chat_span(request, provider, model, server)
        };
        if self.options.record_model_content && !span.is_disabled() {
            let messages = serde_json::to_string(&call.request.messages).unwrap_or_default();
            span.record(semconv::INPUT_MESSAGES, messages.as_str());
        }
        let record_content = self.options.record_model_content;
        let shared = self.shared.clone();
        let source = self.source.clone();
        // The task's own copy of the request; the call (kept for checkpoints) keeps the other.
        let (call_id, request_id) = (call.call_id.clone(), call.request_id.clone());
        let mut request = call.request.clone();
        let task = async move {
            let answer = async {
                let (provider, model) = resolved.map_err(LlmError::from)?;
                request.model = model;
                let watched = shared
                    .events
                    .get()
                    .is_some_and(|events| events.receiver_count() > 0);
                if !watched {
                    return provider.generate(request).await;
                }
                let mut seq = 0u64;
                collect_stream(provider.stream(request), |delta| {
                    seq += 1;
                    if let Some(events) = shared.events.get() {
                        let signal = Signal::with_id(
                            format!("{call_id}/delta/{seq}"),
                            LLM_DELTA,
                            json!({"request_id": request_id, "call_id": call_id, "delta": delta}),
                        )
                        .with_source(&*source);
                        // Nobody left watching is not an error.
                        let _ = events.send(signal);
                    }
                })
                .await
            };
            let result = unless_panicked(answer).await;
            let span = tracing::Span::current();
            semconv::record_chat(&span, &result);
            if record_content && let Ok(response) = &result {
                let answer = json!([{"role": "assistant", "content": response.text, "tool_calls": response.tool_calls}]);
                span.record(semconv::OUTPUT_MESSAGES, answer.to_string().as_str());
            }
            let reply = LlmReply::new(call_id, result);
            LlmOutcome { run, reply }
        }
        .instrument(span);
        let abort = self.poll_llm(task);
        self.llm_calls.push(LlmInFlight {
            call,
            run,
            abort,
            trace_context: self.trace_context.clone(),
        });
        Ok(())
    }

    /// Adds a model call to the ones the agent's task polls; the handle stops it.
    fn poll_llm(
        &mut self,
        call: impl std::future::Future<Output = LlmOutcome> + Send + 'static,
    ) -> AbortHandle {
        let (call, abort) = abortable(call);
        self.llm_tasks
            .get_or_insert_default()
            .push(call.map(Result::ok).boxed());
        abort
    }

    /// The provider and model `alias` names in the server's model table (an unknown alias is
    /// the call's error, answered like any failed call); no table at all refuses the directive.
    /// `what` says what was asked for, in the refusal.
    fn resolve_model(&self, what: &str, alias: &str) -> Result<ResolvedModel, Box<Directive>> {
        let Some(models) = self.options.models.as_ref() else {
            return Err(failed(format!(
                "agent `{}` asked for {what} `{alias}`, but this server has no model table; give it one with `Options::models`",
                self.name(),
            )));
        };
        Ok(models
            .resolve(alias)
            .map(|entry| (entry.provider.clone(), entry.model.clone())))
    }

    /// Starts an embeddings call in its own task; the answer comes back as
    /// `ai.embed.response`.
    pub(super) fn run_embed(&mut self, call: EmbedCall) -> Result<(), Box<Directive>> {
        let resolved = self.resolve_model("embeddings from model", &call.request.model)?;
        // A child of its request's `invoke_agent` span, like a model call.
        let span = {
            let (provider, model, server) = labels(&resolved, &call.request.model);
            let request = self.ai_requests.get(&call.request_id);
            semconv::embeddings_span(request, provider, model, server)
        };
        let tx = self.self_tx.clone();
        let trace_context = self.trace_context.clone();
        tokio::spawn(
            async move {
                let answer = async {
                    let (provider, model) = resolved.map_err(LlmError::from)?;
                    let mut request = call.request.clone();
                    request.model = model;
                    provider.embed(request).await
                };
                let result = unless_panicked(answer).await;
                semconv::record_embeddings(&tracing::Span::current(), &result);
                if let Some(tx) = tx.upgrade() {
                    let internal = Internal::Embed {
                        reply: EmbedReply::new(call.call_id, result),
                        request_id: call.request_id,
                        trace_context,
                    };
                    let _ = tx.send(Message::internal(internal));
                }
            }
            .instrument(span),
        );
        Ok(())
    }

    /// Steps the agent with `signal`, an answer to work of the AI request `request_id`, inside
    /// the request's `invoke_agent` span when it has one: the tools a model's answer runs
    /// synchronously are then in the request's trace, under the step's span.
    pub(super) fn step_in_request(
        &mut self,
        origin: &'static str,
        request_id: &str,
        signal: Signal,
        reply: Option<LlmReply>,
    ) {
        match self.ai_requests.get(request_id).cloned() {
            Some(request) => request.in_scope(|| self.step_payload(origin, signal, reply, false)),
            None => self.step_payload(origin, signal, reply, false),
        };
    }

    /// Opens an AI request's `invoke_agent` span when the agent reports it started, and closes
    /// it when the request ends (a busy refusal is not the running request's end).
    pub(super) fn track_request_span(&mut self, signal: &Signal) {
        let type_ = signal.signal_type.as_str();
        if type_ != REQUEST_STARTED && type_ != REQUEST_COMPLETED && type_ != REQUEST_FAILED {
            return;
        }
        let Some(request_id) = signal.data.get("request_id").and_then(|r| r.as_str()) else {
            return;
        };
        if type_ == REQUEST_STARTED {
            let span = semconv::agent_span(self.name(), self.id());
            self.ai_requests.insert(request_id.to_string(), span);
            return;
        }
        let reason = signal.data.get("reason").and_then(|r| r.as_str());
        if reason == Some("busy") {
            return;
        }
        if let Some(span) = self.ai_requests.remove(request_id)
            && type_ == REQUEST_FAILED
        {
            let reason = reason.unwrap_or("_OTHER");
            span.record(semconv::ERROR_TYPE, reason);
        }
    }

    /// When the agent reports that an AI request ended (`ai.request.completed`, or
    /// `ai.request.failed` other than a busy refusal: cancelled, failed), the model calls it
    /// still has running are stopped: nobody waits for them, no more deltas are published, and
    /// a new request reusing the id never gets their answers.
    pub(super) fn stop_llm_calls_of_ended_request(&mut self, signal: &Signal) {
        if self.llm_calls.is_empty() {
            return;
        }
        let ended = signal.signal_type == REQUEST_COMPLETED
            || (signal.signal_type == REQUEST_FAILED
                && signal.data.get("reason").and_then(|r| r.as_str()) != Some("busy"));
        let Some(request_id) = signal.data.get("request_id").and_then(|r| r.as_str()) else {
            return;
        };
        if !ended {
            return;
        }
        self.llm_calls.retain(|c| {
            let keep = c.call.request_id != request_id;
            if !keep {
                c.abort.abort();
                tracing::debug!(call_id = %c.call.call_id, "model call of an ended request stopped");
            }
            keep
        });
    }

    /// A model call finished: route its answer to the agent, unless the call was stopped or
    /// made again since (the answer belongs to an earlier run).
    pub(super) fn on_llm_reply(&mut self, outcome: LlmOutcome) {
        let LlmOutcome { run, reply } = outcome;
        let Some(pos) = self
            .llm_calls
            .iter()
            .position(|c| c.run == run && c.call.call_id == reply.call_id)
        else {
            return;
        };
        let call = self.llm_calls.remove(pos);
        // The signal goes without its data: the reply stays typed next to it.
        let mut signal = Signal::with_id(reply.signal_id(), LLM_RESPONSE, Value::Null)
            .with_source(self.source());
        // The answer steps the agent in the trace of the step that asked the model.
        if let Some(context) = &call.trace_context {
            context.apply_to(&mut signal);
        }
        self.step_in_request("llm", &call.call.request_id, signal, Some(reply));
    }
}
