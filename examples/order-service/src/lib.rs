//! The order from LANGUAGE.md, written in `agents/order.agent`, compiled by `build.rs` with
//! `agent_dsl::Builder` and included with `stratagem::include_agents!`. `src/main.rs` runs it;
//! `tests/` checks how it behaves.

#![forbid(unsafe_code)]

/// The agents of `agents/order.agent`: their state structs, FSM enums and `AgentSpec` impls.
pub mod agents {
    // The `.agent` file names actions and guards by path; they resolve here.
    pub use super::actions::*;
    stratagem::include_agents!("order");
}

/// The actions and guards the agents use. They take the generated state types.
pub mod actions {
    use super::agents::{Clerk, Order};
    use stratagem::prelude::*;

    /// An item and its price.
    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    pub struct Checkout {
        /// What is bought.
        pub items: Vec<String>,
        /// The price of the whole order.
        pub total: f64,
    }

    /// Fills the order from the checkout; refuses an empty cart, leaving the order as it was.
    #[action]
    pub fn validate_order(order: &mut Order, checkout: Checkout) -> Result<(), ActionError> {
        if checkout.items.is_empty() {
            return Err(ActionError::new("an order needs at least one item"));
        }
        order.items = checkout.items;
        order.total = checkout.total;
        Ok(())
    }

    /// A payment.
    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    pub struct Payment {
        /// How much.
        pub amount: f64,
    }

    /// The guard of `Pending -> Paid`: the payment covers what is owed.
    pub fn paid_in_full(order: &Order, payment: Payment) -> bool {
        order.paid + payment.amount >= order.total
    }

    /// Takes the payment.
    #[action]
    pub fn charge(order: &mut Order, payment: Payment) {
        order.paid += payment.amount;
    }

    /// Notes the receipt (the `enter Paid` action).
    #[action]
    pub fn send_receipt(order: &mut Order) {
        order.note = Some(format!("receipt for {:.2}", order.paid));
    }

    /// Leaving `Pending`: nothing is held in this example, but the hook runs.
    #[action]
    pub fn release_hold(order: &mut Order) {
        order
            .note
            .get_or_insert_with(String::new)
            .push_str("released; ");
    }

    /// Counts what the clerk sees; any agent can run it (it takes no state).
    #[action]
    pub fn audit() {}

    /// The clerk's actions: `send_receipt` is also an order action, so the clerk's lives in a
    /// module of its own and the `.agent` file names it `clerk::send_receipt`.
    pub mod clerk {
        use super::Clerk;
        use stratagem::prelude::*;

        /// Counts a receipt.
        #[action]
        pub fn send_receipt(clerk: &mut Clerk) {
            clerk.receipts += 1;
            clerk.log.push(format!("receipt {}", clerk.receipts));
        }
    }
}
