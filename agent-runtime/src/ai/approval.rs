//! Tools that need a person's approval: `approve = [refund]` on a ReAct (or Adaptive) agent.
//!
//! When the model calls such a tool, the call is not run: the agent raises an interrupt
//! ([`crate::interrupt`]) named after the tool, whose payload is a [`ToolApproval`] (the tool
//! and its arguments), and the round waits. `resume(id, Approval { approve, note })` answers
//! it: approved, the tool runs once (sync inside `cmd`, async through the host); refused, the
//! model is told so as the call's result (with the note), and the round goes on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the person is shown for a tool call waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolApproval {
    /// The request the call belongs to.
    pub request_id: String,
    /// The strategy's id for the call.
    pub call_id: String,
    /// The tool the model called.
    pub tool: String,
    /// The arguments the model gave, checked against the tool's schema.
    pub arguments: Value,
}

/// A person's answer to a tool call waiting for approval: the resume type of every approval
/// interrupt.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// Whether the tool may run.
    pub approve: bool,
    /// A word for the model: with a refusal, why (the model reads it as the call's result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Approval {
    /// Lets the call run.
    pub fn approve() -> Self {
        Approval {
            approve: true,
            note: None,
        }
    }

    /// Refuses the call, telling the model `note`.
    pub fn refuse(note: impl Into<String>) -> Self {
        Approval {
            approve: false,
            note: Some(note.into()),
        }
    }

    /// What the model reads as the result of a refused call.
    pub(crate) fn refusal(&self) -> String {
        match &self.note {
            Some(note) => format!("a person refused this call: {note}"),
            None => "a person refused this call".to_string(),
        }
    }
}

/// The payload type of an approval interrupt, as its signal names it.
pub(crate) const PAYLOAD_TYPE: &str = "ToolApproval";
/// The resume type of an approval interrupt, as its signal names it.
pub(crate) const RESUME_TYPE: &str = "Approval";
