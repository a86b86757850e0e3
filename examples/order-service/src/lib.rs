//! The order of the guide, written in `agents/order.agent`, compiled by `build.rs` with
//! `agent_dsl::Builder` and included with `stratagem::include_agents!`. `src/main.rs` runs it;
//! `tests/` checks how it behaves.

#![forbid(unsafe_code)]

/// The agents of `agents/order.agent`: their state structs, FSM enums and `AgentSpec` impls.
pub mod agents {
    // The `.agent` file names actions and guards by path; they resolve here.
    pub use super::actions::*;
    pub use super::helpdesk::*;
    pub use super::patrol::*;
    stratagem::include_agents!("order");
    stratagem::include_agents!("patrol");
    stratagem::include_agents!("helpdesk");
    stratagem::include_agents!("reasoning");
}

/// The helpdesk's tools (`agents/helpdesk.agent`).
pub mod helpdesk {
    use super::agents::Helpdesk;
    use stratagem::prelude::*;

    /// Which order.
    #[derive(Debug, Deserialize, JsonSchema)]
    pub struct Lookup {
        /// The order's number.
        pub id: u32,
    }

    /// Looks an order up (here: every odd order is late).
    #[action]
    pub fn lookup_order(_desk: &Helpdesk, lookup: Lookup) -> Outcome {
        let status = if lookup.id % 2 == 1 {
            "late"
        } else {
            "on time"
        };
        Outcome::new().reply(json!({"id": lookup.id, "status": status}))
    }

    /// A ticket to open.
    #[derive(Debug, Deserialize, JsonSchema)]
    pub struct Ticket {
        /// What it is about.
        pub subject: String,
    }

    /// Opens a ticket.
    #[action]
    pub fn open_ticket(desk: &mut Helpdesk, ticket: Ticket) -> Outcome {
        desk.tickets.push(ticket.subject);
        Outcome::new().reply(json!({"ticket": desk.tickets.len()}))
    }
}

/// The sentry's actions and condition (`agents/patrol.agent`).
pub mod patrol {
    use super::agents::Sentry;
    use stratagem::prelude::*;

    /// The condition of the patrol's selector.
    pub fn battery_ok(sentry: &Sentry) -> bool {
        sentry.battery >= 20
    }

    /// Charges 40% per tick until full.
    #[action]
    pub fn recharge(sentry: &mut Sentry) -> stratagem::bt::Status {
        sentry.battery = sentry.battery.saturating_add(40).min(100);
        sentry.log.push(format!("charged to {}", sentry.battery));
        if sentry.battery == 100 {
            stratagem::bt::Status::Success
        } else {
            stratagem::bt::Status::Running
        }
    }

    /// The next target: four steps ahead.
    #[action]
    pub fn pick_target(sentry: &mut Sentry) {
        sentry.target = Some(sentry.position + 4);
    }

    /// How fast to move.
    #[derive(Debug, Deserialize, JsonSchema, Params)]
    pub struct Move {
        /// Steps per tick.
        pub speed: i32,
    }

    /// Moves towards the target, `speed` steps per tick, 5% battery per tick.
    #[action]
    pub fn move_to(
        sentry: &mut Sentry,
        params: Move,
    ) -> Result<stratagem::bt::Status, ActionError> {
        let target = sentry.target.ok_or_else(|| ActionError::new("no target"))?;
        sentry.position = (sentry.position + params.speed).min(target);
        sentry.battery = sentry.battery.saturating_sub(5);
        if sentry.position < target {
            return Ok(stratagem::bt::Status::Running);
        }
        sentry.visited += 1;
        sentry.target = None;
        Ok(stratagem::bt::Status::Success)
    }

    /// A note to log.
    #[derive(Debug, Deserialize, JsonSchema, Params)]
    pub struct Note {
        /// What to write.
        pub note: String,
    }

    /// Writes a note.
    #[action]
    pub fn report(sentry: &mut Sentry, params: Note) {
        sentry.log.push(params.note);
    }

    /// Someone knocks at the gatekeeper's gate.
    #[action]
    pub fn knock(gate: &mut super::agents::Gatekeeper) {
        gate.knocks += 1;
    }

    /// What the person at the gatekeeper's desk is shown.
    #[derive(Debug, Serialize)]
    pub struct Visitor {
        /// How many knocks so far.
        pub knocks: u32,
    }

    impl From<&super::agents::Gatekeeper> for Visitor {
        fn from(gate: &super::agents::Gatekeeper) -> Self {
            Visitor {
                knocks: gate.knocks,
            }
        }
    }

    /// The person's answer.
    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    pub struct Permission {
        /// Whether the gate opens.
        pub allow: bool,
        /// Who decided.
        pub by: String,
    }

    /// Opens the gate when allowed; a refusal fails the leaf.
    #[action]
    pub fn let_in(
        gate: &mut super::agents::Gatekeeper,
        permission: Permission,
    ) -> stratagem::bt::Status {
        if !permission.allow {
            return stratagem::bt::Status::Failure;
        }
        gate.let_in.push(permission.by);
        stratagem::bt::Status::Success
    }
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
