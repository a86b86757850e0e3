use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Requested
    terminal Refunded
    Requested -> PendingApproval on request
    PendingApproval -> Refunded on approve
}, migrate "6b05ce76790b1b4e" { state PendingAproval was AwaitingApproval })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refund {
    amount: u64,
}

fn main() {}
