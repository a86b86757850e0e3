use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Requested
    terminal Refunded
    Requested -> PendingApproval on request
    PendingApproval -> Refunded on approve
}, migrate "6b05ce76790b1b4e" { field amount was total  field note = "none" })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refund {
    amount: u64,
    notes: String,
}

fn main() {}
