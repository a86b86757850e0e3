//! AI strategies: a language model decides, the strategy contract runs it.
//!
//! - The model layer: [`LanguageModel`] (async `generate` and a `stream` of [`LlmDelta`]s) over
//!   provider-neutral [`LlmRequest`]/[`LlmResponse`] with normalized [`FinishReason`]s and
//!   [`Usage`]; tools are the agent's actions ([`ToolSpec`], closed JSON schemas); models are
//!   named by alias through a [`ModelTable`].
//! - Providers: [`ScriptedModel`] for tests and offline runs, and (feature `ai-http`, on by
//!   default) `OpenAiCompatible` for OpenAI, Ollama, vLLM, llama.cpp and any compatible
//!   `base_url`.
//! - Strategies: [`React`], [`ChainOfThought`], [`ChainOfDraft`], [`TreeOfThoughts`],
//!   [`GraphOfThoughts`], [`AlgorithmOfThoughts`], [`Trm`] and [`Adaptive`]: pure machines
//!   inside `cmd` on one request lifecycle, that return [`Directive::Llm`](crate::Directive::Llm)
//!   calls (several at once when a search step issues many) and `RunInstruction`s for async
//!   tools, configured by [`AiAgent`] (searches by [`ReasoningConfig`]) and observed/steered by
//!   [`StepHooks`]. A search's tree, graph or drafts come back in [`AiResult::trace`].
//! - Hosts: [`AiRunner`] (`agent.ask(&runner, "...")`) in-process, and the agent server, which
//!   runs model calls in tasks and streams `ai.llm.delta` signals to subscribers.
//!
//! Signals and instructions the strategies understand or emit are the constants in this
//! module ([`QUERY`], [`LLM_RESPONSE`], [`CANCEL`], [`TOOL_RESULT`], [`LLM_DELTA`], [`USAGE`],
//! [`REQUEST_STARTED`], [`REQUEST_COMPLETED`], [`REQUEST_FAILED`], [`REQUEST_ERROR`], [`TOOL_STARTED`]).

mod adaptive;
mod aot;
mod approval;
mod ask;
mod cassette;
mod event_stream;
mod got;
mod hooks;
mod kind;
mod machine;
mod model;
mod models;
#[cfg(feature = "ai-http")]
mod openai;
#[cfg(feature = "ai-http")]
mod openai_body;
mod options;
mod parse;
pub mod plugins;
#[cfg(feature = "ai-http")]
pub(crate) mod retry_wait;
pub mod schema;
mod scripted;
mod search;
pub mod semconv;
mod spec;
mod state;
mod strategies;
mod tool_schema;
mod tot;
mod trm;

#[cfg(all(test, feature = "ai-http"))]
mod openai_tests;
#[cfg(test)]
mod reasoning_tests;
#[cfg(test)]
mod tests;

pub use adaptive::{AdaptiveChoice, Complexity, choose as choose_strategy};
pub use aot::{AOT_PROMPT, algorithm_of_thoughts};
pub use approval::{Approval, ToolApproval};
pub use ask::{AiAnswer, AiRunner, AskError};
pub use cassette::{Cassette, CassetteError, CassetteRecorder, Interaction, RecordedReply};
pub use event_stream::{EventStreamError, EventStreamLimits, EventStreamParser, ServerSentEvent};
pub use got::{
    Edge, EdgeKind, GOT_AGGREGATION_PROMPT, GOT_CONNECTION_PROMPT, GOT_GENERATION_PROMPT,
    GraphNode, GraphSearch, Origin, Stage,
};
pub(crate) use hooks::HookPanic;
pub use hooks::{Hooks, NoHooks, Step, StepHooks};
pub use kind::StrategyKind;
pub(crate) use machine::tool_call_request;
pub use machine::{
    CANCEL, COD_PROMPT, COT_PROMPT, LLM_DELTA, LLM_RESPONSE, LlmReply, QUERY, REPEAT_NOTE,
    REQUEST_COMPLETED, REQUEST_ERROR, REQUEST_FAILED, REQUEST_STARTED, TOOL_RESULT, TOOL_STARTED,
    USAGE,
};
pub use model::{
    ChatMessage, DeltaAccumulator, EmbeddingRequest, Embeddings, FinishReason, LanguageModel,
    LlmDelta, LlmError, LlmErrorKind, LlmRequest, LlmResponse, ResponseFormat, Role, ToolCall,
    ToolChoice, ToolSpec, Usage, collect_stream, cosine, deltas_of, parse_arguments,
};
pub use models::{ModelEntry, ModelTable, UnknownAlias};
#[cfg(feature = "ai-http")]
pub use openai::OpenAiCompatible;
pub use options::{Aggregation, ReasoningConfig, Traversal};
pub use parse::{Reasoning, chain_of_draft, chain_of_thought};
pub use scripted::{EMBEDDING_DIMENSIONS, ScriptError, ScriptedModel};
pub use search::{Purpose, SearchCall, Trace};
pub use spec::{AiAgent, AiConfig};
pub use state::{
    AiFailure, AiResult, AiRun, AiState, EMBED_RESPONSE, EmbedCall, EmbedReply, LlmCall,
    PendingTool, Phase, Termination, ToolResult,
};
pub use strategies::{
    Adaptive, AiStrategy, AlgorithmOfThoughts, ChainOfDraft, ChainOfThought, GraphOfThoughts,
    React, TreeOfThoughts, Trm,
};
pub use tool_schema::provider_schema;
pub use tot::{NodeStatus, TOT_EVALUATION_PROMPT, TOT_GENERATION_PROMPT, ThoughtNode, TreeSearch};
pub use trm::{Draft, Refinement, TRM_ANSWER_PROMPT, TRM_REFINE_PROMPT, parse_draft};
