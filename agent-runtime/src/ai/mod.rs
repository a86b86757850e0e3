//! AI strategies: a language model decides, the strategy contract runs it.
//!
//! - The model layer: [`LanguageModel`] (async `generate` and a `stream` of [`LlmDelta`]s) over
//!   provider-neutral [`LlmRequest`]/[`LlmResponse`] with normalized [`FinishReason`]s and
//!   [`Usage`]; tools are the agent's actions ([`ToolSpec`], closed JSON schemas); models are
//!   named by alias through a [`ModelTable`].
//! - Providers: [`ScriptedModel`] for tests and offline runs, and (feature `ai-http`, on by
//!   default) `OpenAiCompatible` for OpenAI, Ollama, vLLM, llama.cpp and any compatible
//!   `base_url`.
//! - Strategies: [`React`], [`ChainOfThought`], [`ChainOfDraft`]: pure machines inside `cmd`
//!   that return [`Directive::Llm`](crate::Directive::Llm) calls and `RunInstruction`s for async
//!   tools, configured by [`AiAgent`] and observed/steered by [`StepHooks`].
//! - Hosts: [`AiRunner`] (`agent.ask(&runner, "...")`) in-process, and the agent server, which
//!   runs model calls in tasks and streams `ai.llm.delta` signals to subscribers.
//!
//! Signals and instructions the strategies understand or emit are the constants in this
//! module ([`QUERY`], [`LLM_RESPONSE`], [`CANCEL`], [`TOOL_RESULT`], [`LLM_DELTA`], [`USAGE`],
//! [`REQUEST_STARTED`], [`REQUEST_COMPLETED`], [`REQUEST_FAILED`]).

mod ask;
mod hooks;
mod machine;
mod model;
mod models;
#[cfg(feature = "ai-http")]
mod openai;
mod parse;
pub mod schema;
mod scripted;
mod spec;
mod state;
mod strategies;
mod tool_schema;

#[cfg(all(test, feature = "ai-http"))]
mod openai_tests;
#[cfg(test)]
mod tests;

pub use ask::{AiAnswer, AiRunner, AskError};
pub use hooks::{Hooks, NoHooks, Step, StepHooks};
pub use machine::{
    CANCEL, COD_PROMPT, COT_PROMPT, LLM_DELTA, LLM_RESPONSE, LlmReply, QUERY, REPEAT_NOTE,
    REQUEST_COMPLETED, REQUEST_FAILED, REQUEST_STARTED, TOOL_RESULT, USAGE,
};
pub use model::{
    ChatMessage, DeltaAccumulator, FinishReason, LanguageModel, LlmDelta, LlmError, LlmErrorKind,
    LlmRequest, LlmResponse, Role, ToolCall, ToolChoice, ToolSpec, Usage, collect_stream,
    deltas_of, parse_arguments,
};
pub use models::{ModelEntry, ModelTable, UnknownAlias};
#[cfg(feature = "ai-http")]
pub use openai::OpenAiCompatible;
pub use parse::{Reasoning, chain_of_draft, chain_of_thought};
pub use scripted::{ScriptError, ScriptedModel};
pub use spec::{AiAgent, AiConfig};
pub use state::{
    AiFailure, AiResult, AiRun, AiState, LlmCall, PendingTool, Phase, Termination, ToolResult,
};
pub use strategies::{AiStrategy, ChainOfDraft, ChainOfThought, React};
pub use tool_schema::provider_schema;
