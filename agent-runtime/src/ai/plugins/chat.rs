//! Chat: model calls as signals (`chat.message`, `chat.simple`, `chat.complete`, `chat.embed`,
//! `chat.generate_object`), and the agent's actions as tools (`chat.execute_tool`,
//! `chat.list_tools`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::calls;
use super::request_id;
use crate::action::ActionSpec;
use crate::ai::{
    ChatMessage, EmbedCall, EmbeddingRequest, LlmCall, LlmError, LlmRequest, ResponseFormat, Role,
    ToolCall, ToolChoice, Usage, schema,
};
use crate::directive::Directive;
use crate::error::ActionError;
use crate::plugin::{Flow, Plugin, PluginCall, PluginRoute, PluginTools, ToolDone, ToolRun};
use crate::signal::Signal;

/// The answer to `chat.message`, `chat.simple` and `chat.complete`: data `{"request_id",
/// "text", "model", "usage", "turns", "tool_calls": [{"name", "arguments", "ok", "result"}]}`.
pub const CHAT_RESPONSE: &str = "chat.response";
/// The answer to `chat.generate_object`: data `{"request_id", "signal_type", "object", "usage",
/// "repaired"}`.
pub const CHAT_OBJECT: &str = "chat.object";
/// The answer to `chat.embed`: data `{"request_id", "embeddings": [[...]], "usage"}`.
pub const CHAT_EMBEDDED: &str = "chat.embedded";
/// The answer to `chat.execute_tool`: data `{"request_id", "name", "ok", "result"}` (or
/// `"error"` instead of `"result"`).
pub const CHAT_TOOL_RESULT: &str = "chat.tool.result";
/// The answer to `chat.list_tools`: data `{"tools": [{"name", "description", "parameters"}]}`.
pub const CHAT_TOOLS: &str = "chat.tools";

/// A model answer to one of Chat's calls, as Chat's hook renames `ai.llm.response`.
const LLM_REPLY: &str = "chat.llm.response";
/// Embeddings for one of Chat's calls, as Chat's hook renames `ai.embed.response`.
const EMBED_REPLY: &str = "chat.embed.response";

/// Why a chat request failed: the `reason` of its `ai.request.error`.
pub mod reason {
    /// The model call failed (data `error`: the [`LlmError`](crate::ai::LlmError)).
    pub const MODEL_ERROR: &str = "model_error";
    /// `chat.message` still had tool calls after `max_turns` model turns.
    pub const MAX_TURNS: &str = "max_turns";
    /// `chat.generate_object`'s answer was not JSON matching the schema, even after the
    /// repair turn (data `problems`, `answer`).
    pub const INVALID_OBJECT: &str = "invalid_object";
}

/// Model calls as signals, with defaults for what the caller leaves out.
///
/// | signal | data | answer |
/// |---|---|---|
/// | `chat.message` | `{"prompt", "messages"?}` | `chat.response`, after running the model's tool calls (the agent's actions) for up to `max_turns` turns |
/// | `chat.simple` | `{"prompt"}` | `chat.response` (no tools) |
/// | `chat.complete` | `{"messages": [{"role", "content"}]}` or `{"prompt"}` | `chat.response` (the conversation as given: no system prompt, no tools) |
/// | `chat.embed` | `{"input": "text" or ["texts"]}` | `chat.embedded` |
/// | `chat.generate_object` | `{"prompt", "schema", "name"?}` | `chat.object`: JSON matching the schema (sent as `response_format`), validated, with one repair turn |
/// | `chat.execute_tool` | `{"name", "arguments"}` | `chat.tool.result` (for an async action, when the host has run it) |
/// | `chat.list_tools` | `{}` | `chat.tools` |
///
/// Every request also takes `request_id`, `model`, `max_tokens`, `temperature` and
/// `system_prompt`; the plugin's options fill what it leaves out. A failed request answers
/// with `ai.request.error` (its `reason`: [`reason`]); [`ChatError::from_signal`] reads it.
/// Each model answer also emits `ai.usage` (with the request's `scope`), so Quota counts
/// the tokens. The tools are the agent's actions, filtered by `allow_tools` (empty: all) and
/// `deny_tools`. A sync action runs at once; an async one goes to the host (a
/// `RunInstruction` with id `chat/<request>/tool/<turn>/<n>`, or `chat/<request>/execute`),
/// and its completion comes back to Chat: the next model turn starts once every call of the
/// round has its result, and `chat.execute_tool` answers then.
///
/// Model calls go out as [`Directive::Llm`] with ids `chat/<request>/<turn>` (and
/// [`Directive::Embed`]); the host's answers come back through Chat's hook, so requests in
/// flight are part of the agent's checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Chat {
    /// The model alias of requests that name none (default `"default"`).
    pub default_model: String,
    /// The model alias of `chat.embed` requests that name none (default `"embedding"`).
    pub embedding_model: String,
    /// The longest answer, in tokens; 0 leaves it to the provider (default 1024).
    pub max_tokens: u64,
    /// Sampling temperature (default 0.7).
    pub temperature: f64,
    /// The system prompt of `chat.message`, `chat.simple` and `chat.generate_object`
    /// (default none).
    pub system_prompt: String,
    /// Model turns of one `chat.message` (default 5): the answer must come by then.
    pub max_turns: u64,
    /// The actions offered as tools; empty means every one (default empty).
    pub allow_tools: Vec<String>,
    /// Actions never offered as tools (default none).
    pub deny_tools: Vec<String>,
}

impl Default for Chat {
    fn default() -> Self {
        Chat {
            default_model: "default".into(),
            embedding_model: "embedding".into(),
            max_tokens: 1024,
            temperature: 0.7,
            system_prompt: String::new(),
            max_turns: 5,
            allow_tools: Vec::new(),
            deny_tools: Vec::new(),
        }
    }
}

/// What a pending request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatKind {
    /// `chat.message`.
    Message,
    /// `chat.simple` or `chat.complete`.
    Text,
    /// `chat.generate_object`.
    Object,
    /// `chat.embed`.
    Embed,
}

/// A request waiting for the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingChat {
    /// What it is.
    pub kind: ChatKind,
    /// The signal type that started it.
    pub signal_type: String,
    /// The call it waits for (`chat/<request>/<turn>`).
    pub call_id: String,
    /// Model turns so far.
    pub turns: u64,
    /// The request sent last (the next turn extends it).
    pub request: LlmRequest,
    /// For `chat.generate_object`: the schema, and whether the repair turn was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Whether the repair turn was used.
    #[serde(default)]
    pub repaired: bool,
    /// The tool calls run so far.
    #[serde(default)]
    pub tool_calls: Vec<Value>,
    /// The tool calls of the current round while some still run (async actions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round: Vec<RoundCall>,
    /// Tokens used so far.
    #[serde(default)]
    pub usage: Usage,
    /// The scope Quota counts it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// Chat's state: requests waiting for the model or for async tools, by request id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatState {
    /// Request id -> the request.
    pub pending: BTreeMap<String, PendingChat>,
    /// Async tools the host runs for Chat, by instruction id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, AwaitedTool>,
}

/// An async tool the host runs for Chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AwaitedTool {
    /// The request it serves.
    pub request_id: String,
    /// The action.
    pub name: String,
    /// Whether it is a call of a `chat.message` round (else a `chat.execute_tool`).
    pub in_round: bool,
}

/// A tool call of a `chat.message` round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundCall {
    /// Its instruction id (`chat/<request>/tool/<turn>/<n>`), under which the host runs an
    /// async action.
    pub id: String,
    /// The model's id for the call, which the tool message answers.
    pub provider_id: String,
    /// The action.
    pub name: String,
    /// The arguments.
    pub arguments: Value,
    /// Its reply, or what went wrong; `None` while the host runs it.
    pub result: Option<Result<Value, String>>,
}

/// A failed chat request, read back from its `ai.request.error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    /// The model call failed.
    #[error("request `{request_id}`: the model call failed: {error}")]
    Model {
        /// The request.
        request_id: String,
        /// The provider's typed error.
        error: LlmError,
    },
    /// The answer was not JSON matching the schema, even after the repair turn.
    #[error("request `{request_id}`: the answer does not match the schema: {}", problems.join("; "))]
    InvalidObject {
        /// The request.
        request_id: String,
        /// What is wrong with the last answer.
        problems: Vec<String>,
        /// The last answer.
        answer: String,
    },
    /// The model still called tools after `max_turns` turns.
    #[error("request `{request_id}`: no answer after {turns} model turns")]
    MaxTurns {
        /// The request.
        request_id: String,
        /// The turns made.
        turns: u64,
    },
}

impl ChatError {
    /// The error an `ai.request.error` signal from Chat reports (`None` for another signal,
    /// or a reason Chat does not give).
    pub fn from_signal(signal: &Signal) -> Option<ChatError> {
        if signal.signal_type != crate::ai::REQUEST_ERROR {
            return None;
        }
        let data = &signal.data;
        let request_id = data.get("request_id")?.as_str()?.to_string();
        match data.get("reason")?.as_str()? {
            reason::MODEL_ERROR => Some(ChatError::Model {
                request_id,
                error: serde_json::from_value(data.get("error")?.clone()).ok()?,
            }),
            reason::INVALID_OBJECT => Some(ChatError::InvalidObject {
                request_id,
                problems: serde_json::from_value(data.get("problems")?.clone()).ok()?,
                answer: data.get("answer")?.as_str()?.to_string(),
            }),
            reason::MAX_TURNS => Some(ChatError::MaxTurns {
                request_id,
                turns: data.get("turns")?.as_u64()?,
            }),
            _ => None,
        }
    }
}

impl Chat {
    /// A `chat.generate_object` signal asking for a `T`: its schema comes from the type
    /// (schemars, objects closed).
    pub fn generate_object<T: JsonSchema>(prompt: impl Into<String>) -> Signal {
        let name: String = T::schema_name()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        Signal::new(
            "chat.generate_object",
            json!({
                "prompt": prompt.into(),
                "schema": crate::action::closed_schema::<T>(),
                "name": name,
            }),
        )
    }

    /// The `T` a `chat.object` answer holds.
    pub fn object<T: DeserializeOwned>(signal: &Signal) -> Result<T, serde_json::Error> {
        T::deserialize(signal.data.get("object").unwrap_or(&Value::Null))
    }

    fn allowed(&self, name: &str) -> bool {
        super::tool_allowed(&self.allow_tools, &self.deny_tools, name)
    }

    /// The tools `chat.message` offers: the allowed actions, sync and async.
    fn offered(&self, tools: &dyn PluginTools) -> Vec<ActionSpec> {
        tools
            .list()
            .into_iter()
            .filter(|(spec, _)| self.allowed(&spec.name))
            .map(|(spec, _)| spec)
            .collect()
    }

    /// Starts an allowed tool: `Some(reply)` when it ran (a sync action), `None` when the host
    /// runs it (an async action, instruction `id`).
    fn start_tool(
        &self,
        tools: &dyn PluginTools,
        id: &str,
        name: &str,
        args: Value,
    ) -> Result<Option<Value>, String> {
        if !self.allowed(name) {
            return Err(format!("tool `{name}` is not allowed here"));
        }
        Ok(match tools.start(id, name, args)? {
            ToolRun::Done(reply) => Some(reply.unwrap_or(json!({"ok": true}))),
            ToolRun::Started => None,
        })
    }

    /// The request for `data`: its model, sampling and system prompt, or the defaults.
    fn request(&self, data: &Value, messages: Vec<ChatMessage>, system: bool) -> LlmRequest {
        let text = |k: &str| data.get(k).and_then(Value::as_str);
        let model = text("model").unwrap_or(&self.default_model);
        let mut all = Vec::with_capacity(messages.len() + 1);
        let system_prompt = text("system_prompt").unwrap_or(&self.system_prompt);
        if system && !system_prompt.is_empty() {
            all.push(ChatMessage::system(system_prompt));
        }
        all.extend(messages);
        let mut request = LlmRequest::new(model, all);
        let max_tokens = data
            .get("max_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(self.max_tokens);
        request.max_tokens =
            (max_tokens > 0).then(|| u32::try_from(max_tokens).unwrap_or(u32::MAX));
        let temperature = data
            .get("temperature")
            .and_then(Value::as_f64)
            .unwrap_or(self.temperature);
        request.temperature = Some(temperature as f32);
        request
    }

    fn start(
        &self,
        state: &mut ChatState,
        call: &PluginCall<'_>,
        kind: ChatKind,
        request: LlmRequest,
        schema: Option<Value>,
        key: &str,
    ) -> Vec<Directive> {
        let id = request_id(call.signal);
        let call_id = format!("{key}/{id}/1");
        let pending = PendingChat {
            kind,
            signal_type: call.signal.signal_type.clone(),
            call_id: call_id.clone(),
            turns: 1,
            request: request.clone(),
            schema,
            repaired: false,
            tool_calls: Vec::new(),
            round: Vec::new(),
            usage: Usage::default(),
            scope: scope_of(call.params()),
        };
        state.pending.insert(id.clone(), pending);
        vec![Directive::Llm(Box::new(LlmCall {
            call_id,
            request_id: id,
            request,
        }))]
    }

    /// A model answer to one of the calls of plugin `key` (Chat's, or Planning's).
    pub(crate) fn on_reply(
        &self,
        state: &mut ChatState,
        call: &PluginCall<'_>,
        key: &str,
    ) -> Result<Vec<Directive>, ActionError> {
        let Some(answer) = calls::model_answer(call.params()) else {
            return Err(ActionError::invalid_params(
                LLM_REPLY,
                "it needs a `call_id` and a `response` or an `error`",
            ));
        };
        let Some(id) = calls::request_of(&answer.call_id, key) else {
            return Ok(Vec::new());
        };
        // An answer for a call no longer awaited (a request answered or failed since).
        if state
            .pending
            .get(id)
            .is_none_or(|p| p.call_id != answer.call_id || !p.round.is_empty())
        {
            tracing::debug!(call_id = %answer.call_id, "stale chat answer ignored");
            return Ok(Vec::new());
        }
        let id = id.to_string();
        let Some(mut pending) = state.pending.remove(&id) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let response = match answer.result {
            Err(error) => {
                out.push(model_error(&id, &pending.signal_type, &error));
                return Ok(out);
            }
            Ok(response) => response,
        };
        pending.usage.add(response.usage);
        out.push(calls::usage_signal(
            &id,
            &answer.call_id,
            response.usage,
            pending.scope.as_deref(),
        ));
        match pending.kind {
            ChatKind::Text | ChatKind::Embed => {
                out.push(respond(
                    &id,
                    &pending,
                    &response.text,
                    response.model.as_deref(),
                ));
            }
            ChatKind::Message if response.tool_calls.is_empty() => {
                out.push(respond(
                    &id,
                    &pending,
                    &response.text,
                    response.model.as_deref(),
                ));
            }
            ChatKind::Message => {
                if pending.turns >= self.max_turns {
                    out.push(calls::request_error(
                        &id,
                        &pending.signal_type,
                        reason::MAX_TURNS,
                        format!(
                            "request `{id}` still called tools after {} model turns",
                            pending.turns
                        ),
                        json!({"turns": pending.turns}),
                    ));
                    return Ok(out);
                }
                pending.request.messages.push(ChatMessage::assistant(
                    response.text.clone(),
                    response.tool_calls.clone(),
                ));
                // Sync tools run now; async ones go to the host, and the next turn waits for
                // their completions (`tool_completed`).
                let turn = pending.turns;
                for (
                    n,
                    ToolCall {
                        id: provider_id,
                        name,
                        arguments,
                    },
                ) in response.tool_calls.into_iter().enumerate()
                {
                    let tool_id = format!("{key}/{id}/tool/{turn}/{n}");
                    let result =
                        match self.start_tool(call.tools, &tool_id, &name, arguments.clone()) {
                            Ok(None) => {
                                state.tools.insert(
                                    tool_id.clone(),
                                    AwaitedTool {
                                        request_id: id.clone(),
                                        name: name.clone(),
                                        in_round: true,
                                    },
                                );
                                None
                            }
                            Ok(Some(reply)) => Some(Ok(reply)),
                            Err(message) => Some(Err(message)),
                        };
                    pending.round.push(RoundCall {
                        id: tool_id,
                        provider_id,
                        name,
                        arguments,
                        result,
                    });
                }
                out.extend(continue_round(state, id, pending, key));
            }
            ChatKind::Object => {
                let schema = pending.schema.clone().unwrap_or(json!({}));
                match parse_object(&response.text, &schema) {
                    Ok(object) => out.push(Directive::Emit(Signal::with_id(
                        format!("{id}/object"),
                        CHAT_OBJECT,
                        json!({
                            "request_id": id,
                            "signal_type": pending.signal_type,
                            "object": object,
                            "usage": pending.usage,
                            "repaired": pending.repaired,
                        }),
                    ))),
                    Err(problems) if !pending.repaired => {
                        let mut request = pending.request.clone();
                        request
                            .messages
                            .push(ChatMessage::assistant(response.text.clone(), Vec::new()));
                        request.messages.push(ChatMessage::user(format!(
                            "That answer does not match the schema: {}. Answer again with only the corrected JSON.",
                            problems.join("; ")
                        )));
                        pending.repaired = true;
                        out.push(next_turn(state, id, pending, request, key));
                    }
                    Err(problems) => out.push(calls::request_error(
                        &id,
                        &pending.signal_type,
                        reason::INVALID_OBJECT,
                        format!(
                            "request `{id}`: the answer does not match the schema: {}",
                            problems.join("; ")
                        ),
                        json!({"problems": problems, "answer": response.text}),
                    )),
                }
            }
        }
        Ok(out)
    }
}

/// Once every tool call of the round has its result: the results join the conversation, in
/// call order, and the next model turn starts. Until then the request waits.
fn continue_round(
    state: &mut ChatState,
    id: String,
    mut pending: PendingChat,
    key: &str,
) -> Option<Directive> {
    if pending.round.iter().any(|c| c.result.is_none()) {
        state.pending.insert(id, pending);
        return None;
    }
    let mut request = pending.request.clone();
    for call in std::mem::take(&mut pending.round) {
        let result = call.result.unwrap_or_else(|| Err("no result".into()));
        let content = match &result {
            Ok(Value::String(text)) => text.clone(),
            Ok(value) => value.to_string(),
            Err(message) => json!({"error": message}).to_string(),
        };
        pending.tool_calls.push(json!({
            "name": call.name,
            "arguments": call.arguments,
            "ok": result.is_ok(),
            "result": result.unwrap_or_else(Value::String),
        }));
        request
            .messages
            .push(ChatMessage::tool(call.provider_id, content));
    }
    Some(next_turn(state, id, pending, request, key))
}

fn next_turn(
    state: &mut ChatState,
    id: String,
    mut pending: PendingChat,
    request: LlmRequest,
    key: &str,
) -> Directive {
    pending.turns += 1;
    pending.call_id = format!("{key}/{id}/{}", pending.turns);
    pending.request = request.clone();
    let call_id = pending.call_id.clone();
    state.pending.insert(id.clone(), pending);
    Directive::Llm(Box::new(LlmCall {
        call_id,
        request_id: id,
        request,
    }))
}

impl Chat {
    fn on_embedded(
        &self,
        state: &mut ChatState,
        call: &PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        let reply: crate::ai::EmbedReply = serde_json::from_value(call.params().clone())
            .map_err(|e| ActionError::invalid_params(EMBED_REPLY, e.to_string()))?;
        let Some(id) = calls::request_of(&reply.call_id, "chat") else {
            return Ok(Vec::new());
        };
        if state
            .pending
            .get(id)
            .is_none_or(|p| p.call_id != reply.call_id)
        {
            return Ok(Vec::new());
        }
        let id = id.to_string();
        let Some(pending) = state.pending.remove(&id) else {
            return Ok(Vec::new());
        };
        Ok(match (reply.embeddings, reply.error) {
            (Some(embeddings), _) => vec![
                calls::usage_signal(
                    &id,
                    &reply.call_id,
                    embeddings.usage,
                    pending.scope.as_deref(),
                ),
                Directive::Emit(Signal::with_id(
                    format!("{id}/embedded"),
                    CHAT_EMBEDDED,
                    json!({"request_id": id, "embeddings": embeddings.vectors, "usage": embeddings.usage}),
                )),
            ],
            (None, error) => {
                let error = error.unwrap_or_else(|| {
                    LlmError::new(
                        crate::ai::LlmErrorKind::Malformed,
                        "no embeddings and no error",
                    )
                });
                vec![model_error(&id, &pending.signal_type, &error)]
            }
        })
    }
}

/// `chat.tool.result` for `chat.execute_tool`.
fn tool_result(id: &str, name: &str, result: Result<Value, String>) -> Directive {
    let body = match result {
        Ok(result) => json!({"request_id": id, "name": name, "ok": true, "result": result}),
        Err(error) => json!({"request_id": id, "name": name, "ok": false, "error": error}),
    };
    Directive::Emit(Signal::with_id(
        format!("{id}/tool"),
        CHAT_TOOL_RESULT,
        body,
    ))
}

fn scope_of(data: &Value) -> Option<String> {
    data.get("scope")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn model_error(id: &str, signal_type: &str, error: &LlmError) -> Directive {
    calls::request_error(
        id,
        signal_type,
        reason::MODEL_ERROR,
        format!("request `{id}`: the model call failed: {error}"),
        json!({"error": error}),
    )
}

fn respond(id: &str, pending: &PendingChat, text: &str, model: Option<&str>) -> Directive {
    Directive::Emit(Signal::with_id(
        format!("{id}/response"),
        CHAT_RESPONSE,
        json!({
            "request_id": id,
            "text": text,
            "model": model.unwrap_or(&pending.request.model),
            "usage": pending.usage,
            "turns": pending.turns,
            "tool_calls": pending.tool_calls,
        }),
    ))
}

/// The JSON value in a model's answer (inside a code fence, or the first `{`/`[` to the
/// matching last `}`/`]`), checked against `schema`: the value, or what is wrong.
pub fn parse_object(text: &str, schema: &Value) -> Result<Value, Vec<String>> {
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    let value = serde_json::from_str::<Value>(unfenced).or_else(|first| {
        let start = unfenced.find(['{', '[']);
        let end = unfenced.rfind(['}', ']']);
        match (start, end) {
            (Some(s), Some(e)) if s < e => serde_json::from_str(&unfenced[s..=e]),
            _ => Err(first),
        }
    });
    let value = value.map_err(|e| vec![format!("the answer is not JSON: {e}")])?;
    let problems = schema::validate(schema, &value);
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(problems)
    }
}

/// The user messages of a request: `prompt` (or `message`, `query`, or the data itself when
/// it is a string).
fn prompt_of(data: &Value) -> Option<&str> {
    match data {
        Value::String(text) => Some(text),
        _ => ["prompt", "message", "query"]
            .iter()
            .find_map(|k| data.get(*k).and_then(Value::as_str)),
    }
}

/// Earlier turns given as `messages: [{"role", "content"}]`.
fn history(data: &Value, action: &str) -> Result<Vec<ChatMessage>, ActionError> {
    match data.get("messages") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(messages) => {
            serde_json::from_value::<Vec<ChatMessage>>(messages.clone()).map_err(|e| {
                ActionError::invalid_params(
                    action,
                    format!("`messages` must be a list of `{{\"role\", \"content\"}}`: {e}"),
                )
            })
        }
    }
}

fn needs_prompt(action: &str) -> ActionError {
    ActionError::invalid_params(action, "it needs a `prompt` string")
}

impl Plugin for Chat {
    const NAME: &'static str = "Chat";
    const STATE_KEY: &'static str = "chat";
    type State = ChatState;

    fn mount(&self) -> ChatState {
        ChatState::default()
    }

    fn routes(&self) -> Vec<PluginRoute> {
        vec![
            PluginRoute::new("chat.message", "message"),
            PluginRoute::new("chat.simple", "simple"),
            PluginRoute::new("chat.complete", "complete"),
            PluginRoute::new("chat.embed", "embed"),
            PluginRoute::new("chat.generate_object", "generate_object"),
            PluginRoute::new("chat.execute_tool", "execute_tool"),
            PluginRoute::new("chat.list_tools", "list_tools"),
            PluginRoute::new(LLM_REPLY, "reply"),
            PluginRoute::new(EMBED_REPLY, "embedded"),
        ]
    }

    fn before_route(&self, _: &mut ChatState, signal: &mut Cow<'_, Signal>) -> Flow {
        calls::claim(signal, "chat", LLM_REPLY, EMBED_REPLY);
        Flow::Continue
    }

    fn awaits_tool(&self, state: &ChatState, id: &str) -> bool {
        state.tools.contains_key(id)
    }

    fn tool_completed(&self, state: &mut ChatState, done: ToolDone<'_>) -> Vec<Directive> {
        let Some(awaited) = state.tools.remove(done.id) else {
            return Vec::new();
        };
        let result = done
            .result
            .clone()
            .map(|reply| reply.unwrap_or(json!({"ok": true})));
        if !awaited.in_round {
            return vec![tool_result(&awaited.request_id, &awaited.name, result)];
        }
        let Some(mut pending) = state.pending.remove(&awaited.request_id) else {
            return Vec::new();
        };
        if let Some(slot) = pending.round.iter_mut().find(|c| c.id == done.id) {
            slot.result = Some(result);
        }
        continue_round(state, awaited.request_id, pending, Self::STATE_KEY)
            .into_iter()
            .collect()
    }

    fn run(
        &self,
        state: &mut ChatState,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        let data = call.params();
        let action = call.signal.signal_type.as_str();
        match call.action {
            "message" => {
                let prompt = prompt_of(data).ok_or_else(|| needs_prompt(action))?;
                let mut messages = history(data, action)?;
                messages.push(ChatMessage::user(prompt));
                let mut request = self.request(data, messages, true);
                let tools = self.offered(call.tools);
                if !tools.is_empty() {
                    request.tools = Arc::from(tools);
                    request.tool_choice = ToolChoice::Auto;
                }
                Ok(self.start(state, &call, ChatKind::Message, request, None, "chat"))
            }
            "simple" => {
                let prompt = prompt_of(data).ok_or_else(|| needs_prompt(action))?;
                let request = self.request(data, vec![ChatMessage::user(prompt)], true);
                Ok(self.start(state, &call, ChatKind::Text, request, None, "chat"))
            }
            "complete" => {
                let mut messages = history(data, action)?;
                if let Some(prompt) = prompt_of(data) {
                    messages.push(ChatMessage::user(prompt));
                }
                if !messages.iter().any(|m| m.role == Role::User) {
                    return Err(ActionError::invalid_params(
                        action,
                        "it needs `messages` with a user message, or a `prompt`",
                    ));
                }
                let request = self.request(data, messages, false);
                Ok(self.start(state, &call, ChatKind::Text, request, None, "chat"))
            }
            "generate_object" => {
                let prompt = prompt_of(data).ok_or_else(|| needs_prompt(action))?;
                let schema = data
                    .get("schema")
                    .filter(|s| s.is_object())
                    .cloned()
                    .ok_or_else(|| {
                        ActionError::invalid_params(
                            action,
                            "it needs a `schema` (a JSON schema object)",
                        )
                    })?;
                let unenforced = schema::unenforced_keywords(&schema);
                if !unenforced.is_empty() {
                    return Err(ActionError::invalid_params(
                        action,
                        format!(
                            "the schema uses keywords the validator cannot check: {}",
                            unenforced.join(", ")
                        ),
                    ));
                }
                let name = data.get("name").and_then(Value::as_str).unwrap_or("object");
                Ok(self.object_request(state, &call, prompt, name, schema, "chat"))
            }
            "embed" => {
                let inputs: Vec<String> = match data.get("input") {
                    Some(Value::String(text)) => vec![text.clone()],
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(|i| i.as_str().map(str::to_string))
                        .collect::<Option<_>>()
                        .ok_or_else(|| {
                            ActionError::invalid_params(action, "`input` must be strings")
                        })?,
                    _ => {
                        return Err(ActionError::invalid_params(
                            action,
                            "it needs an `input` string or list of strings",
                        ));
                    }
                };
                let id = request_id(call.signal);
                let model = data
                    .get("model")
                    .and_then(Value::as_str)
                    .unwrap_or(&self.embedding_model)
                    .to_string();
                let call_id = format!("chat/{id}/1");
                state.pending.insert(
                    id.clone(),
                    PendingChat {
                        kind: ChatKind::Embed,
                        signal_type: call.signal.signal_type.clone(),
                        call_id: call_id.clone(),
                        turns: 1,
                        request: LlmRequest::new(model.clone(), Vec::new()),
                        schema: None,
                        repaired: false,
                        tool_calls: Vec::new(),
                        round: Vec::new(),
                        usage: Usage::default(),
                        scope: scope_of(data),
                    },
                );
                Ok(vec![Directive::Embed(Box::new(EmbedCall {
                    call_id,
                    request_id: id,
                    request: EmbeddingRequest { model, inputs },
                }))])
            }
            "execute_tool" => {
                let name = data.get("name").and_then(Value::as_str).ok_or_else(|| {
                    ActionError::invalid_params(action, "it needs the tool's `name`")
                })?;
                let arguments = data.get("arguments").cloned().unwrap_or(Value::Null);
                let id = request_id(call.signal);
                let tool_id = format!("chat/{id}/execute");
                let result = match self.start_tool(call.tools, &tool_id, name, arguments) {
                    Ok(None) => {
                        // An async action: answered when its completion comes back.
                        state.tools.insert(
                            tool_id,
                            AwaitedTool {
                                request_id: id,
                                name: name.to_string(),
                                in_round: false,
                            },
                        );
                        return Ok(Vec::new());
                    }
                    Ok(Some(result)) => Ok(result),
                    Err(error) => Err(error),
                };
                Ok(vec![tool_result(&id, name, result)])
            }
            "list_tools" => {
                let tools = self.offered(call.tools);
                Ok(vec![Directive::Emit(Signal::with_id(
                    format!("{}/tools", call.instruction.id),
                    CHAT_TOOLS,
                    json!({"tools": tools}),
                ))])
            }
            "reply" => self.on_reply(state, &call, "chat"),
            "embedded" => self.on_embedded(state, &call),
            other => Err(ActionError::new(format!("Chat has no action `{other}`"))),
        }
    }
}

impl Chat {
    /// Starts a structured-output request (also what Planning builds on).
    pub(crate) fn object_request(
        &self,
        state: &mut ChatState,
        call: &PluginCall<'_>,
        prompt: &str,
        name: &str,
        schema: Value,
        key: &str,
    ) -> Vec<Directive> {
        let data = call.params();
        let instructions = format!(
            "Answer with one JSON value that matches this JSON schema, and nothing else (no prose, no code fence):\n{schema}"
        );
        let mut request = self.request(data, vec![ChatMessage::user(prompt)], true);
        request.messages.insert(
            request
                .messages
                .iter()
                .take_while(|m| m.role == Role::System)
                .count(),
            ChatMessage::system(instructions),
        );
        request.response_format = Some(ResponseFormat {
            name: name.to_string(),
            schema: schema.clone(),
        });
        self.start(state, call, ChatKind::Object, request, Some(schema), key)
    }
}
