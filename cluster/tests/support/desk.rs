//! A refund desk that asks a person to approve each refund: the FSM agent with a typed
//! interrupt the cluster's journal and failover tests park and resume.

use agent_macros::{action, agent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Takes refund requests; each one waits for a person's decision.
#[agent(
    strategy = Fsm,
    crate = agent_runtime,
    transitions {
        initial Open
        terminal Closed
        interrupt approval(RefundRequest) -> Decision
        Open on request do record_request ask approval
        Open on approval do apply_decision
        Open -> Closed on close
    },
    routes { "refund.request" => request  "refund.close" => close },
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Desk {
    /// Every item asked for, in order.
    pub requested: Vec<u32>,
    /// How often `record_request` ran.
    pub requests_run: u32,
    /// `(item, approved)` for every decision taken, in order.
    pub decisions: Vec<(u32, bool)>,
    /// How often `apply_decision` ran.
    pub decisions_run: u32,
}

/// What the person is shown: the item of the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefundRequest {
    /// The item to refund.
    pub item: u32,
}

impl From<&Desk> for RefundRequest {
    fn from(desk: &Desk) -> Self {
        RefundRequest {
            item: desk.requested.last().copied().unwrap_or_default(),
        }
    }
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// The item decided on.
    pub item: u32,
    /// Whether the refund is approved.
    pub approve: bool,
}

/// The item of one request.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Item {
    /// The item.
    pub item: u32,
}

/// Records a request (before its interrupt is raised).
#[action(crate = "agent_runtime")]
pub fn record_request(desk: &mut Desk, item: Item) {
    desk.requested.push(item.item);
    desk.requests_run += 1;
}

/// Applies a person's decision.
#[action(crate = "agent_runtime")]
pub fn apply_decision(desk: &mut Desk, decision: Decision) {
    desk.decisions.push((decision.item, decision.approve));
    desk.decisions_run += 1;
}
