//! Policy: checks on what goes to the model and what comes back from it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{POLICY_VIOLATION, is_request, request_texts, rewrite_to_request_error};
use crate::ai::{LLM_DELTA, LLM_RESPONSE, LlmError, LlmErrorKind, LlmReply, TOOL_RESULT};
use crate::plugin::{Flow, Plugin};
use crate::signal::Signal;

/// What Policy does with a violation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyMode {
    /// Rewrite the request to `ai.request.error` (reason `policy_violation`).
    #[default]
    Enforce,
    /// Let it through; count it and log a warning.
    Monitor,
}

impl From<&str> for PolicyMode {
    /// `"monitor"` is [`PolicyMode::Monitor`]; anything else enforces (the compiler accepts
    /// only `enforce` and `monitor`).
    fn from(word: &str) -> Self {
        if word == "monitor" {
            PolicyMode::Monitor
        } else {
            PolicyMode::Enforce
        }
    }
}

/// Validates the prompts of requests (`chat.*`, `planning.*`, `ai.query`, `ai.*.query`,
/// `reasoning.*.run`): their length, control characters, and phrases refused outright
/// (compared without case). In `enforce` mode a violation rewrites the request into
/// `ai.request.error` with reason `policy_violation`. Whatever the mode, a malformed
/// `ai.llm.response` or `ai.tool.result` becomes a typed error result for its call (or
/// `ai.request.error` with reason `malformed_result` when it names no call), and
/// `ai.llm.delta` text, incoming or emitted, loses its control characters and is cut to
/// `max_delta_chars`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// `enforce` (default) or `monitor`.
    pub mode: PolicyMode,
    /// The longest prompt, in characters (default 20,000).
    pub max_prompt_chars: usize,
    /// Refuse prompts with control characters other than newline, tab and carriage return
    /// (default true).
    pub block_control_chars: bool,
    /// Phrases a prompt may not contain, compared without case.
    pub deny_patterns: Vec<String>,
    /// The longest stream delta kept, in characters (default 4,000).
    pub max_delta_chars: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            mode: PolicyMode::Enforce,
            max_prompt_chars: 20_000,
            block_control_chars: true,
            deny_patterns: vec![
                "ignore all previous instructions".into(),
                "ignore previous instructions".into(),
            ],
            max_delta_chars: 4_000,
        }
    }
}

/// Policy's state: what it has seen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyState {
    /// Violations found (refused in `enforce` mode, let through in `monitor` mode).
    pub violations: u64,
    /// Malformed results normalised.
    pub normalised: u64,
}

impl Policy {
    /// Why a request's text violates the policy, if it does.
    pub fn violation(&self, text: &str) -> Option<String> {
        // A text of at most `max_prompt_chars` bytes has at most as many characters.
        let chars = if text.len() > self.max_prompt_chars {
            text.chars().count()
        } else {
            0
        };
        if chars > self.max_prompt_chars {
            return Some(format!(
                "the prompt is {chars} characters, over the limit of {}",
                self.max_prompt_chars
            ));
        }
        if self.block_control_chars
            && let Some(c) = text.chars().find(|c| is_refused_control(*c))
        {
            return Some(format!(
                "the prompt contains the control character U+{:04X}",
                c as u32
            ));
        }
        if !self.deny_patterns.is_empty() {
            let lower = text.to_lowercase();
            if let Some(p) = self
                .deny_patterns
                .iter()
                .find(|p| lower.contains(&p.to_lowercase()))
            {
                return Some(format!("the prompt contains the refused phrase `{p}`"));
            }
        }
        None
    }

    /// Whether a delta holds control characters or is too long.
    fn delta_needs_cleaning(&self, signal: &Signal) -> bool {
        signal
            .data
            .get("delta")
            .and_then(Value::as_str)
            .is_some_and(|delta| {
                delta.chars().any(is_refused_control) || delta.len() > self.max_delta_chars
            })
    }

    fn clean_delta(&self, signal: &mut Signal) {
        if !self.delta_needs_cleaning(signal) {
            return;
        }
        if let Some(Value::String(delta)) = signal.data.get_mut("delta") {
            *delta = delta
                .chars()
                .filter(|c| !is_refused_control(*c))
                .take(self.max_delta_chars)
                .collect();
        }
    }
}

fn is_refused_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\n' | '\t' | '\r')
}

impl Plugin for Policy {
    const NAME: &'static str = "Policy";
    const STATE_KEY: &'static str = "policy";
    type State = PolicyState;

    fn mount(&self) -> PolicyState {
        PolicyState::default()
    }

    fn before_route(&self, state: &mut PolicyState, signal: &mut Cow<'_, Signal>) -> Flow {
        let t = signal.signal_type.as_str();
        // Only a violation or a malformed result copies the signal (to rewrite it).
        if is_request(t) {
            let found = request_texts(&signal.data)
                .into_iter()
                .find_map(|text| self.violation(text));
            if let Some(message) = found {
                state.violations += 1;
                match self.mode {
                    PolicyMode::Enforce => {
                        rewrite_to_request_error(signal.to_mut(), POLICY_VIOLATION, message);
                    }
                    PolicyMode::Monitor => {
                        tracing::warn!(signal_type = t, %message, "policy violation (monitor mode)");
                    }
                }
            }
        } else if t == LLM_RESPONSE {
            let well_formed = LlmReply::deserialize(&signal.data)
                .is_ok_and(|r| r.response.is_some() || r.error.is_some());
            if !well_formed {
                state.normalised += 1;
                normalise(signal.to_mut(), |call_id| {
                    serde_json::to_value(LlmReply::new(
                        call_id,
                        Err(LlmError::new(
                            LlmErrorKind::Malformed,
                            "the model's reply was malformed",
                        )),
                    ))
                    .unwrap_or(Value::Null)
                });
            }
        } else if t == TOOL_RESULT {
            let well_formed = signal.data.get("call_id").is_some_and(Value::is_string)
                && (signal.data.get("result").is_some() || signal.data.get("error").is_some());
            if !well_formed {
                state.normalised += 1;
                normalise(
                    signal.to_mut(),
                    |call_id| json!({"call_id": call_id, "error": "the tool result was malformed"}),
                );
            }
        } else if t == LLM_DELTA && self.delta_needs_cleaning(signal) {
            self.clean_delta(signal.to_mut());
        }
        Flow::Continue
    }

    /// A reply with a response or an error is well formed: the check leaves it alone.
    fn changes_model_replies(&self) -> bool {
        false
    }

    /// Its outbound hook cleans deltas only.
    fn hears_ai_events(&self) -> bool {
        false
    }

    fn after_emit(&self, _: &mut PolicyState, signal: &mut Signal) {
        if signal.signal_type == LLM_DELTA {
            self.clean_delta(signal);
        }
    }
}

/// A malformed result that names its call becomes that call's typed error; one that names none
/// cannot reach any call and becomes `ai.request.error`.
fn normalise(signal: &mut Signal, error_for: impl FnOnce(&str) -> Value) {
    let call_id = signal
        .data
        .get("call_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    match call_id {
        Some(call_id) => signal.data = error_for(&call_id),
        None => rewrite_to_request_error(
            signal,
            "malformed_result",
            format!("a malformed `{}` that names no call", signal.signal_type),
        ),
    }
}
