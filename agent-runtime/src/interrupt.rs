//! Typed human-in-the-loop interrupts: where an agent stops and waits for a person.
//!
//! A definition declares each interrupt with the payload type it shows and the resume type it
//! expects (`interrupt approval(RefundRequest) -> Decision`), and the rows that raise it
//! (`... ask approval`). Raising one records it as pending inside the agent (so it is in every
//! checkpoint), and returns a [`Directive::Interrupt`](crate::Directive::Interrupt) whose
//! [`INTERRUPT_SIGNAL`] carries a deterministic id: `<agent id>/<interrupt>/<n>`, `n` counting
//! the interrupts the agent raised. A host that parks agents (the server with
//! `Options::checkpoint_store`) writes the checkpoint before the signal goes out.
//!
//! Only `resume(id, value)` answers one ([`RESUME_SIGNAL`] on the wire): the value is decoded
//! as the declared resume type, and the interrupt's event fires with it as its parameters.
//! Pending interrupts are independent and resume in any order; an unknown or already answered
//! id, or a value of the wrong shape, is an [`InterruptError`] and changes nothing. What ran
//! before the interrupt (the row that raised it) never runs again: resuming only fires the
//! interrupt's own event.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The type of the signal an agent emits when it raises an interrupt. Its id is the
/// interrupt's id; its data is a [`PendingInterrupt`] (`{"id", "interrupt", "payload",
/// "resume_type"}`).
pub const INTERRUPT_SIGNAL: &str = "stratagem.interrupt";

/// The type of the signal that answers an interrupt: data `{"id": ..., "value": ...}`. Hosts
/// send it for `resume(id, value)`; the FSM strategy routes it to itself.
pub const RESUME_SIGNAL: &str = "stratagem.resume";

/// What a definition declares about one interrupt (generated into `FsmSpec::INTERRUPTS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterruptSpec {
    /// Its name, which is also the event its answer fires.
    pub name: &'static str,
    /// The payload type, as written.
    pub payload: &'static str,
    /// The resume type, as written.
    pub resume: &'static str,
}

/// An interrupt waiting for its answer: what the [`INTERRUPT_SIGNAL`] carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingInterrupt {
    /// `<agent id>/<interrupt>/<n>`.
    pub id: String,
    /// The declared interrupt.
    pub interrupt: String,
    /// The payload shown to the person, serialized from the payload type.
    pub payload: Value,
    /// The type the answer must have, as declared.
    pub resume_type: String,
}

/// The interrupts of one agent: how many it raised (so ids never repeat and an old id is
/// recognized as answered) and those still pending, in the order they were raised.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interrupts {
    /// How many interrupts the agent raised so far.
    #[serde(default)]
    pub raised: u64,
    /// Those still waiting for an answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingInterrupt>,
}

impl Interrupts {
    /// Whether nothing was ever raised (then the checkpoint leaves the field out).
    pub fn is_empty(&self) -> bool {
        self.raised == 0 && self.pending.is_empty()
    }

    /// Records a new pending interrupt of agent `agent_id` and returns it.
    pub fn raise(
        &mut self,
        agent_id: &str,
        spec: &InterruptSpec,
        payload: Value,
    ) -> PendingInterrupt {
        self.raised += 1;
        let pending = PendingInterrupt {
            id: format!("{agent_id}/{}/{}", spec.name, self.raised),
            interrupt: spec.name.to_string(),
            payload,
            resume_type: spec.resume.to_string(),
        };
        self.pending.push(pending.clone());
        pending
    }

    /// Where pending interrupt `id` is, or why it cannot be answered.
    pub fn find(&self, agent: &str, agent_id: &str, id: &str) -> Result<usize, InterruptError> {
        if let Some(at) = self.pending.iter().position(|p| p.id == id) {
            return Ok(at);
        }
        // One of ours, raised earlier and no longer pending: it was answered.
        let counter = id
            .strip_prefix(agent_id)
            .and_then(|rest| rest.strip_prefix('/'))
            .and_then(|rest| rest.rsplit_once('/'))
            .and_then(|(_, n)| n.parse::<u64>().ok());
        if counter.is_some_and(|n| n >= 1 && n <= self.raised) {
            return Err(InterruptError::AlreadyAnswered {
                agent: agent.to_string(),
                id: crate::quote::clip(id.to_string()),
            });
        }
        Err(InterruptError::Unknown {
            agent: agent.to_string(),
            id: crate::quote::clip(id.to_string()),
            pending: self.pending.iter().map(|p| p.id.clone()).collect(),
        })
    }
}

/// The data of a [`RESUME_SIGNAL`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resume {
    /// The interrupt answered.
    pub id: String,
    /// The answer, which must decode as the interrupt's resume type.
    #[serde(default)]
    pub value: Value,
}

/// `agent.cmd(Resume { id, value })` answers pending interrupt `id` through the agent's
/// strategy ([`Strategy::resume`](crate::Strategy::resume)).
impl<S: crate::AgentSpec> crate::Command<S> for Resume {
    type Output = Result<Vec<crate::Directive>, crate::AgentError>;
    fn run(self, agent: &mut crate::Agent<S>) -> Self::Output {
        <S::Strategy as crate::Strategy<S>>::resume(agent, &self.id, self.value)
    }
}

/// Why `resume(id, value)` was refused; the agent is unchanged and the interrupt (if any)
/// still pending.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum InterruptError {
    /// No interrupt with this id was ever raised by this agent.
    #[error(
        "agent `{agent}` has no interrupt `{id}`; pending: {}",
        crate::error::list_or_none(pending)
    )]
    Unknown {
        /// The agent type.
        agent: String,
        /// The id asked for.
        id: String,
        /// The ids still pending.
        pending: Vec<String>,
    },
    /// The interrupt was answered before: an answer is taken once.
    #[error(
        "interrupt `{id}` of agent `{agent}` was already answered; an interrupt takes one answer"
    )]
    AlreadyAnswered {
        /// The agent type.
        agent: String,
        /// The id asked for.
        id: String,
    },
    /// The value does not decode as the interrupt's resume type.
    #[error("interrupt `{id}` (`{interrupt}`) expects a `{expected}`: {error}")]
    WrongType {
        /// The id answered.
        id: String,
        /// The declared interrupt.
        interrupt: String,
        /// The declared resume type.
        expected: String,
        /// Why the value is not one.
        error: String,
    },
    /// The resume signal's data is not `{"id": ..., "value": ...}`.
    #[error("malformed `{RESUME_SIGNAL}` data: {error}; send `{{\"id\": ..., \"value\": ...}}`")]
    Malformed {
        /// Why.
        error: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: InterruptSpec = InterruptSpec {
        name: "approval",
        payload: "Request",
        resume: "Decision",
    };

    #[test]
    fn ids_are_deterministic_and_answered_ids_are_told_apart_from_unknown_ones() {
        let mut interrupts = Interrupts::default();
        let first = interrupts.raise("r-1", &SPEC, Value::Null);
        let second = interrupts.raise("r-1", &SPEC, Value::Null);
        assert_eq!(first.id, "r-1/approval/1");
        assert_eq!(second.id, "r-1/approval/2");
        assert_eq!(interrupts.find("Refund", "r-1", "r-1/approval/2"), Ok(1));
        interrupts.pending.remove(0);
        assert!(matches!(
            interrupts.find("Refund", "r-1", "r-1/approval/1"),
            Err(InterruptError::AlreadyAnswered { .. })
        ));
        for unknown in [
            "r-1/approval/3",
            "r-2/approval/1",
            "nonsense",
            "r-1/approval/0",
        ] {
            let error = interrupts.find("Refund", "r-1", unknown).unwrap_err();
            assert!(
                matches!(&error, InterruptError::Unknown { pending, .. } if pending == &["r-1/approval/2"]),
                "{unknown}: {error}"
            );
        }
    }
}
