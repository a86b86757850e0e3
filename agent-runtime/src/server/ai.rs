//! Running AI strategies' model calls: each `Llm` directive runs in its own task; deltas go to
//! subscribers as `ai.llm.delta` signals while the answer streams in (only when someone is
//! subscribed: otherwise the answer is fetched in one piece); the answer comes back through the
//! internal lane and is routed to the agent as an `ai.llm.response` signal.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::json;

use crate::ai::{LLM_DELTA, LlmCall, LlmError, LlmErrorKind, LlmReply, collect_stream};
use crate::directive::Directive;
use crate::error::{AgentError, ErrorContext};
use crate::signal::Signal;

use crate::agent::DynAgent;

use super::core::Core;
use super::error::ServerError;
use super::message::{Internal, Message};
use super::options::Options;

/// A model call the server is running.
pub(super) struct LlmInFlight {
    pub(super) call: LlmCall,
    pub(super) abort: tokio::task::AbortHandle,
}

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
        if self
            .llm_calls
            .iter()
            .any(|c| c.call.call_id == call.call_id)
        {
            return Err(failed(format!(
                "model call `{}` is already running",
                call.call_id
            )));
        }
        let Some(models) = self.options.models.as_ref() else {
            return Err(failed(format!(
                "agent `{}` asked for model `{}`, but this server has no model table; give it one with `Options::models`",
                self.name(),
                call.request.model
            )));
        };
        let resolved = models
            .resolve(&call.request.model)
            .map(|entry| (entry.provider.clone(), entry.model.clone()));
        let tx = self.self_tx.clone();
        let shared = self.shared.clone();
        let source = self.source();
        let of = call.clone();
        let task = tokio::spawn(async move {
            let run = async {
                let (provider, model) = resolved.map_err(LlmError::from)?;
                let mut request = of.request.clone();
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
                            format!("{}/delta/{seq}", of.call_id),
                            LLM_DELTA,
                            json!({"request_id": of.request_id, "call_id": of.call_id, "delta": delta}),
                        )
                        .with_source(source.clone());
                        // Nobody left watching is not an error.
                        let _ = events.send(signal);
                    }
                })
                .await
            };
            let result = AssertUnwindSafe(run)
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    Err(LlmError::new(
                        LlmErrorKind::Other,
                        "the model provider panicked",
                    ))
                });
            if let Some(tx) = tx.upgrade() {
                let reply = LlmReply::new(of.call_id.clone(), result);
                let _ = tx.send(Message::internal(Internal::Llm(reply)));
            }
        });
        self.llm_calls.push(LlmInFlight {
            call,
            abort: task.abort_handle(),
        });
        Ok(())
    }

    /// A model call finished: route its answer to the agent.
    pub(super) fn on_llm_reply(&mut self, reply: LlmReply) {
        let Some(pos) = self
            .llm_calls
            .iter()
            .position(|c| c.call.call_id == reply.call_id)
        else {
            return;
        };
        self.llm_calls.remove(pos);
        let signal = reply.into_signal().with_source(self.source());
        self.step_signal("llm", &signal, false);
    }
}
