//! A refund desk that asks a person to approve each refund: the FSM agent the interrupt tests
//! drive (in process, and across a `kill -9`).

use stratagem::prelude::*;

/// Takes refund requests; each one waits for a person's decision.
#[agent(
    strategy = Fsm,
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
pub struct Refunds {
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

impl From<&Refunds> for RefundRequest {
    fn from(refunds: &Refunds) -> Self {
        RefundRequest {
            item: refunds.requested.last().copied().unwrap_or_default(),
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
#[action]
pub fn record_request(refunds: &mut Refunds, item: Item) {
    refunds.requested.push(item.item);
    refunds.requests_run += 1;
}

/// Applies a person's decision.
#[action]
pub fn apply_decision(refunds: &mut Refunds, decision: Decision) {
    refunds.decisions.push((decision.item, decision.approve));
    refunds.decisions_run += 1;
}
