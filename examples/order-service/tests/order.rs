//! The agents compiled from `agents/order.agent` behave as the file says.

use order_service::agents::{Clerk, Order, OrderEvent, OrderState};
use stratagem::prelude::*;

fn checked_out() -> Agent<Order> {
    let mut order = Order::new();
    order
        .cmd(OrderEvent::Checkout.with(json!({"items": ["tea"], "total": 4.0})))
        .unwrap();
    order
}

#[test]
fn defaults_come_from_the_file() {
    let order = Order::default();
    assert_eq!((order.items.len(), order.total, order.paid), (0, 0.0, 0.0));
    assert_eq!(order.note, None);
    let clerk = Clerk::default();
    assert_eq!(clerk.receipts, 0);
    assert_eq!(clerk.log, ["opened"]);
    assert_eq!(clerk.rate, 1.0);
    assert_eq!(clerk.grade, 'A');
    assert_eq!(clerk.limits, [1, 2]);
    assert_eq!(clerk.discount, Some(5.0));
    assert_eq!(
        <Order as AgentSpec>::DESCRIPTION,
        "Takes an order from cart to delivery"
    );
}

#[test]
fn the_happy_path_runs_exit_row_and_entry_actions() {
    let mut order = checked_out();
    assert_eq!(order.fsm_state(), OrderState::Pending);
    order
        .cmd(OrderEvent::Pay.with(json!({"amount": 4.0})))
        .unwrap();
    assert_eq!(order.fsm_state(), OrderState::Paid);
    assert_eq!(order.state().paid, 4.0);
    assert_eq!(order.state().note.as_deref(), Some("receipt for 4.00"));
    order.cmd(OrderEvent::Deliver).unwrap();
    assert_eq!(order.snapshot().status, Status::Success);
}

#[test]
fn a_failing_guard_or_action_changes_nothing() {
    let mut order = Order::new();
    let empty = order.cmd(OrderEvent::Checkout.with(json!({"items": [], "total": 0.0})));
    assert!(empty.is_err());
    assert_eq!(order.fsm_state(), OrderState::Cart);
    assert!(order.state().items.is_empty());

    let mut order = checked_out();
    assert!(
        order
            .cmd(OrderEvent::Pay.with(json!({"amount": 1.0})))
            .is_err()
    );
    assert_eq!(order.fsm_state(), OrderState::Pending);
    assert_eq!(order.state().paid, 0.0);
}

#[test]
fn routes_reach_events_and_actions() {
    let mut order = checked_out();
    order.handle_signal(&Signal::new("order.web.cancel", json!(null)));
    assert_eq!(order.fsm_state(), OrderState::Cancelled);
    assert_eq!(order.snapshot().status, Status::Failure);

    let mut clerk = Clerk::new();
    clerk.handle_signal(&Signal::new("clerk.receipt", json!(null)));
    clerk.handle_signal(&Signal::new("clerk.receipt", json!(null)));
    assert_eq!(clerk.state().receipts, 2);
}

#[test]
fn the_pending_timer_is_armed_on_entry() {
    let mut order = Order::new();
    let directives = order
        .cmd(OrderEvent::Checkout.with(json!({"items": ["tea"], "total": 4.0})))
        .unwrap();
    assert!(
        directives
            .iter()
            .any(|d| matches!(d, Directive::Schedule { delay, .. } if delay.as_secs() == 30 * 60)),
        "{directives:?}"
    );
}
