//! The checkpoint format.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::{Agent, AgentSpec};
use crate::definition::{Definition, Migration};
use crate::instruction::{ExecOptions, Instruction};
use crate::signal::Signal;

/// The `format` every checkpoint declares.
pub const FORMAT: &str = "stratagem.checkpoint";

/// The checkpoint format version this build writes. It reads this one and version 1 (the same
/// fields, without a checksum).
pub const VERSION: u32 = 2;

/// What precedes the checksum at the end of every checkpoint of version 2 and later.
const CHECKSUM_KEY: &[u8] = b",\"checksum\":\"crc32:";
/// The checksum trailer: the key, eight lowercase hex digits, `"}`.
const TRAILER_LEN: usize = CHECKSUM_KEY.len() + 8 + 2;

/// Everything needed to bring an agent back exactly as it was.
///
/// Written as JSON: `{"format": "stratagem.checkpoint", "version": 2, "agent": {...}, "timers":
/// [...], "cron": [...], "in_flight": [...], "saved_at": ..., "checksum": "crc32:89abcdef"}`,
/// where `agent` is the agent's own serialization (`{"agent": NAME, "id", "state",
/// "strategy"}`) and `checksum` is the CRC-32 of every byte before `,"checksum"`. A checkpoint
/// whose bytes changed after it was written (a flipped bit on disk, a hand edit) is
/// [`CheckpointError::Corrupt`], never restored as some other state. Version 1 checkpoints
/// (the same fields, no checksum) still load.
///
/// ```
/// use agent_runtime::store::{Checkpoint, CheckpointError};
/// let bytes = br#"{"format": "stratagem.checkpoint", "version": 9, "agent": {}}"#;
/// let err = Checkpoint::decode(bytes).unwrap_err();
/// assert!(err.to_string().contains("version 9"), "{err}");
/// assert!(Checkpoint::decode(b"\x00garbage").is_err());
///
/// let checkpoint = Checkpoint::decode(
///     br#"{"format": "stratagem.checkpoint", "version": 1, "agent": {}, "saved_at": "2026-01-01T00:00:00Z"}"#,
/// )
/// .unwrap();
/// let mut bytes = checkpoint.encode().unwrap();
/// assert_eq!(Checkpoint::decode(&bytes).unwrap(), checkpoint);
/// let at = bytes.iter().position(|&b| b == b'2').unwrap(); // a digit of the year
/// bytes[at] = b'3';
/// assert!(matches!(Checkpoint::decode(&bytes), Err(CheckpointError::Corrupt { .. })));
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

/// Checks the checksum trailer: `Ok(true)` when it is there and matches, `Ok(false)` when there
/// is none (version 1, or damage the version check reports), `Corrupt` when it does not match.
fn verify_checksum(bytes: &[u8]) -> Result<bool, CheckpointError> {
    let Some(body_len) = bytes.len().checked_sub(TRAILER_LEN) else {
        return Ok(false);
    };
    let (body, trailer) = bytes.split_at(body_len);
    let Some(rest) = trailer.strip_prefix(CHECKSUM_KEY) else {
        return Ok(false);
    };
    let (digits, end) = rest.split_at(8);
    if end != b"\"}" {
        return Ok(false);
    }
    // Compared as written (lowercase), so even a flipped case bit in the digits is caught.
    let expected = format!("{:08x}", crc32(body));
    if digits == expected.as_bytes() {
        Ok(true)
    } else {
        Err(CheckpointError::Corrupt {
            detail: format!(
                "its checksum is {}, but its content sums to {expected}: the bytes changed after it was written",
                crate::quote::Quoted::new(&String::from_utf8_lossy(digits))
            ),
        })
    }
}

/// CRC-32 (IEEE 802.3, as zlib and PNG): detects every error burst of up to 32 bits, so any
/// single changed byte. Twenty lines do not justify a dependency.
fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    !bytes.iter().fold(!0u32, |crc, &b| {
        TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8)
    })
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
    /// The checkpoint was taken from another definition of the agent (another build whose
    /// states, state fields or tree differ) and this build declares no migration from it: it
    /// is refused rather than loaded as a state it was not taken from.
    #[error(
        "the checkpoint of agent `{agent}` was taken from definition `{found}`, and this build's definition is `{expected}`; declare a migration from it: `migrate \"{found}\" {{ state New was Old ... }}`"
    )]
    UnknownDefinition {
        /// The agent type.
        agent: String,
        /// The fingerprint the checkpoint records.
        found: String,
        /// This build's fingerprint.
        expected: String,
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
    /// The checkpoint as bytes: JSON ending with its checksum.
    pub fn encode(&self) -> Result<Vec<u8>, CheckpointError> {
        let mut bytes = serde_json::to_vec(&WireRef {
            format: FORMAT,
            version: VERSION,
            body: self,
        })
        .map_err(|e| CheckpointError::Serialize {
            detail: e.to_string(),
        })?;
        // The object's closing brace makes way for the checksum of everything before it.
        bytes.pop();
        let checksum = crc32(&bytes);
        bytes.reserve(TRAILER_LEN);
        bytes.extend_from_slice(CHECKSUM_KEY);
        bytes.extend_from_slice(format!("{checksum:08x}\"}}").as_bytes());
        Ok(bytes)
    }

    /// Reads a checkpoint. Bytes that are not a checkpoint of this format, or whose checksum
    /// does not match, are [`CheckpointError::Corrupt`]; a checkpoint of a format version this
    /// build does not read is [`CheckpointError::Incompatible`]. Never panics.
    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointError> {
        let corrupt = |detail: String| CheckpointError::Corrupt { detail };
        // The checksum is checked before anything else is read, so a flipped byte is reported
        // as corruption whatever it hit (the version, a key, the state).
        let verified = verify_checksum(bytes)?;
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| corrupt(format!("it is not valid JSON ({e})")))?;
        let Value::Object(mut map) = value else {
            return Err(corrupt("it is not a JSON object".to_string()));
        };
        map.remove("checksum");
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
            Some(v) if v == u64::from(VERSION) && verified => {}
            // Version 1 had no checksum; a later version without a valid one was damaged.
            Some(1) => {}
            Some(v) if (2..=u64::from(VERSION)).contains(&v) => {
                return Err(corrupt(
                    "its checksum is missing or damaged (it does not end with `\"checksum\":\"crc32:...\"}`)".to_string(),
                ));
            }
            Some(v) => {
                return Err(CheckpointError::Incompatible {
                    detail: format!(
                        "it was written in format version {v}; this build reads versions 1 to {VERSION}: thaw it with the build that wrote it, or a newer one"
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
        let migrated = self.migrated::<S>()?;
        let agent = migrated.as_ref().map_or(&self.agent, |c| &c.agent);
        Agent::<S>::deserialize(agent).map_err(|e| CheckpointError::Incompatible {
            detail: format!(
                "its state does not fit agent `{}` ({e}); the state type changed since it was written: give new fields `#[serde(default)]` or migrate the checkpoint",
                S::NAME
            ),
        })
    }

    /// The checkpoint migrated to this build's definition of `S`, when it was taken from an
    /// older one this build declares a migration from (`None`: it is current, predates
    /// fingerprints, holds another agent type, or `S` is hand-written). A checkpoint of a
    /// definition this build declares no migration from is
    /// [`CheckpointError::UnknownDefinition`].
    pub fn migrated<S: AgentSpec>(&self) -> Result<Option<Checkpoint>, CheckpointError> {
        let Some((definition, migration)) = migration_for::<S>(&self.agent)? else {
            return Ok(None);
        };
        let mut checkpoint = self.clone();
        // Pending FSM timers name the state they were armed for.
        let mut timer_states: Vec<&mut Value> = checkpoint
            .timers
            .iter_mut()
            .filter(|t| t.signal.signal_type == crate::strategy::fsm::TIMEOUT_SIGNAL)
            .filter_map(|t| t.signal.data.get_mut("state"))
            .collect();
        apply_migration::<S>(
            definition,
            migration,
            &mut checkpoint.agent,
            &mut timer_states,
        )?;
        Ok(Some(checkpoint))
    }
}

/// The migration that makes `agent` (an agent's JSON) one of this build's definition of `S`:
/// `None` when there is nothing to do (the same definition, a checkpoint without one, another
/// agent type, or a hand-written `S`), an error when the definition is unknown.
pub(crate) fn migration_for<S: AgentSpec>(
    agent: &Value,
) -> Result<Option<(&'static Definition, &'static Migration)>, CheckpointError> {
    let Some(definition) = S::DEFINITION else {
        return Ok(None);
    };
    if agent.get("agent").and_then(Value::as_str) != Some(S::NAME) {
        return Ok(None);
    }
    let found = match agent.get("definition").and_then(Value::as_str) {
        Some(found) if found != definition.fingerprint => found,
        _ => return Ok(None),
    };
    match definition.migration(found) {
        Some(migration) => Ok(Some((definition, migration))),
        None => Err(CheckpointError::UnknownDefinition {
            agent: S::NAME.to_string(),
            found: crate::quote::clip(found.to_string()),
            expected: definition.fingerprint.to_string(),
        }),
    }
}

/// Applies `migration` to `agent` and stamps it with this build's fingerprint.
pub(crate) fn apply_migration<S: AgentSpec>(
    definition: &Definition,
    migration: &Migration,
    agent: &mut Value,
    timer_states: &mut [&mut Value],
) -> Result<(), CheckpointError> {
    migration
        .apply(agent, timer_states)
        .map_err(|detail| CheckpointError::Incompatible {
            detail: format!(
                "the migration of agent `{}` from definition `{}` failed: {detail}",
                S::NAME,
                migration.from
            ),
        })?;
    if let Some(agent) = agent.as_object_mut() {
        agent.insert(
            "definition".to_string(),
            Value::String(definition.fingerprint.to_string()),
        );
    }
    Ok(())
}
