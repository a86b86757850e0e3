//! The checkpoint format.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::{Agent, AgentSpec};
use crate::instruction::{ExecOptions, Instruction};
use crate::signal::Signal;

/// The `format` every checkpoint declares.
pub const FORMAT: &str = "stratagem.checkpoint";

/// The checkpoint format version this build writes and reads.
pub const VERSION: u32 = 1;

/// Everything needed to bring an agent back exactly as it was.
///
/// Written as JSON: `{"format": "stratagem.checkpoint", "version": 1, "agent": {...}, "timers":
/// [...], "cron": [...], "in_flight": [...], "saved_at": ...}`, where `agent` is the agent's own
/// serialization (`{"agent": NAME, "id", "state", "strategy"}`).
///
/// ```
/// use agent_runtime::store::Checkpoint;
/// let bytes = br#"{"format": "stratagem.checkpoint", "version": 9, "agent": {}}"#;
/// let err = Checkpoint::decode(bytes).unwrap_err();
/// assert!(err.to_string().contains("version 9"), "{err}");
/// assert!(Checkpoint::decode(b"\x00garbage").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The agent: `{"agent": NAME, "id", "state", "strategy"}`.
    pub agent: Value,
    /// `Schedule` timers that had not fired, in firing order.
    #[serde(default)]
    pub timers: Vec<PendingTimer>,
    /// Cron jobs, by id.
    #[serde(default)]
    pub cron: Vec<CronEntry>,
    /// Async instructions that were running; a thawed server runs them again.
    #[serde(default)]
    pub in_flight: Vec<PendingInstruction>,
    /// Model calls (AI strategies) that were running; a thawed server makes them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub llm_calls: Vec<crate::ai::LlmCall>,
    /// When the checkpoint was taken.
    pub saved_at: DateTime<Utc>,
}

/// A `Schedule` timer that had not fired when the checkpoint was taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingTimer {
    /// When it is due, on the wall clock: a timer keeps running while its agent is hibernated,
    /// and one that fell due meanwhile fires as soon as the agent is thawed.
    pub due_at: DateTime<Utc>,
    /// What it delivers.
    pub signal: Signal,
}

/// A cron job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CronEntry {
    /// The job's id.
    pub id: String,
    /// Its cron expression.
    pub expression: String,
    /// What it delivers on each firing.
    pub signal: Signal,
}

/// An async instruction that was running.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingInstruction {
    /// The instruction (its outcome was not known yet).
    pub instruction: Instruction,
    /// How it runs.
    pub exec: ExecOptions,
}

impl PartialEq for PendingInstruction {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.instruction, &other.instruction);
        a.id == b.id
            && a.action == b.action
            && a.params == b.params
            && a.deadline == b.deadline
            && a.exec == b.exec
            && self.exec == other.exec
    }
}

/// A checkpoint could not be written or restored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// There is no checkpoint under the key.
    #[error(
        "no checkpoint is stored under this key; hibernate or checkpoint the agent first and thaw it by the same key (its id by default)"
    )]
    NotFound,
    /// The bytes are not a checkpoint.
    #[error("the checkpoint is corrupt: {detail}")]
    Corrupt {
        /// What is wrong.
        detail: String,
    },
    /// A well-formed checkpoint that this build or this agent type cannot restore.
    #[error("the checkpoint is incompatible: {detail}")]
    Incompatible {
        /// What does not match, with a hint.
        detail: String,
    },
    /// The agent could not be serialized.
    #[error("the agent cannot be serialized: {detail}")]
    Serialize {
        /// The serializer's message.
        detail: String,
    },
}

#[derive(Serialize)]
struct WireRef<'a> {
    format: &'static str,
    version: u32,
    #[serde(flatten)]
    body: &'a Checkpoint,
}

impl Checkpoint {
    /// The checkpoint as bytes (JSON).
    pub fn encode(&self) -> Result<Vec<u8>, CheckpointError> {
        serde_json::to_vec(&WireRef {
            format: FORMAT,
            version: VERSION,
            body: self,
        })
        .map_err(|e| CheckpointError::Serialize {
            detail: e.to_string(),
        })
    }

    /// Reads a checkpoint. Anything that is not a checkpoint of this format is
    /// [`CheckpointError::Corrupt`]; one of another format version is
    /// [`CheckpointError::Incompatible`]. Never panics.
    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointError> {
        let corrupt = |detail: String| CheckpointError::Corrupt { detail };
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| corrupt(format!("it is not valid JSON ({e})")))?;
        let Value::Object(mut map) = value else {
            return Err(corrupt("it is not a JSON object".to_string()));
        };
        match map.remove("format") {
            Some(Value::String(f)) if f == FORMAT => {}
            Some(other) => {
                return Err(corrupt(format!(
                    "its `format` is {other}, not \"{FORMAT}\""
                )));
            }
            None => return Err(corrupt(format!("it has no `format` (\"{FORMAT}\")"))),
        }
        match map.remove("version").as_ref().and_then(Value::as_u64) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(v) => {
                return Err(CheckpointError::Incompatible {
                    detail: format!(
                        "it was written in format version {v}; this build reads version {VERSION}"
                    ),
                });
            }
            None => return Err(corrupt("it has no numeric `version`".to_string())),
        }
        serde_json::from_value(Value::Object(map)).map_err(|e| corrupt(e.to_string()))
    }

    /// The name of the agent type the checkpoint holds.
    pub fn agent_name(&self) -> Option<&str> {
        self.agent.get("agent").and_then(Value::as_str)
    }

    /// The id of the agent the checkpoint holds.
    pub fn agent_id(&self) -> Option<&str> {
        self.agent.get("id").and_then(Value::as_str)
    }

    /// The agent, typed. Another agent type, or a state that no longer fits `S` (its type
    /// changed since the checkpoint was written), is [`CheckpointError::Incompatible`].
    pub fn restore<S: AgentSpec>(&self) -> Result<Agent<S>, CheckpointError> {
        match self.agent_name() {
            Some(name) if name == S::NAME => {}
            Some(name) => {
                return Err(CheckpointError::Incompatible {
                    detail: format!(
                        "it holds agent `{name}`, not `{}`; thaw it as `{name}`",
                        S::NAME
                    ),
                });
            }
            None => {
                return Err(CheckpointError::Corrupt {
                    detail: "its `agent` names no agent type".to_string(),
                });
            }
        }
        Agent::<S>::deserialize(&self.agent).map_err(|e| CheckpointError::Incompatible {
            detail: format!(
                "its state does not fit agent `{}` ({e}); the state type changed since it was written: give new fields `#[serde(default)]` or migrate the checkpoint",
                S::NAME
            ),
        })
    }
}
