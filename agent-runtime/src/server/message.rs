//! What travels through an agent's mailbox. Every variant is one pointer wide, so the channel's
//! blocks stay small for agents that sit idle.

use tokio::sync::oneshot;

use crate::agent::DynAgent;
use crate::instruction::Instruction;
use crate::signal::Signal;
use crate::store::CheckpointError;

use super::error::ServerError;
use super::handle::{AgentRef, CallOutcome};
use super::report::{StopReason, StopReport};
use crate::snapshot::Snapshot;

pub(crate) enum Message {
    /// A signal from outside: counted against the mailbox capacity.
    Signal(Box<Envelope>),
    /// A request from a handle; not counted (each one has a caller waiting on it).
    Control(Box<Control>),
    /// Something the server itself started reporting back; never refused.
    Internal(Box<Internal>),
}

pub(crate) struct Envelope {
    pub(crate) signal: Signal,
    pub(crate) reply: Option<oneshot::Sender<Result<CallOutcome, ServerError>>>,
}

pub(crate) type Inspect = Box<dyn FnOnce(&dyn DynAgent) + Send>;

/// A serialized checkpoint, and where to say whether the store took it.
pub(crate) type CheckpointReply =
    oneshot::Sender<Result<(Vec<u8>, oneshot::Sender<bool>), CheckpointError>>;

pub(crate) enum Control {
    Inspect(Inspect),
    AwaitCompletion(oneshot::Sender<Result<Snapshot, ServerError>>),
    Stop {
        reason: StopReason,
        reply: Option<oneshot::Sender<StopReport>>,
    },
    /// Serialize a checkpoint, hand it over, and wait for the caller to say whether the store
    /// took it (then stop, if `then_stop`) or not (then carry on).
    Checkpoint {
        then_stop: bool,
        reply: CheckpointReply,
    },
    Child {
        tag: String,
        reply: oneshot::Sender<Option<AgentRef>>,
    },
    Children(oneshot::Sender<Vec<(String, AgentRef)>>),
}

pub(crate) enum Internal {
    /// An async instruction finished.
    Completed(Instruction),
    /// A child stopped.
    ChildExit { tag: String, report: StopReport },
    /// An embeddings call of an AI request finished; the trace context is the one of the
    /// step that asked for it.
    Embed {
        reply: crate::ai::EmbedReply,
        request_id: String,
        trace_context: Option<crate::signal::TraceContext>,
    },
}

impl Message {
    pub(crate) fn control(control: Control) -> Self {
        Message::Control(Box::new(control))
    }

    pub(crate) fn internal(internal: Internal) -> Self {
        Message::Internal(Box::new(internal))
    }
}
