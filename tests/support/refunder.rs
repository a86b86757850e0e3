//! A ReAct agent whose refunds wait for a person's approval: the AI agent the approval tests
//! drive (in process, and across a `kill -9`).

use stratagem::prelude::*;

/// Refunds orders; every refund waits for a person.
#[agent(strategy = React, model = "fast", tools = [lookup, refund], approve = [refund], max_iterations = 5)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Refunder {
    /// How often `lookup` ran.
    pub lookups_run: u32,
    /// The amounts refunded, in order.
    pub refunds: Vec<u32>,
}

/// An order to look up.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Order {
    /// Its number.
    pub order: u32,
}

/// A refund to make.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Refund {
    /// The order.
    pub order: u32,
    /// How much.
    pub amount: u32,
}

/// Looks an order up.
#[action]
pub fn lookup(refunder: &mut Refunder, order: Order) -> Outcome {
    refunder.lookups_run += 1;
    Outcome::new().reply(json!({ "order": order.order, "paid": 40 }))
}

/// Refunds part of an order.
#[action]
pub fn refund(refunder: &mut Refunder, refund: Refund) -> Outcome {
    refunder.refunds.push(refund.amount);
    Outcome::new().reply(json!({ "refunded": refund.amount, "order": refund.order }))
}

/// Looks up order `n`, then asks for two refunds at once, then answers.
pub fn script(n: u32) -> ScriptedModel {
    ScriptedModel::new()
        .user(format!("refund order {n}"))
        .call("lookup", json!({ "order": n }))
        .call("refund", json!({ "order": n, "amount": 5 }))
        .also("refund", json!({ "order": n, "amount": 6 }))
        .unwrap()
        .answer("done")
}
