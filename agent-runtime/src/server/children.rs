//! Parents and children: a child runs in its own task; its emits and its exit reach the parent.

use std::sync::Arc;

use tokio::sync::mpsc::WeakUnboundedSender;

use crate::signal::Signal;

use super::error::ServerError;
use super::handle::{AgentRef, Shared};
use super::message::{Envelope, Internal, Message};
use super::report::StopReport;

/// The type of the signal a parent receives when a child stops. Its data:
/// `{"tag", "id", "agent", "reason": {...}, "message"}`. Unlike other signals, it is dropped
/// quietly when no route of the parent matches it: it is a notification, not a request.
pub const CHILD_EXIT_SIGNAL: &str = "stratagem.child.exit";

/// A child's way back to its parent. Weak, so a child never keeps its parent alive.
pub(crate) struct ParentLink {
    tx: WeakUnboundedSender<Message>,
    shared: Arc<Shared>,
    tag: String,
}

impl ParentLink {
    pub(crate) fn new(tx: WeakUnboundedSender<Message>, shared: Arc<Shared>, tag: String) -> Self {
        ParentLink { tx, shared, tag }
    }

    /// Delivers an emitted signal to the parent's mailbox, with the parent's backpressure: a
    /// full mailbox is an error for the child's error policy.
    pub(crate) fn deliver(&self, signal: Signal) -> Result<(), ServerError> {
        let tx = self.tx.upgrade().ok_or_else(|| self.shared.stopped())?;
        self.shared.deliver(
            &tx,
            Envelope {
                signal,
                reply: None,
            },
        )
    }

    /// Tells the parent this child stopped. Never refused: exits are not subject to capacity.
    pub(crate) fn notify_exit(&self, report: StopReport) {
        if let Some(tx) = self.tx.upgrade() {
            let _ = tx.send(Message::internal(Internal::ChildExit {
                tag: self.tag.clone(),
                report,
            }));
        }
    }
}

/// A running child, as its parent keeps it.
pub(crate) struct Child {
    pub(crate) handle: AgentRef,
    /// `StopChild` was executed; the child leaves the map when its exit arrives.
    pub(crate) stopping: bool,
}

impl Child {
    pub(crate) fn new(handle: AgentRef) -> Self {
        Child {
            handle,
            stopping: false,
        }
    }
}
