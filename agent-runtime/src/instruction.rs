//! Instructions: what `cmd` receives.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::action::{Action, Outcome};
use crate::error::ActionError;

/// How the host runs an async action: Jido's defaults unless an action or instruction overrides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOptions {
    /// How long one attempt may take.
    #[serde(with = "duration_ms")]
    pub timeout: Duration,
    /// How many times a retryable failure is retried (so at most `max_retries + 1` attempts).
    pub max_retries: u32,
    /// The wait before the first retry; it doubles on each further retry.
    #[serde(with = "duration_ms")]
    pub backoff: Duration,
    /// The longest wait between two attempts.
    #[serde(with = "duration_ms")]
    pub backoff_cap: Duration,
}

impl ExecOptions {
    /// Timeout 30 s, one retry, backoff 250 ms doubling, capped at 30 s.
    pub const DEFAULT: ExecOptions = ExecOptions {
        timeout: Duration::from_secs(30),
        max_retries: 1,
        backoff: Duration::from_millis(250),
        backoff_cap: Duration::from_secs(30),
    };

    /// The wait before retry number `retry` (0-based): `backoff * 2^retry`, capped.
    pub fn backoff_for(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry).unwrap_or(u32::MAX);
        self.backoff
            .checked_mul(factor)
            .unwrap_or(self.backoff_cap)
            .min(self.backoff_cap)
    }
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions::DEFAULT
    }
}

mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// An action (or, for an FSM, an event) plus its parameters plus context.
///
/// ```
/// use agent_runtime::Instruction;
/// use serde_json::json;
/// let i = Instruction::new("charge", json!({"amount": 12.5})).with_id("i-1");
/// assert_eq!(i.action, "charge");
/// assert_eq!(i.id, "i-1");
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Instruction {
    /// Unique id; errors and async results refer to it.
    pub id: String,
    /// The action or event this instruction names.
    pub action: String,
    /// The parameters, deserialized into the action's parameter type when it runs.
    #[serde(default)]
    pub params: Value,
    /// When the result stops being useful (informational for sync actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DateTime<Utc>>,
    /// Overrides the action's execution options when it is async.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecOptions>,
    /// Set when this instruction carries the outcome of an async action the host ran.
    #[serde(skip)]
    pub outcome: Option<Result<Outcome, ActionError>>,
}

impl Instruction {
    /// An instruction for the named action with JSON parameters and a fresh id.
    pub fn new(action: impl Into<String>, params: Value) -> Self {
        Instruction {
            id: crate::journal::context::fresh_id(),
            action: action.into(),
            params,
            deadline: None,
            exec: None,
            outcome: None,
        }
    }

    /// An instruction for action `A` with typed parameters.
    ///
    /// Fails only if the parameters do not serialize to JSON (a map with non-string keys, say).
    pub fn of<A, S>(params: A::Params) -> Result<Self, serde_json::Error>
    where
        A: Action<S>,
        A::Params: Serialize,
    {
        Ok(Instruction::new(A::NAME, serde_json::to_value(params)?))
    }

    /// The outcome of an async action, to feed back through `cmd`.
    pub fn completed(of: &Instruction, outcome: Result<Outcome, ActionError>) -> Self {
        Instruction {
            id: of.id.clone(),
            action: of.action.clone(),
            params: Value::Null,
            deadline: of.deadline,
            exec: of.exec,
            outcome: Some(outcome),
        }
    }

    /// Sets the id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// Sets the deadline.
    #[must_use]
    pub fn with_deadline(mut self, deadline: DateTime<Utc>) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Overrides the execution options.
    #[must_use]
    pub fn with_exec(mut self, exec: ExecOptions) -> Self {
        self.exec = Some(exec);
        self
    }

    /// Whether this instruction carries an async action's outcome.
    pub fn is_completion(&self) -> bool {
        self.outcome.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let e = ExecOptions::DEFAULT;
        assert_eq!(e.backoff_for(0), Duration::from_millis(250));
        assert_eq!(e.backoff_for(1), Duration::from_millis(500));
        assert_eq!(e.backoff_for(2), Duration::from_secs(1));
        assert_eq!(e.backoff_for(7), Duration::from_secs(30));
        assert_eq!(e.backoff_for(40), Duration::from_secs(30));
    }

    #[test]
    fn instructions_round_trip_without_outcome() {
        let i = Instruction::new("a", serde_json::json!({"x": 1}))
            .with_exec(ExecOptions {
                max_retries: 3,
                ..ExecOptions::DEFAULT
            })
            .with_id("1");
        let back: Instruction = serde_json::from_str(&serde_json::to_string(&i).unwrap()).unwrap();
        assert_eq!(back.id, "1");
        assert_eq!(back.params, i.params);
        assert_eq!(back.exec, i.exec);
        assert!(!back.is_completion());
    }
}
