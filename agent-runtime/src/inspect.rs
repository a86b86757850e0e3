//! What a live inspector shows of an agent: the static [`Shape`] of its strategy (an FSM's
//! states and transitions, a tree's nodes) and its [`Progress`] (the current state, the running
//! nodes, the conversation so far).
//!
//! Both are built only when asked for ([`AgentRef::shape`](crate::server::AgentRef::shape),
//! [`AgentRef::watch`](crate::server::AgentRef::watch)), so an agent nobody inspects pays
//! nothing for them.
//!
//! ```
//! use agent_runtime::inspect::{Progress, Shape};
//! let shape = serde_json::to_value(Shape::Opaque).unwrap();
//! assert_eq!(shape["kind"], "opaque");
//! let progress = serde_json::to_value(Progress::Machine { state: "Open" }).unwrap();
//! assert_eq!(progress, serde_json::json!({"kind": "machine", "state": "Open"}));
//! ```

use serde::Serialize;

use crate::ai::ChatMessage;
use crate::bt::NodeTick;
use crate::snapshot::Status;

/// The part of an agent that does not change while it runs: what a diagram draws.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Shape {
    /// A strategy that describes nothing (a direct agent, a hand-written strategy).
    Opaque,
    /// A state machine.
    Machine {
        /// The initial state.
        initial: &'static str,
        /// Every state, in declaration order.
        states: Vec<MachineState>,
        /// Every row that leaves its state (internal rows are not edges), in declaration order.
        transitions: &'static [Transition],
    },
    /// A behaviour tree, its nodes depth first (a node's children follow it, one level deeper).
    Tree {
        /// The nodes in visiting order: [`Progress::Tree`] names them by their index here.
        nodes: Vec<TreeNode>,
    },
    /// An AI agent: a conversation with a model, step by step.
    Conversation {
        /// The strategy's short name (`react`, `cot`, `tot`, ...).
        strategy: &'static str,
        /// The model alias it calls.
        model: &'static str,
    },
}

/// One state of a [`Shape::Machine`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MachineState {
    /// The state's name, as declared.
    pub name: &'static str,
    /// `Success` or `Failure` for a terminal state.
    pub end: Option<Status>,
}

/// One edge of a [`Shape::Machine`]: a row from `from` to `to`, labelled as the diagrams label
/// it (`event [guard] / action`, `after 30s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// The source state.
    pub from: &'static str,
    /// The target state.
    pub to: &'static str,
    /// The row as the diagrams label it.
    pub label: &'static str,
}

/// One node of a [`Shape::Tree`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeNode {
    /// Depth in the tree (the root is 0).
    pub depth: usize,
    /// The node in the language's syntax (`timeout(2s)`, `action move_to`).
    pub label: String,
}

/// Where an agent's run stands, in the terms of its [`Shape`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Progress {
    /// Nothing beyond the snapshot.
    Opaque,
    /// The machine's current state.
    Machine {
        /// The state's name.
        state: &'static str,
    },
    /// The tree's running nodes and its last status.
    Tree {
        /// Indices (into [`Shape::Tree`]'s nodes) of the nodes whose last tick returned
        /// `Running`.
        running: Vec<usize>,
        /// What the root's last tick returned (`None` before the first).
        status: Option<Status>,
        /// How many ticks ran.
        ticks: u64,
        /// Each node's last status and the tick it returned it on, by index into
        /// [`Shape::Tree`]'s nodes (`None`: not ticked since the watching began). Recorded
        /// only while the agent is watched; empty otherwise.
        last: Vec<Option<NodeTick>>,
    },
    /// The current (or last) request of an AI agent.
    Conversation {
        /// The request's id (empty before the first).
        request_id: String,
        /// The current step, from 1 (0 before the first).
        step: u32,
        /// The conversation, system prompt first.
        messages: Vec<ChatMessage>,
    },
}
