//! The provider-neutral model layer: requests, responses, streamed deltas, errors and the
//! [`LanguageModel`] trait every provider implements.

use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::action::ActionSpec;

/// A tool offered to a model: an action's name, description and closed JSON schema.
pub type ToolSpec = ActionSpec;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The user's words.
    User,
    /// The model's words (and tool calls).
    Assistant,
    /// A tool's result.
    Tool,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// Its text (empty for an assistant turn that only calls tools).
    #[serde(default)]
    pub content: String,
    /// The tool calls of an assistant turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message, with the tool calls it made.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        ChatMessage {
            tool_calls,
            ..Self::new(Role::Assistant, content)
        }
    }

    /// A tool result answering call `call_id`.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            tool_call_id: Some(call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call (tool results refer to it).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments. Arguments that were not valid JSON are kept as the raw string, so the
    /// strategy can tell the model what was wrong.
    pub arguments: Value,
}

/// Whether and how the model may call tools.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// This tool.
    Tool(String),
}

/// A provider-neutral request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRequest {
    /// The model: an alias (`"fast"`) in a strategy's directive, the provider's model id once
    /// the host resolved it.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// The tools offered (shared: the same list goes with every call of an agent type).
    #[serde(default, skip_serializing_if = "<[ToolSpec]>::is_empty")]
    pub tools: Arc<[ToolSpec]>,
    /// Whether and how tools may be called.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Sampling temperature (0.0..=2.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The longest answer, in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Structured output: the answer must be JSON matching this schema. A provider whose
    /// endpoint supports it sends it (OpenAI's `response_format`); the caller validates the
    /// answer either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
}

/// The JSON schema an answer must follow (structured output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseFormat {
    /// A name for the schema (`plan`); providers ask for `[a-zA-Z0-9_-]`.
    pub name: String,
    /// The JSON schema.
    pub schema: Value,
}

/// A request for embeddings: one vector per input text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingRequest {
    /// The model: an alias in a directive, the provider's model id once the host resolved it.
    pub model: String,
    /// The texts, in order.
    pub inputs: Vec<String>,
}

/// The embeddings of an [`EmbeddingRequest`], in the order of its inputs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Embeddings {
    /// One vector per input.
    pub vectors: Vec<Vec<f32>>,
    /// Tokens used.
    #[serde(default)]
    pub usage: Usage,
}

/// The cosine similarity of two vectors (0 when either is all zeros or their lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

impl LlmRequest {
    /// A request to `model` with these messages and nothing else.
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        LlmRequest {
            model: model.into(),
            messages,
            tools: Arc::from(Vec::new()),
            tool_choice: ToolChoice::Auto,
            temperature: None,
            max_tokens: None,
            response_format: None,
        }
    }

    /// The text of the last user message, if any.
    pub fn last_user_message(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
    }
}

/// Why the model stopped, normalized across providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A complete answer.
    #[default]
    Stop,
    /// It wants tools called.
    ToolCalls,
    /// It ran out of tokens.
    Length,
    /// The provider reported an error or filtered the answer.
    Error,
}

impl FinishReason {
    /// Normalizes a provider's finish reason (`stop`, `tool_calls`, `function_call`, `length`,
    /// `content_filter`, ...).
    pub fn normalize(raw: &str) -> Self {
        match raw {
            "stop" | "end_turn" | "stop_sequence" | "eos" => FinishReason::Stop,
            "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
            "length" | "max_tokens" => FinishReason::Length,
            _ => FinishReason::Error,
        }
    }
}

/// Tokens used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the answer.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
}

impl Usage {
    /// Adds another call's usage.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
    }
}

/// A provider-neutral response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LlmResponse {
    /// The text (may be empty when the model only calls tools).
    #[serde(default)]
    pub text: String,
    /// The tool calls, in the model's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    #[serde(default)]
    pub finish_reason: FinishReason,
    /// Tokens used.
    #[serde(default)]
    pub usage: Usage,
    /// The provider's id of the answer, when it gives one (`chatcmpl-...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The model that answered, when the provider says (it may name a version of the one
    /// asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl LlmResponse {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        LlmResponse {
            text: text.into(),
            ..LlmResponse::default()
        }
    }

    /// An answer that calls tools.
    pub fn tool_calls(text: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        LlmResponse {
            text: text.into(),
            tool_calls: calls,
            finish_reason: FinishReason::ToolCalls,
            ..LlmResponse::default()
        }
    }
}

/// One piece of a streamed answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LlmDelta {
    /// More text.
    Text {
        /// The new text.
        text: String,
    },
    /// A piece of a tool call. The first piece of a call carries its id and name; arguments
    /// arrive as string fragments to concatenate.
    ToolCall {
        /// Which call of the turn (0-based).
        index: usize,
        /// The call's id, on its first piece.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool's name, on its first piece.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// A fragment of the JSON arguments.
        #[serde(default)]
        arguments: String,
    },
    /// The end of the answer.
    Finish {
        /// Why the model stopped.
        reason: FinishReason,
        /// Tokens used, when the provider reports them.
        usage: Usage,
    },
}

/// What kind of failure an [`LlmError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LlmErrorKind {
    /// HTTP 429: too many requests (retried).
    RateLimited,
    /// HTTP 5xx (retried).
    Server,
    /// No answer in time (retried).
    Timeout,
    /// The connection failed or broke (retried when nothing was received yet).
    Transport,
    /// The endpoint refused the credentials (401/403).
    Auth,
    /// Any other HTTP error status (400, 404, ...).
    Http,
    /// A body or stream that is not what the protocol says: bad JSON, a cut stream.
    Malformed,
    /// The model alias is not in the model table.
    UnknownModel,
    /// A scripted model got a request its script did not expect, or ran out of turns.
    Script,
    /// Anything else.
    Other,
}

/// A typed failure of a model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct LlmError {
    /// What kind of failure.
    pub kind: LlmErrorKind,
    /// What happened; never contains credentials.
    pub message: String,
    /// The HTTP status, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// How many attempts were made.
    #[serde(default)]
    pub attempts: u32,
}

impl LlmError {
    /// An error of this kind.
    pub fn new(kind: LlmErrorKind, message: impl Into<String>) -> Self {
        LlmError {
            kind,
            message: message.into(),
            status: None,
            attempts: 1,
        }
    }

    /// Sets the HTTP status.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Whether another attempt may succeed (429, 5xx, timeouts, broken connections).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind,
            LlmErrorKind::RateLimited
                | LlmErrorKind::Server
                | LlmErrorKind::Timeout
                | LlmErrorKind::Transport
        )
    }
}

/// A language model: a provider (OpenAI-compatible HTTP, a scripted model, your own).
///
/// Futures and streams are `'static` so hosts can run them in their own tasks.
pub trait LanguageModel: Send + Sync + fmt::Debug {
    /// A short name for logs (`"openai-compatible"`, `"scripted"`); also the
    /// `gen_ai.provider.name` of its model calls' spans.
    fn name(&self) -> &str;

    /// The host its requests go to (`api.openai.com`), for the `server.address` of its model
    /// calls' spans; `None` (the default) for a model without one.
    fn server_address(&self) -> Option<&str> {
        None
    }

    /// Answers a request.
    fn generate(&self, request: LlmRequest) -> BoxFuture<'static, Result<LlmResponse, LlmError>>;

    /// Computes embeddings (OpenAI's `/v1/embeddings`). The default fails: the provider
    /// computes none.
    fn embed(&self, request: EmbeddingRequest) -> BoxFuture<'static, Result<Embeddings, LlmError>> {
        let message = format!(
            "provider `{}` does not compute embeddings (model `{}`)",
            self.name(),
            request.model
        );
        Box::pin(std::future::ready(Err(LlmError::new(
            LlmErrorKind::Other,
            message,
        ))))
    }

    /// Answers a request as a stream of deltas ending with [`LlmDelta::Finish`]. The default
    /// generates the whole answer and replays it as deltas.
    fn stream(&self, request: LlmRequest) -> BoxStream<'static, Result<LlmDelta, LlmError>> {
        let answer = self.generate(request);
        futures::stream::once(answer)
            .flat_map(|result| match result {
                Ok(response) => {
                    futures::stream::iter(deltas_of(&response).into_iter().map(Ok)).boxed()
                }
                Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
            })
            .boxed()
    }
}

/// A response as the deltas a stream would carry: its text, each tool call, the finish.
pub fn deltas_of(response: &LlmResponse) -> Vec<LlmDelta> {
    let mut out = Vec::new();
    if !response.text.is_empty() {
        out.push(LlmDelta::Text {
            text: response.text.clone(),
        });
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        out.push(LlmDelta::ToolCall {
            index,
            id: Some(call.id.clone()),
            name: Some(call.name.clone()),
            arguments: call.arguments.to_string(),
        });
    }
    out.push(LlmDelta::Finish {
        reason: response.finish_reason,
        usage: response.usage,
    });
    out
}

/// Builds a response from deltas.
#[derive(Debug, Default)]
pub struct DeltaAccumulator {
    text: String,
    calls: Vec<(String, String, String)>,
    finish: Option<(FinishReason, Usage)>,
}

impl DeltaAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        DeltaAccumulator::default()
    }

    /// Adds a delta. A tool-call piece for a new index opens that call.
    pub fn push(&mut self, delta: &LlmDelta) {
        match delta {
            LlmDelta::Text { text } => self.text.push_str(text),
            LlmDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                while self.calls.len() <= *index {
                    self.calls.push(Default::default());
                }
                let call = &mut self.calls[*index];
                if let Some(id) = id {
                    merge_piece(&mut call.0, id);
                }
                if let Some(name) = name {
                    merge_piece(&mut call.1, name);
                }
                call.2.push_str(arguments);
            }
            LlmDelta::Finish { reason, usage } => self.finish = Some((*reason, *usage)),
        }
    }

    /// Whether the finish has arrived.
    pub fn finished(&self) -> bool {
        self.finish.is_some()
    }

    /// The response; a stream that ended before its finish is [`LlmErrorKind::Malformed`].
    pub fn finish(self) -> Result<LlmResponse, LlmError> {
        let Some((finish_reason, usage)) = self.finish else {
            return Err(LlmError::new(
                LlmErrorKind::Malformed,
                "the stream ended before the answer finished (no finish reason)",
            ));
        };
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(id, name, arguments)| ToolCall {
                id,
                name,
                arguments: parse_arguments(&arguments),
            })
            .collect();
        Ok(LlmResponse {
            text: self.text,
            tool_calls,
            finish_reason,
            usage,
            id: None,
            model: None,
        })
    }
}

/// Adds a streamed piece of a tool call's id or name. OpenAI sends each once, in the call's
/// first chunk, but some servers and proxies repeat the whole value on every chunk (or send it
/// growing): a piece that is the value so far, or extends it, replaces it; anything else is a
/// fragment and is appended.
fn merge_piece(so_far: &mut String, piece: &str) {
    if piece.starts_with(so_far.as_str()) {
        so_far.clear();
        so_far.push_str(piece);
    } else {
        so_far.push_str(piece);
    }
}

/// Tool-call arguments as JSON; text that is not JSON is kept as a string (an empty string is
/// `{}`: a call without arguments).
pub fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// Runs a stream to its end, handing each delta to `on_delta`, and returns the response.
pub async fn collect_stream(
    mut stream: BoxStream<'static, Result<LlmDelta, LlmError>>,
    mut on_delta: impl FnMut(&LlmDelta),
) -> Result<LlmResponse, LlmError> {
    let mut acc = DeltaAccumulator::new();
    while let Some(delta) = stream.next().await {
        let delta = delta?;
        on_delta(&delta);
        acc.push(&delta);
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finish_reasons_normalize() {
        assert_eq!(FinishReason::normalize("stop"), FinishReason::Stop);
        assert_eq!(
            FinishReason::normalize("tool_calls"),
            FinishReason::ToolCalls
        );
        assert_eq!(
            FinishReason::normalize("function_call"),
            FinishReason::ToolCalls
        );
        assert_eq!(FinishReason::normalize("length"), FinishReason::Length);
        assert_eq!(
            FinishReason::normalize("content_filter"),
            FinishReason::Error
        );
    }

    #[test]
    fn deltas_accumulate_split_tool_calls() {
        let mut acc = DeltaAccumulator::new();
        for d in [
            LlmDelta::Text {
                text: "Let me ".into(),
            },
            LlmDelta::Text {
                text: "look.".into(),
            },
            LlmDelta::ToolCall {
                index: 0,
                id: Some("c1".into()),
                name: Some("lookup".into()),
                arguments: "{\"id\":".into(),
            },
            LlmDelta::ToolCall {
                index: 1,
                id: Some("c2".into()),
                name: Some("ticket".into()),
                arguments: String::new(),
            },
            LlmDelta::ToolCall {
                index: 0,
                id: None,
                name: None,
                arguments: " 42}".into(),
            },
            LlmDelta::Finish {
                reason: FinishReason::ToolCalls,
                usage: Usage::default(),
            },
        ] {
            acc.push(&d);
        }
        let r = acc.finish().unwrap();
        assert_eq!(r.text, "Let me look.");
        assert_eq!(r.tool_calls[0].arguments, json!({"id": 42}));
        assert_eq!(r.tool_calls[1].arguments, json!({}));
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    }

    #[test]
    fn a_stream_without_finish_is_malformed() {
        let mut acc = DeltaAccumulator::new();
        acc.push(&LlmDelta::Text {
            text: "half".into(),
        });
        assert_eq!(acc.finish().unwrap_err().kind, LlmErrorKind::Malformed);
    }

    #[test]
    fn bad_arguments_stay_raw() {
        assert_eq!(parse_arguments("{oops"), json!("{oops"));
    }
}
