//! Addressed signals a node's agents emitted, on their way into JetStream: an agent's
//! checkpoint waits for them, so the signal that caused an emit is acknowledged only once
//! what it emitted is stored.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use tokio::task::JoinHandle;

/// A publish in flight: `Err` says why JetStream did not store the signal.
type Publish = JoinHandle<Result<(), String>>;

/// The publishes in flight, by emitting agent.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pending: Mutex<HashMap<String, Vec<Publish>>>,
    /// Agents whose emitted signal could not be stored: their copy must be dropped, so the
    /// redelivered signals are applied again (and emit again) from the last checkpoint.
    failed: Mutex<HashSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Outbox {
    pub(crate) fn push(&self, origin: &str, publish: Publish) {
        lock(&self.pending)
            .entry(origin.to_string())
            .or_default()
            .push(publish);
    }

    /// Waits until everything `origin` emitted so far is stored by JetStream.
    pub(crate) async fn flush(&self, origin: &str) -> Result<(), String> {
        let Some(publishes) = lock(&self.pending).remove(origin) else {
            return Ok(());
        };
        let mut problems = Vec::new();
        for publish in publishes {
            match publish.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => problems.push(e),
                Err(e) => problems.push(format!("the publishing task failed: {e}")),
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        lock(&self.failed).insert(origin.to_string());
        Err(problems.join("; "))
    }

    /// Whether a flush of `origin` failed since the last call (and forgets it).
    pub(crate) fn take_failed(&self, origin: &str) -> bool {
        lock(&self.failed).remove(origin)
    }

    /// Stops tracking `origin`'s publishes (its copy was dropped; they go on by themselves).
    pub(crate) fn forget(&self, origin: &str) {
        lock(&self.pending).remove(origin);
        lock(&self.failed).remove(origin);
    }
}
