//! An order desk written in `agents/order.agent`, compiled by `build.rs`, run in-process.
//!
//! `cargo run -p order-service`

use serde::{Deserialize, Serialize};
use stratagem::prelude::*;

/// The agents of `agents/order.agent`: the generated state structs and their `AgentSpec` impls.
/// The file names its actions by path; they resolve here.
pub mod agents {
    pub use super::{add_item, audit, pay};
    stratagem::include_agents!("order");
}

use agents::{Auditor, OrderDesk};

/// An item and its price.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Item {
    /// What it is.
    pub name: String,
    /// What it costs.
    pub price: f64,
}

/// Adds an item to the order.
#[action]
pub fn add_item(order: &mut OrderDesk, item: Item) {
    order.items.push(item.name);
    order.total += item.price;
}

/// A payment.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Payment {
    /// How much.
    pub amount: f64,
}

/// Takes a payment; refuses to take more than is owed, leaving the order as it was.
#[action]
pub fn pay(order: &mut OrderDesk, payment: Payment) -> Result<(), ActionError> {
    if order.paid + payment.amount > order.total + 1e-9 {
        return Err(ActionError::new(format!(
            "{:.2} {} is more than the {:.2} owed",
            payment.amount,
            order.currency,
            order.total - order.paid
        )));
    }
    order.paid += payment.amount;
    Ok(())
}

/// Notes that the agent saw a signal (any agent: it takes no state).
#[action]
pub fn audit() {}

fn main() {
    let mut desk = OrderDesk::new();
    desk.handle_signal(&Signal::new(
        "order.item.add",
        json!({"name": "tea", "price": 4.5}),
    ));
    desk.handle_signal(&Signal::new(
        "order.item.add",
        json!({"name": "cake", "price": 3.0}),
    ));
    let refused = desk.handle_signal(&Signal::new("order.pay", json!({"amount": 100.0})));
    assert!(matches!(refused.as_slice(), [Directive::Error { .. }]));
    desk.handle_signal(&Signal::new("order.pay", json!({"amount": 7.5})));
    let state = desk.state();
    println!(
        "{}: {:?}, total {:.2} {}, paid {:.2}",
        <OrderDesk as AgentSpec>::NAME,
        state.items,
        state.total,
        state.currency,
        state.paid
    );
    assert_eq!(state.items, ["tea", "cake"]);
    assert_eq!(state.paid, 7.5);

    let mut auditor = Auditor::new();
    auditor.handle_signal(&Signal::new("anything.at.all", json!(null)));
    println!(
        "{}: {} routes",
        <Auditor as AgentSpec>::NAME,
        Auditor::routes().len()
    );
}
