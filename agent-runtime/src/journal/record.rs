//! What a journal holds: one record per step (the input and the state hash after it) and, now
//! and then, a snapshot of the whole agent to start a replay from.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::action::Outcome;
use crate::error::ActionError;
use crate::instruction::Instruction;
use crate::signal::Signal;
use crate::signal::compact::{
    Decoded, time_of, write_array_header, write_compact, write_str, write_time_parts, write_uint,
};
use crate::state_op::StateOp;

use super::context::StepTime;
use super::hash::StateHash;

/// What entered an agent at one step: everything its strategy saw that was not already in its
/// state. Replaying the inputs in order rebuilds every state the agent went through.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Input {
    /// The agent started (or was thawed) and its strategy's `init` ran.
    Init,
    /// A signal was routed to the agent: from a caller (`origin` `signal`), a timer (`timer`),
    /// a cron job (`cron`), a child's exit (`child`) or a model's answer (`llm`: the reply,
    /// tool calls included, as the `ai.llm.response` signal the strategy received).
    Signal {
        /// Where the signal came from.
        origin: Cow<'static, str>,
        /// The signal, as routed.
        signal: Box<Signal>,
    },
    /// The agent was ticked (a behaviour tree, a strategy reporting `Running`).
    Tick,
    /// An async action finished and its outcome went back through `cmd`.
    Completion {
        /// The instruction that ran (its id matches the strategy's bookkeeping).
        instruction: Box<Instruction>,
        /// What it produced.
        outcome: Completed,
    },
}

impl Input {
    /// The completion of an async action, as journaled.
    pub(crate) fn completion(completion: &Instruction) -> Self {
        let outcome = match &completion.outcome {
            Some(outcome) => Completed::of(outcome),
            None => Completed::Ok {
                ops: Vec::new(),
                reply: None,
                in_progress: false,
            },
        };
        let mut instruction = completion.clone();
        instruction.outcome = None;
        Input::Completion {
            instruction: Box::new(instruction),
            outcome,
        }
    }

    /// A short description for reports: `signal \`order.pay\``, `tick`, ...
    pub fn describe(&self) -> String {
        match self {
            Input::Init => "init".to_string(),
            Input::Signal { origin, signal } => {
                format!("{origin} `{}`", signal.signal_type)
            }
            Input::Tick => "tick".to_string(),
            Input::Completion { instruction, .. } => {
                format!("completion of `{}`", instruction.action)
            }
        }
    }
}

/// The outcome of an async action as journaled. Its directives are not kept: a directive never
/// changes the agent's state and a replay executes none.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Completed {
    /// The action succeeded.
    Ok {
        /// Its state operations.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        ops: Vec<StateOp>,
        /// Its answer to a model, when a model called it as a tool.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply: Option<Value>,
        /// Whether it reported unfinished work.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        in_progress: bool,
    },
    /// The action failed.
    Err {
        /// How.
        error: ActionError,
    },
}

impl Completed {
    pub(crate) fn of(outcome: &Result<Outcome, ActionError>) -> Self {
        match outcome {
            Ok(outcome) => Completed::Ok {
                ops: outcome.ops.clone(),
                reply: outcome.reply.as_deref().cloned(),
                in_progress: outcome.in_progress,
            },
            Err(error) => Completed::Err {
                error: error.clone(),
            },
        }
    }

    pub(crate) fn to_outcome(&self) -> Result<Outcome, ActionError> {
        match self {
            Completed::Ok {
                ops,
                reply,
                in_progress,
            } => Ok(Outcome {
                ops: ops.clone(),
                directives: Vec::new(),
                reply: reply.clone().map(Box::new),
                in_progress: *in_progress,
            }),
            Completed::Err { error } => Err(error.clone()),
        }
    }
}

/// One step of a journaled agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    /// Its sequence number: one more than the step before, in one run of the agent; a thawed
    /// agent's steps continue after the last one journaled.
    pub seq: u64,
    /// When it was taken: the clock reading its strategy saw (and a replay gives it again).
    /// The clock is read when the strategy first asks for the time in the step; a step that
    /// never asks carries the server's last reading, taken at most one mailbox batch earlier.
    pub at: DateTime<Utc>,
    /// What entered the agent.
    #[serde(flatten)]
    pub input: Input,
    /// The hash of the agent (state, strategy state, plugin states) after the step.
    pub hash: StateHash,
}

/// Why a snapshot was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SnapshotKind {
    /// A run of the agent began here (started, or thawed from a checkpoint): a replay starts
    /// over from it.
    Start,
    /// Taken every `snapshot_every` steps: a replay checks it and may start from it.
    Periodic,
}

/// A record of the journal, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Record {
    Step(Step),
    Snapshot {
        /// The step after which it was taken.
        seq: u64,
        kind: SnapshotKind,
        hash: StateHash,
        /// The agent as checkpoint JSON.
        agent: Value,
    },
}

impl Record {
    /// Where the record goes in the store: steps at even positions, the snapshot after step
    /// `n` right behind it, so the store's order is the journal's.
    pub(crate) fn position(&self) -> u64 {
        match self {
            Record::Step(step) => step.seq.saturating_mul(2),
            Record::Snapshot { seq, .. } => seq.saturating_mul(2).saturating_add(1),
        }
    }

    /// Whether the record at `position` is a snapshot (see [`Record::position`]).
    pub(crate) fn is_snapshot_position(position: u64) -> bool {
        position % 2 == 1
    }
}

/// Appends a record as stored. A step whose input is a signal (nearly every step) is one
/// MessagePack array `[seq, at, hash, origin, signal]` ([`encode_signal_step`]); every other
/// record is MessagePack with named fields (self-describing, so JSON values and optional
/// fields round-trip exactly).
pub(crate) fn encode_into(
    out: &mut Vec<u8>,
    record: &Record,
) -> Result<(), rmp_serde::encode::Error> {
    match record {
        Record::Step(Step {
            seq,
            at,
            input: Input::Signal { origin, signal },
            hash,
        }) => encode_signal_step(out, *seq, StepTime::of(at), *hash, origin, signal),
        other => rmp_serde::encode::write_named(out, other),
    }
}

/// Appends a signal step, `[seq, at, hash, origin, signal]`: the time as `[seconds,
/// nanoseconds]`, the hash as its number and the signal's attributes by position
/// ([`write_compact`]), so encoding it formats no time and writes no attribute name. Written
/// straight from the step's parts: the server journals a signal without building a record.
pub(crate) fn encode_signal_step(
    out: &mut Vec<u8>,
    seq: u64,
    at: StepTime,
    hash: StateHash,
    origin: &str,
    signal: &Signal,
) -> Result<(), rmp_serde::encode::Error> {
    write_array_header(out, 5);
    write_uint(out, seq);
    write_time_parts(out, at.seconds, at.nanos);
    write_uint(out, hash.0);
    write_str(out, origin)?;
    write_compact(out, signal)
}

/// A record as stored, in a buffer of its own.
#[cfg(test)]
pub(crate) fn encode(record: &Record) -> Result<Vec<u8>, rmp_serde::encode::Error> {
    let mut out = Vec::new();
    encode_into(&mut out, record)?;
    Ok(out)
}

/// Decodes a stored record: a signal step's array, a MessagePack map, or JSON as journals
/// written before MessagePack were (a JSON record starts with `{`, which no MessagePack value
/// does; an array marker starts only the compact signal step).
pub(crate) fn decode(data: &[u8]) -> Result<Record, String> {
    match data.first() {
        Some(b'{') => serde_json::from_slice(data).map_err(|e| e.to_string()),
        // fixarray, array 16, array 32
        Some(0x90..=0x9f | 0xdc | 0xdd) => {
            let (seq, at, hash, origin, signal): (u64, (i64, u32), u64, String, Decoded) =
                rmp_serde::from_slice(data).map_err(|e| e.to_string())?;
            let at = time_of(at).ok_or("the step's time is out of range")?;
            Ok(Record::Step(Step {
                seq,
                at,
                input: Input::Signal {
                    origin: Cow::Owned(origin),
                    signal: Box::new(signal.0),
                },
                hash: StateHash(hash),
            }))
        }
        _ => rmp_serde::from_slice(data).map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::compact::{Compact, time_parts};
    use serde_json::json;

    fn step(signal: Signal) -> Record {
        Record::Step(Step {
            seq: 7,
            at: DateTime::from_timestamp(1_790_000_000, 123_456_789).unwrap(),
            input: Input::Signal {
                origin: Cow::Borrowed("timer"),
                signal: Box::new(signal),
            },
            hash: StateHash(0xdead_beef_0123_4567),
        })
    }

    fn round_trip(record: &Record) -> Record {
        decode(&encode(record).unwrap()).unwrap()
    }

    fn signal_of(record: &Record) -> (&Step, &Signal) {
        let Record::Step(step) = record else {
            panic!("not a step: {record:?}")
        };
        let Input::Signal { signal, .. } = &step.input else {
            panic!("not a signal: {step:?}")
        };
        (step, signal)
    }

    #[test]
    fn a_signal_step_round_trips_exactly_in_its_compact_form() {
        let full = Signal::new(
            "order.paid",
            json!({"amount": 12.5, "lines": [1, 2, {"a": null}]}),
        )
        .with_subject("order-1")
        .with_extension(
            "traceparent",
            json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        )
        .with_extension("attempt", json!(3))
        .with_data_schema("https://example.com/order.json");
        let bytes = Signal::new("blob.put", Value::Null)
            .with_bytes("application/octet-stream", vec![0, 1, 255]);
        let bare = Signal::with_id("r/llm/1/reply", "ai.llm.response", Value::Null);
        let mut untimed =
            Signal::new("x".repeat(300), json!("y".repeat(70_000))).with_subject("z".repeat(40));
        untimed.time = None;
        untimed.id = "i".repeat(70_000);
        // Times before and after the epoch in every integer width.
        let timed = [
            -5,
            -100,
            -200,
            -86_400,
            -3_000_000_000,
            0,
            100,
            200,
            70_000,
            5_000_000_000,
        ]
        .map(|seconds| {
            let mut signal = Signal::new("order.paid", json!(-1));
            signal.time = DateTime::from_timestamp(seconds, 5);
            signal
        });
        for signal in [full, bytes, bare, untimed].into_iter().chain(timed) {
            let record = step(signal);
            let encoded = encode(&record).unwrap();
            assert!(
                matches!(encoded[0], 0x90..=0x9f),
                "an array: {:#x}",
                encoded[0]
            );
            // The hand-written encoder writes what serde writes for the positional form.
            let (step_of, signal) = signal_of(&record);
            let reference = rmp_serde::to_vec(&(
                step_of.seq,
                time_parts(&step_of.at),
                step_of.hash.0,
                "timer",
                Compact(signal),
            ))
            .unwrap();
            assert_eq!(encoded, reference);
            let back = round_trip(&record);
            let ((before, sent), (after, read)) = (signal_of(&record), signal_of(&back));
            assert_eq!(sent, read);
            assert_eq!(
                (before.seq, before.at, before.hash),
                (after.seq, after.at, after.hash)
            );
            let Input::Signal { origin, .. } = &after.input else {
                unreachable!()
            };
            assert_eq!(origin, "timer");
        }
    }

    #[test]
    fn records_written_before_the_compact_form_still_read() {
        let record = step(Signal::new("order.paid", json!(1)).with_subject("s"));
        let named = rmp_serde::to_vec_named(&record).unwrap();
        let json = serde_json::to_vec(&record).unwrap();
        let expected = signal_of(&record).1.clone();
        for old in [named, json] {
            assert_eq!(signal_of(&decode(&old).unwrap()).1, &expected);
        }
    }

    #[test]
    fn a_damaged_compact_step_is_an_error_not_a_signal() {
        let mut encoded = encode(&step(Signal::new("order.paid", json!(1)))).unwrap();
        encoded.truncate(encoded.len() / 2);
        assert!(decode(&encoded).is_err());
        // A signal that breaks a CloudEvents rule is refused as any decoded signal is.
        let mut broken = Signal::new("order.paid", json!(1));
        broken.id = String::new();
        let encoded = encode(&step(broken)).unwrap();
        let error = decode(&encoded).unwrap_err();
        assert!(error.contains("`id`"), "{error}");
    }
}
