//! What each node of a tree returned the last time it was ticked: what a live inspector
//! colours the nodes by.
//!
//! Recording is off unless asked for ([`TreeRun::record`](super::TreeRun::record)): the
//! behaviour-tree strategy turns it on while its agent is watched, so an unwatched tree ticks
//! without it.

use serde::Serialize;

use super::Status;

/// The status a node returned the last time it was ticked, and that tick's number
/// ([`TreeRun::ticks`](super::TreeRun::ticks) after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NodeTick {
    /// What the node returned.
    pub status: Status,
    /// The tick it returned it on, from 1.
    pub tick: u64,
}

/// Each node's last status, by its index in visiting order ([`Node::visit`](super::Node::visit),
/// the same index as the inspector's tree shape); `None` for a node not ticked since recording
/// began.
///
/// ```
/// use agent_runtime::bt::{Condition, Selector, Status, TreeRun, Wait};
/// use agent_runtime::nodes;
/// use std::time::Duration;
///
/// let tree = Selector::new(nodes![
///     Condition::new("ready", |ready: &bool| *ready),
///     Wait::new(Duration::from_millis(50)),
/// ]);
/// let mut run = TreeRun::default();
/// run.record(&tree);
/// run.tick(&tree, &mut false, Duration::ZERO);
/// let last: Vec<_> = run.last_statuses().unwrap().iter().map(|n| n.map(|n| n.status)).collect();
/// assert_eq!(last, [Some(Status::Running), Some(Status::Failure), Some(Status::Running)]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TickRecord {
    nodes: Vec<Option<NodeTick>>,
    tick: u64,
}

impl TickRecord {
    /// A record for a tree of `nodes` nodes, nothing ticked yet.
    pub fn new(nodes: usize) -> Self {
        TickRecord {
            nodes: vec![None; nodes],
            tick: 0,
        }
    }

    /// Each node's last status, in visiting order.
    pub fn nodes(&self) -> &[Option<NodeTick>] {
        &self.nodes
    }

    /// Numbers the statuses recorded from now on.
    pub(super) fn start_tick(&mut self, tick: u64) {
        self.tick = tick;
    }

    /// Node `index` returned `status` (an index past the tree, from a custom node that
    /// misstates its [`SIZE`](super::Node::SIZE), is ignored).
    pub(super) fn set(&mut self, index: usize, status: Status) {
        if let Some(node) = self.nodes.get_mut(index) {
            *node = Some(NodeTick {
                status,
                tick: self.tick,
            });
        }
    }
}
