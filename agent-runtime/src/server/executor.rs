//! Executors of user-defined directives.

use std::fmt;
use std::sync::Arc;

use tokio::sync::mpsc::WeakUnboundedSender;

use crate::directive::{CustomDirective, Directive};
use crate::error::AgentError;

use super::handle::{AgentRef, Shared};
use super::message::Message;

/// The executor of one kind of custom directive (see [`Options::executor`](super::Options::executor)).
pub(crate) type Executor = Arc<
    dyn Fn(&CustomDirective, &ExecutorContext<'_>) -> Result<Vec<Directive>, AgentError>
        + Send
        + Sync,
>;

/// What an executor knows about the agent whose directive it executes.
pub struct ExecutorContext<'a> {
    pub(crate) shared: &'a Arc<Shared>,
    pub(crate) tx: &'a WeakUnboundedSender<Message>,
}

impl ExecutorContext<'_> {
    /// The agent type's name.
    pub fn agent_name(&self) -> &'static str {
        self.shared.name
    }

    /// The agent's id.
    pub fn agent_id(&self) -> &str {
        &self.shared.id
    }

    /// A handle to the agent, for work that reports back later with a signal (`cast`);
    /// `None` once the agent is stopping.
    pub fn handle(&self) -> Option<AgentRef> {
        Some(AgentRef::new(self.tx.upgrade()?, self.shared.clone()))
    }
}

impl fmt::Debug for ExecutorContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutorContext")
            .field("agent", &self.shared.name)
            .field("id", &self.shared.id)
            .finish()
    }
}
