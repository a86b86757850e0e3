use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Cart
    terminal Paid
    Cart -> Pendng on checkout
    Pending -> Paid on pay
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Order {}

fn main() {}
