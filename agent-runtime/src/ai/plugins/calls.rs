//! Model calls made by plugins (Chat, Planning, Retrieval's embeddings): their ids are
//! `<state key>/<request>/<n>`, and the plugin's hook renames the host's answers to them into
//! the plugin's own reply types, so only the plugin's routes see them (never an AI strategy's).

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::ai::{EMBED_RESPONSE, LLM_RESPONSE, LlmError, LlmReply, LlmResponse, USAGE, Usage};
use crate::directive::Directive;
use crate::signal::Signal;

/// Renames `ai.llm.response` / `ai.embed.response` answering one of plugin `key`'s calls to
/// `llm_type` / `embed_type`.
pub(crate) fn claim(signal: &mut Cow<'_, Signal>, key: &str, llm_type: &str, embed_type: &str) {
    let renamed = match signal.signal_type.as_str() {
        LLM_RESPONSE => llm_type,
        EMBED_RESPONSE => embed_type,
        _ => return,
    };
    let ours = signal
        .data
        .get("call_id")
        .and_then(Value::as_str)
        .is_some_and(|id| request_of(id, key).is_some());
    if ours {
        signal.to_mut().signal_type = renamed.to_string();
    }
}

/// The request of call `call_id` when plugin `key` made it (`chat/<request>/<n>`).
pub(crate) fn request_of<'a>(call_id: &'a str, key: &str) -> Option<&'a str> {
    let rest = call_id.strip_prefix(key)?.strip_prefix('/')?;
    let (request, turn) = rest.rsplit_once('/')?;
    (!request.is_empty() && !turn.is_empty() && turn.bytes().all(|b| b.is_ascii_digit()))
        .then_some(request)
}

/// A model answer as a plugin reads it.
pub(crate) struct ModelAnswer {
    pub(crate) call_id: String,
    pub(crate) result: Result<LlmResponse, LlmError>,
}

/// The answer in an `ai.llm.response`'s data, or `None` when it holds neither a response nor
/// an error.
pub(crate) fn model_answer(data: &Value) -> Option<ModelAnswer> {
    let reply: LlmReply = serde_json::from_value(data.clone()).ok()?;
    let result = match (reply.response, reply.error) {
        (_, Some(error)) => Err(error),
        (Some(response), None) => Ok(response),
        (None, None) => return None,
    };
    Some(ModelAnswer {
        call_id: reply.call_id,
        result,
    })
}

/// `ai.usage` for one call: data `{"request_id", "call_id", "usage", "scope"?}`.
pub(crate) fn usage_signal(
    request_id: &str,
    call_id: &str,
    usage: Usage,
    scope: Option<&str>,
) -> Directive {
    let mut data = json!({"request_id": request_id, "call_id": call_id, "usage": usage});
    if let Some(scope) = scope {
        data["scope"] = json!(scope);
    }
    Directive::Emit(Signal::with_id(format!("{call_id}/usage"), USAGE, data))
}

/// `ai.request.error` for a request a plugin could not answer: data `{"request_id", "reason",
/// "message", "signal_type"}` plus `extra`'s fields.
pub(crate) fn request_error(
    request_id: &str,
    signal_type: &str,
    reason: &str,
    message: String,
    extra: Value,
) -> Directive {
    let mut data = json!({
        "request_id": request_id,
        "reason": reason,
        "message": message,
        "signal_type": signal_type,
    });
    if let (Value::Object(data), Value::Object(extra)) = (&mut data, extra) {
        data.extend(extra);
    }
    Directive::Emit(Signal::with_id(
        format!("{request_id}/error"),
        crate::ai::REQUEST_ERROR,
        data,
    ))
}
