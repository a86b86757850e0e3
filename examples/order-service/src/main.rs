//! Runs the order of `agents/order.agent` in-process: `cargo run -p order-service`.

use order_service::agents::{Clerk, Order, OrderEvent, OrderState};
use stratagem::prelude::*;

fn main() {
    let mut order = Order::new();
    order
        .cmd(OrderEvent::Checkout.with(json!({"items": ["tea", "cake"], "total": 7.5})))
        .expect("checkout");
    assert_eq!(order.fsm_state(), OrderState::Pending);

    // Not enough money: the guard refuses, nothing changes.
    assert!(
        order
            .cmd(OrderEvent::Pay.with(json!({"amount": 5.0})))
            .is_err()
    );
    assert_eq!(order.fsm_state(), OrderState::Pending);

    // Through a signal and a route this time.
    order.handle_signal(&Signal::new("order.pay", json!({"amount": 7.5})));
    assert_eq!(order.fsm_state(), OrderState::Paid);
    order.cmd(OrderEvent::Deliver).expect("deliver");
    let state = order.state();
    println!(
        "order: {:?}, {:?} total {:.2}, paid {:.2}, note {:?}",
        order.fsm_state(),
        state.items,
        state.total,
        state.paid,
        state.note
    );
    assert!(order.snapshot().done());

    let mut clerk = Clerk::new();
    clerk.handle_signal(&Signal::new("clerk.receipt", json!(null)));
    println!("clerk: {:?}", clerk.state().log);
    assert_eq!(clerk.state().receipts, 1);
}
