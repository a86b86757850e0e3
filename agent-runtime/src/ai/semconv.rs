//! The names observability backends know: the OpenTelemetry semantic conventions for
//! generative AI (`gen_ai.*`), as `tracing` spans. The conventions are still in development,
//! so every name lives here and nowhere else.
//!
//! | span (`otel.name`) | when | attributes |
//! |---|---|---|
//! | `chat {model}` | a model call made by the agent server | [`OPERATION_NAME`], [`PROVIDER_NAME`], [`REQUEST_MODEL`], [`RESPONSE_MODEL`], [`RESPONSE_ID`], [`RESPONSE_FINISH_REASONS`], [`USAGE_INPUT_TOKENS`], [`USAGE_OUTPUT_TOKENS`], [`SERVER_ADDRESS`], [`ERROR_TYPE`] |
//! | `embeddings {model}` | an embeddings call made by the agent server | [`OPERATION_NAME`], [`PROVIDER_NAME`], [`REQUEST_MODEL`], [`USAGE_INPUT_TOKENS`], [`SERVER_ADDRESS`], [`ERROR_TYPE`] |
//! | `execute_tool {name}` | a tool (an action) the model called | [`OPERATION_NAME`], [`TOOL_NAME`], [`TOOL_CALL_ID`], [`ERROR_TYPE`] |
//! | `invoke_agent {name}` | an AI request, from `ai.request.started` to its end | [`OPERATION_NAME`], [`AGENT_NAME`], [`AGENT_ID`], [`ERROR_TYPE`] |
//!
//! `tracing` span names are fixed at compile time, so each span's name is its operation
//! (`chat`) and the full name is in the `otel.name` field, which `tracing-opentelemetry` uses as
//! the exported span's name. The spans have target [`TARGET`] and level INFO. Prompt and reply
//! content ([`INPUT_MESSAGES`], [`OUTPUT_MESSAGES`]) is recorded only when
//! `Options::record_model_content(true)` asks for it. A finish reason is recorded as text
//! (`stop`): a `tracing` field holds no list.

use std::fmt;

use tracing::field::Empty;

use super::model::{LlmError, LlmErrorKind, LlmResponse};

/// The `tracing` target of the GenAI spans.
pub const TARGET: &str = "stratagem::gen_ai";
/// The field `tracing-opentelemetry` takes as the exported span's name.
pub const OTEL_NAME: &str = "otel.name";

/// Operation of a model call.
pub const CHAT: &str = "chat";
/// Operation of an embeddings call.
pub const EMBEDDINGS: &str = "embeddings";
/// Operation of a tool run.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// Operation of an agent's request.
pub const INVOKE_AGENT: &str = "invoke_agent";

/// `gen_ai.operation.name`: [`CHAT`], [`EMBEDDINGS`], [`EXECUTE_TOOL`] or [`INVOKE_AGENT`].
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`: the model provider's name (`LanguageModel::name`).
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.request.model`: the model asked for (the provider's model name, not the alias).
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.response.model`: the model that answered, when the provider says.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.response.id`: the provider's id of the answer, when it gives one.
pub const RESPONSE_ID: &str = "gen_ai.response.id";
/// `gen_ai.response.finish_reasons`: why the model stopped (`stop`, `tool_calls`, `length`).
pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// `gen_ai.usage.input_tokens`: tokens in the prompt.
pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`: tokens in the answer.
pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `server.address`: the host of the provider's endpoint, when it has one.
pub const SERVER_ADDRESS: &str = "server.address";
/// `error.type`: what went wrong (`rate_limited`, `timeout`, a tool's error kind...).
pub const ERROR_TYPE: &str = "error.type";
/// `gen_ai.tool.name`: the tool (action) the model called.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`: the model's id of the call.
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.agent.name`: the agent type.
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.agent.id`: the agent instance.
pub const AGENT_ID: &str = "gen_ai.agent.id";
/// `gen_ai.input.messages`: the prompt as JSON (opt-in).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// `gen_ai.output.messages`: the answer as JSON (opt-in).
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";

/// `error.type` of a tool call whose arguments did not fit its schema.
pub const INVALID_ARGUMENTS: &str = "invalid_arguments";
/// `error.type` of a tool that ran and failed.
pub const TOOL_FAILED: &str = "failed";

/// A span's full name: `chat gpt-4o`, `execute_tool lookup`, `invoke_agent Desk`.
pub fn span_name(operation: &str, subject: &str) -> String {
    format!("{operation} {subject}")
}

/// The span a GenAI span hangs under: `request` (an AI request's `invoke_agent` span) when
/// given, else the current span. Named explicitly because entering a span that is already on
/// the thread's stack (a step run inside its request's span) does not make it current again.
fn parent_of(request: Option<&tracing::Span>) -> Option<tracing::Id> {
    request
        .and_then(tracing::Span::id)
        .or_else(|| tracing::Span::current().id())
}

/// The span of a model call under its request's span, its response fields empty until
/// [`record_chat`].
pub(crate) fn chat_span(
    request: Option<&tracing::Span>,
    provider: &str,
    model: &str,
    server: Option<&str>,
) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent_of(request),
        "chat",
        { OTEL_NAME } = span_name(CHAT, model),
        { OPERATION_NAME } = CHAT,
        { PROVIDER_NAME } = provider,
        { REQUEST_MODEL } = model,
        { SERVER_ADDRESS } = server,
        { RESPONSE_MODEL } = Empty,
        { RESPONSE_ID } = Empty,
        { RESPONSE_FINISH_REASONS } = Empty,
        { USAGE_INPUT_TOKENS } = Empty,
        { USAGE_OUTPUT_TOKENS } = Empty,
        { ERROR_TYPE } = Empty,
        { INPUT_MESSAGES } = Empty,
        { OUTPUT_MESSAGES } = Empty,
    )
}

/// A count as OpenTelemetry's integer type.
fn signed(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Records a model call's answer, or its failure, on its [`chat_span`].
pub(crate) fn record_chat(span: &tracing::Span, result: &Result<LlmResponse, LlmError>) {
    match result {
        Ok(response) => {
            if let Some(model) = &response.model {
                span.record(RESPONSE_MODEL, model.as_str());
            }
            if let Some(id) = &response.id {
                span.record(RESPONSE_ID, id.as_str());
            }
            span.record(
                RESPONSE_FINISH_REASONS,
                tracing::field::display(Snake(&response.finish_reason)),
            );
            // As `i64`: OpenTelemetry integers are signed, and `tracing-opentelemetry` turns a
            // `u64` field into text.
            span.record(USAGE_INPUT_TOKENS, signed(response.usage.prompt_tokens));
            span.record(
                USAGE_OUTPUT_TOKENS,
                signed(response.usage.completion_tokens),
            );
        }
        Err(error) => {
            span.record(ERROR_TYPE, error_type(error.kind));
        }
    }
}

/// The span of an embeddings call under its request's span, its usage empty until
/// [`record_embeddings`].
pub(crate) fn embeddings_span(
    request: Option<&tracing::Span>,
    provider: &str,
    model: &str,
    server: Option<&str>,
) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent_of(request),
        "embeddings",
        { OTEL_NAME } = span_name(EMBEDDINGS, model),
        { OPERATION_NAME } = EMBEDDINGS,
        { PROVIDER_NAME } = provider,
        { REQUEST_MODEL } = model,
        { SERVER_ADDRESS } = server,
        { USAGE_INPUT_TOKENS } = Empty,
        { ERROR_TYPE } = Empty,
    )
}

/// Records an embeddings call's usage, or its failure, on its [`embeddings_span`].
pub(crate) fn record_embeddings(
    span: &tracing::Span,
    result: &Result<super::Embeddings, LlmError>,
) {
    match result {
        Ok(embeddings) => {
            span.record(USAGE_INPUT_TOKENS, signed(embeddings.usage.prompt_tokens));
        }
        Err(error) => {
            span.record(ERROR_TYPE, error_type(error.kind));
        }
    }
}

/// The span of a tool run, under its request's span when the host runs it (an async tool),
/// else under the current span (the step running a sync tool).
pub(crate) fn tool_span(
    request: Option<&tracing::Span>,
    name: &str,
    call_id: &str,
) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent_of(request),
        "execute_tool",
        { OTEL_NAME } = span_name(EXECUTE_TOOL, name),
        { OPERATION_NAME } = EXECUTE_TOOL,
        { TOOL_NAME } = name,
        { TOOL_CALL_ID } = call_id,
        { ERROR_TYPE } = Empty,
    )
}

/// Records why a tool the host ran failed on its [`tool_span`]: the action error's kind
/// (`failed`, `timeout`, `panicked`...).
pub(crate) fn record_tool_error(span: &tracing::Span, kind: crate::error::ActionErrorKind) {
    span.record(ERROR_TYPE, tracing::field::display(Snake(&kind)));
}

/// The span of an agent's AI request.
pub(crate) fn agent_span(agent: &str, id: &str) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        { OTEL_NAME } = span_name(INVOKE_AGENT, agent),
        { OPERATION_NAME } = INVOKE_AGENT,
        { AGENT_NAME } = agent,
        { AGENT_ID } = id,
        { ERROR_TYPE } = Empty,
    )
}

/// `error.type` of a failed model call: its kind in snake case (`rate_limited`).
pub fn error_type(kind: LlmErrorKind) -> &'static str {
    match kind {
        LlmErrorKind::RateLimited => "rate_limited",
        LlmErrorKind::Server => "server",
        LlmErrorKind::Timeout => "timeout",
        LlmErrorKind::Transport => "transport",
        LlmErrorKind::Auth => "auth",
        LlmErrorKind::Http => "http",
        LlmErrorKind::Malformed => "malformed",
        LlmErrorKind::UnknownModel => "unknown_model",
        LlmErrorKind::Script => "script",
        LlmErrorKind::Other => "_OTHER",
    }
}

/// A unit enum as its serde (snake case) name.
struct Snake<'a, T>(&'a T);

impl<T: serde::Serialize> fmt::Display for Snake<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match serde_json::to_value(self.0) {
            Ok(serde_json::Value::String(name)) => f.write_str(&name),
            _ => f.write_str("_OTHER"),
        }
    }
}
