//! The AI plugins: capabilities an agent mounts, each with the signal contract of the system
//! Stratagem reimplements.
//!
//! - [`ModelRouting`]: a model alias per signal type (exact beats wildcard; an explicit
//!   `model` in the data bypasses it).
//! - [`Policy`]: prompt checks on requests, rewritten to `ai.request.error` with reason
//!   `policy_violation`; malformed model and tool results normalised to typed errors; stream
//!   deltas cleaned and cut.
//! - [`Quota`]: a rolling window per scope over requests and tokens; over budget, requests are
//!   rewritten to `ai.request.error` with reason `quota_exceeded`; `quota.status`,
//!   `quota.reset`.
//! - [`Chat`]: model calls as signals (`chat.message` with tools, `chat.simple`,
//!   `chat.complete`, `chat.embed`, `chat.generate_object`) and the agent's actions as tools
//!   (`chat.execute_tool`, `chat.list_tools`).
//! - [`Planning`]: `planning.plan|decompose|prioritize`, answered with typed structures.
//! - [`Reasoning`]: `reasoning.<strategy>.run` for the eight strategies, on any agent.
//! - [`Retrieval`]: memories per namespace (`retrieval.upsert|recall|clear`) ranked by BM25,
//!   added to the prompts of requests.
//!
//! An AI agent declared with `#[agent]` or in a `.agent` file mounts ModelRouting then Policy
//! unless it says otherwise; the hooks run in mount order.

mod bm25;
mod calls;
mod chat;
mod model_routing;
mod planning;
mod policy;
mod quota;
mod reasoning;
mod retrieval;
#[cfg(test)]
mod tests;

pub use bm25::Bm25Index;
pub use chat::{
    AwaitedTool, CHAT_EMBEDDED, CHAT_OBJECT, CHAT_RESPONSE, CHAT_TOOL_RESULT, CHAT_TOOLS, Chat,
    ChatError, ChatKind, ChatState, PendingChat, RoundCall, parse_object, reason,
};
pub use model_routing::{ModelRouting, RouteCache};
pub use planning::{
    DECOMPOSED, Decomposition, PLANNED, PRIORITIZED, Plan, PlanStep, Planning, Prioritization,
    RankedTask, Subgoal,
};
pub use policy::{Policy, PolicyMode, PolicyState};
pub use quota::{Quota, QuotaState, ScopeUsage};
pub use reasoning::{Reasoning, ReasoningRun, ReasoningState, RunOptions};
pub use retrieval::{Memory, Namespace, Retrieval, RetrievalState};

use serde_json::{Value, json};

use crate::signal::Signal;

/// The reason of a request Policy refused.
pub const POLICY_VIOLATION: &str = "policy_violation";
/// The reason of a request Quota refused.
pub const QUOTA_EXCEEDED: &str = "quota_exceeded";

/// Whether a signal type starts an AI request: `chat.*`, `planning.*`, `ai.query`,
/// `ai.*.query` and `reasoning.*.run`.
pub fn is_request(signal_type: &str) -> bool {
    let mut parts = signal_type.split('.');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("chat" | "planning"), Some(_), None, None)
            | (Some("ai"), Some("query"), None, None)
            | (Some("ai"), Some(_), Some("query"), None)
            | (Some("reasoning"), Some(_), Some("run"), None)
    )
}

/// The request id a signal carries (`request_id` in its data), or its own id.
pub fn request_id(signal: &Signal) -> String {
    signal
        .data
        .get("request_id")
        .and_then(Value::as_str)
        .map_or_else(|| signal.id.clone(), str::to_string)
}

/// Rewrites `signal` into `ai.request.error` with `reason`: data `{"request_id", "reason",
/// "message", "signal_type"}` (the type it had).
pub fn rewrite_to_request_error(signal: &mut Signal, reason: &str, message: String) {
    let request_id = request_id(signal);
    let original = std::mem::replace(
        &mut signal.signal_type,
        crate::ai::REQUEST_ERROR.to_string(),
    );
    signal.data = json!({
        "request_id": request_id,
        "reason": reason,
        "message": message,
        "signal_type": original,
    });
}

/// The texts of a request a check reads: the data itself when it is a string, else its
/// `prompt`, `query` and `message` strings and the `content` of its `messages`.
pub(crate) fn request_texts(data: &Value) -> Vec<&str> {
    match data {
        Value::String(text) => vec![text],
        Value::Object(map) => {
            let mut texts: Vec<&str> = ["prompt", "query", "message"]
                .iter()
                .filter_map(|k| map.get(*k).and_then(Value::as_str))
                .collect();
            if let Some(messages) = map.get("messages").and_then(Value::as_array) {
                texts.extend(
                    messages
                        .iter()
                        .filter_map(|m| m.get("content").and_then(Value::as_str)),
                );
            }
            texts
        }
        _ => Vec::new(),
    }
}

/// The tool policy of Chat and Reasoning: `name` is offered when `allow` is empty or lists it,
/// and `deny` does not.
pub(crate) fn tool_allowed(allow: &[String], deny: &[String], name: &str) -> bool {
    (allow.is_empty() || allow.iter().any(|t| t == name)) && !deny.iter().any(|t| t == name)
}

/// Whether the signal type matches a pattern where `*` is one segment (ModelRouting's keys).
pub(crate) fn matches_one_star(pattern: &str, signal_type: &str) -> bool {
    let mut p = pattern.split('.');
    let mut t = signal_type.split('.');
    loop {
        match (p.next(), t.next()) {
            (None, None) => return true,
            (Some("*"), Some(_)) => {}
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}
