use stratagem::prelude::*;

// The target is misspelt; code using the agent's diagrams and events still type-checks against
// the fallback, so the typo is the only error reported.
#[agent(strategy = Fsm, transitions {
    initial Cart
    terminal Paid
    Cart -> Pendng on checkout
    Pending -> Paid on pay
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Order {}

fn main() {
    println!("{}\n{}", OrderState::MERMAID, OrderState::DOT);
    let mut order = Order::new();
    let _ = order.cmd(OrderEvent::Checkout);
    let _ = order.state();
}
