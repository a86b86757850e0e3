use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Requested
    terminal Refunded
    Requested -> Refunded on approve
}, lock = "no_such.lock")]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refund {
    amount: u64,
}

fn main() {}
