//! Snapshots: what a strategy says about where an agent stands.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an agent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing has happened yet, or nothing is in progress.
    Idle,
    /// Work is in progress and the host should call `tick` again.
    Running,
    /// Waiting for input: an event, a signal or the result of an async action.
    Waiting,
    /// Finished successfully.
    Success,
    /// Finished unsuccessfully.
    Failure,
}

impl Status {
    /// Whether this status ends the agent's run (`Success` or `Failure`).
    pub fn is_done(self) -> bool {
        matches!(self, Status::Success | Status::Failure)
    }
}

/// A strategy's report of an agent: status, result and strategy-specific details.
///
/// `done` is not stored: it is derived from the status, so it can never disagree with it.
/// It is still written when serializing, for consumers that read the JSON.
///
/// ```
/// use agent_runtime::{Snapshot, Status};
/// let s = Snapshot::new(Status::Success).with_result(serde_json::json!(42));
/// assert!(s.done());
/// assert_eq!(serde_json::to_value(&s).unwrap()["done"], true);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "SnapshotWire", from = "SnapshotWire")]
pub struct Snapshot {
    /// The status.
    pub status: Status,
    /// The run's result, when it has one.
    pub result: Option<Value>,
    /// Strategy-specific details (the FSM's current state, a tree's running node, ...).
    pub details: Value,
}

impl Snapshot {
    /// A snapshot with this status, no result and no details.
    pub fn new(status: Status) -> Self {
        Snapshot {
            status,
            result: None,
            details: Value::Null,
        }
    }

    /// Sets the result.
    #[must_use]
    pub fn with_result(mut self, result: Value) -> Self {
        self.result = Some(result);
        self
    }

    /// Sets the details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// Whether the run has ended: true exactly when the status is `Success` or `Failure`.
    pub fn done(&self) -> bool {
        self.status.is_done()
    }
}

#[derive(Serialize, Deserialize)]
struct SnapshotWire {
    status: Status,
    done: bool,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    details: Value,
}

impl From<Snapshot> for SnapshotWire {
    fn from(s: Snapshot) -> Self {
        SnapshotWire {
            status: s.status,
            done: s.done(),
            result: s.result,
            details: s.details,
        }
    }
}

impl From<SnapshotWire> for Snapshot {
    // `done` is derived on the way in too, so a hand-edited `done` cannot contradict the status.
    fn from(w: SnapshotWire) -> Self {
        Snapshot {
            status: w.status,
            result: w.result,
            details: w.details,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_iff_success_or_failure() {
        for (status, done) in [
            (Status::Idle, false),
            (Status::Running, false),
            (Status::Waiting, false),
            (Status::Success, true),
            (Status::Failure, true),
        ] {
            assert_eq!(Snapshot::new(status).done(), done, "{status:?}");
        }
    }

    #[test]
    fn round_trips_through_json() {
        let s =
            Snapshot::new(Status::Waiting).with_details(serde_json::json!({"state": "Pending"}));
        let back: Snapshot = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
