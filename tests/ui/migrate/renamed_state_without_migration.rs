use stratagem::prelude::*;

// `refund.lock` recorded `AwaitingApproval`; this build renamed it without a migration.
#[agent(strategy = Fsm, transitions {
    initial Requested
    terminal Refunded
    Requested -> PendingApproval on request
    PendingApproval -> Refunded on approve
}, lock = "refund.lock")]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refund {
    amount: u64,
}

fn main() {}
