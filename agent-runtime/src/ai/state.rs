//! The AI strategies' state, kept inside the agent (so a checkpoint carries the conversation),
//! and what their directives and results carry.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::signal::Signal;

use super::adaptive::AdaptiveChoice;
use super::kind::StrategyKind;
use super::model::{ChatMessage, LlmError, LlmRequest, Usage};
use super::search::{SearchCall, Trace};

/// Where an AI strategy stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// No request yet.
    #[default]
    Idle,
    /// Waiting for the model's answer.
    AwaitingLlm,
    /// Waiting for tool results.
    AwaitingTools,
    /// The last request ended with a result.
    Completed,
    /// The last request failed or was cancelled.
    Failed,
}

impl Phase {
    /// Whether a request is in progress (a new query would be refused as `busy`).
    pub fn is_busy(self) -> bool {
        matches!(self, Phase::AwaitingLlm | Phase::AwaitingTools)
    }
}

/// Why a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// The model answered.
    FinalAnswer,
    /// The request used its `max_iterations` LLM calls.
    MaxIterations,
    /// The `stop_condition` hook said so.
    StopCondition,
    /// The model call failed.
    Failed,
    /// The request was cancelled.
    Cancelled,
    /// A search spent its `max_llm_calls` or `token_budget` and ended with its best so far.
    Budget,
}

impl Termination {
    /// The reason as written in signals (`"final_answer"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::FinalAnswer => "final_answer",
            Termination::MaxIterations => "max_iterations",
            Termination::StopCondition => "stop_condition",
            Termination::Failed => "failed",
            Termination::Cancelled => "cancelled",
            Termination::Budget => "budget",
        }
    }
}

/// A tool call of the current round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingTool {
    /// The strategy's id for the call (the async instruction's id, when the tool is async).
    pub call_id: String,
    /// The provider's id for the call (the tool message answers it).
    pub provider_id: String,
    /// The tool.
    pub name: String,
    /// The arguments as the model gave them.
    pub arguments: Value,
    /// The result, once known.
    pub result: Option<ToolResult>,
}

/// A tool's result as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The strategy's id for the call.
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// Whether the tool succeeded; a failure is reported to the model, not raised.
    pub ok: bool,
    /// What the model is told: the tool's reply as JSON, or `{"error": ...}`.
    pub content: String,
}

/// One request: the conversation and its progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AiRun {
    /// The request's id.
    pub request_id: String,
    /// The user's query.
    pub query: String,
    /// The conversation, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// The current step (1-based; 0 before the first).
    pub step: u32,
    /// LLM calls made.
    pub llm_calls: u32,
    /// The call the strategy is waiting for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_call: Option<String>,
    /// The tool calls of the current round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<PendingTool>,
    /// The previous round's calls (name and arguments), to notice a repeat.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous_round: Vec<(String, Value)>,
    /// Tokens used so far.
    pub usage: Usage,
    /// The strategy running the request (Adaptive's choice, or the agent's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<StrategyKind>,
    /// Why Adaptive chose `strategy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveChoice>,
    /// The model alias the request asked for (`"model"` in its data, which the ModelRouting
    /// plugin fills in); `None` runs the agent's own model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A search's model calls still unanswered (several at once when a step issues many).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<SearchCall>,
    /// A search's state: its tree, graph or drafts so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
    /// How it ended, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<AiResult>,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AiResult {
    /// The request's id.
    pub request_id: String,
    /// Why it ended.
    pub reason: Termination,
    /// The answer: the model's final text, a Chain-of-Thought conclusion, or `on_error`'s
    /// fallback. `None` when the request ended without one.
    pub answer: Option<String>,
    /// The reasoning steps (Chain of Thought / Draft).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<String>,
    /// The model's raw text of the last turn.
    #[serde(default)]
    pub raw: String,
    /// What went wrong, when the request failed (even if a fallback answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Steps taken.
    pub steps: u32,
    /// LLM calls made.
    pub llm_calls: u32,
    /// Tokens used.
    pub usage: Usage,
    /// The strategy that ran the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<StrategyKind>,
    /// Why Adaptive chose that strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveChoice>,
    /// The search's trace: Tree of Thoughts' tree, Graph of Thoughts' graph, TRM's drafts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

/// Why a request failed, as `on_error` sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AiFailure {
    /// The model call failed (after the provider's retries).
    Llm {
        /// The request.
        request_id: String,
        /// The provider's error.
        error: LlmError,
    },
}

impl AiFailure {
    /// The request it concerns.
    pub fn request_id(&self) -> &str {
        match self {
            AiFailure::Llm { request_id, .. } => request_id,
        }
    }
}

impl std::fmt::Display for AiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AiFailure::Llm { request_id, error } => {
                write!(f, "request `{request_id}`: the model call failed: {error}")
            }
        }
    }
}

/// The AI strategies' state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AiState {
    /// Where the strategy stands.
    pub phase: Phase,
    /// The current (or last) request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<AiRun>,
    /// Async actions started by plain instructions (not tools), as `Direct` tracks them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_flight: Vec<String>,
    /// Tool calls waiting for a person's approval, and how many were asked for.
    #[serde(
        default,
        skip_serializing_if = "crate::interrupt::Interrupts::is_empty"
    )]
    pub interrupts: crate::interrupt::Interrupts,
}

/// A directive asking the host for embeddings; the host routes the answer back as
/// `ai.embed.response` ([`EmbedReply`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedCall {
    /// Correlates the answer with the call.
    pub call_id: String,
    /// The request the call belongs to.
    pub request_id: String,
    /// The request; its `model` is the alias the host resolves.
    pub request: super::EmbeddingRequest,
}

/// The answer to an [`EmbedCall`], as hosts feed it back (`ai.embed.response`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedReply {
    /// The call it answers.
    pub call_id: String,
    /// The embeddings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<super::Embeddings>,
    /// Or why there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<super::LlmError>,
}

impl EmbedReply {
    /// The reply to `call_id`.
    pub fn new(
        call_id: impl Into<String>,
        result: Result<super::Embeddings, super::LlmError>,
    ) -> Self {
        let (embeddings, error) = match result {
            Ok(e) => (Some(e), None),
            Err(e) => (None, Some(e)),
        };
        EmbedReply {
            call_id: call_id.into(),
            embeddings,
            error,
        }
    }

    /// As the signal a host routes back to the agent.
    pub fn into_signal(self) -> Signal {
        let id = format!("{}/reply", self.call_id);
        let data = serde_json::to_value(&self).unwrap_or(Value::Null);
        Signal::with_id(id, EMBED_RESPONSE, data)
    }
}

/// The answer to an [`EmbedCall`]: data [`EmbedReply`].
pub const EMBED_RESPONSE: &str = "ai.embed.response";

/// The directive an AI strategy returns to have the model called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmCall {
    /// Correlates the answer with the call; an answer for another id is ignored.
    pub call_id: String,
    /// The request the call belongs to.
    pub request_id: String,
    /// The request; its `model` is the alias the host resolves.
    pub request: LlmRequest,
}
