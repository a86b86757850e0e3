//! The Order agent of the guide as an FSM: declared transitions with real guards and actions,
//! driven through a happy path, an invalid event and a timeout, printing snapshots.
//!
//! Run it with `cargo run --example order_fsm`. The timeout runs on the agent server under
//! tokio's paused clock, so "30 minutes later" takes no time at all.

use std::time::Duration;

use stratagem::prelude::*;
use stratagem::{FsmError, Snapshot};
use tracing_subscriber::EnvFilter;

/// Takes an order from cart to delivery.
#[agent(
    strategy = Fsm,
    transitions {
        initial Cart
        terminal Delivered
        terminal Cancelled as failure
        enter Paid do send_receipt
        exit Pending do release_hold

        Cart    -> Pending   on checkout do validate_order
        Pending -> Paid      on pay      if paid_in_full do charge
        Pending -> Cancelled on cancel
        Pending -> Cancelled after 30m
        Paid    -> Delivered on deliver
    },
    actions [audit],
    routes {
        "order.checkout" => checkout
        "order.pay" => pay priority 10
        "order.*.cancel" => cancel
        "order.deliver" => deliver
        "order.**" => audit
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Order {
    /// What is in the cart.
    pub items: Vec<String>,
    /// The price, set at checkout.
    pub total: f64,
    /// What has been paid.
    pub paid: f64,
    /// A note from the customer.
    pub note: Option<String>,
    /// Whether stock is held for the order.
    pub hold: bool,
    /// Receipts sent.
    pub receipts: u32,
    /// `order.*` signals seen.
    pub audited: u32,
}

/// Prices of what the shop sells.
fn price(item: &str) -> Option<f64> {
    match item {
        "tea" => Some(4.5),
        "mug" => Some(8.0),
        "kettle" => Some(35.0),
        _ => None,
    }
}

/// A payment, as the `order.pay` signal carries it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Payment {
    /// The amount paid.
    pub amount: f64,
}

/// Prices the cart and puts the stock on hold; refuses an empty cart or an unknown item.
#[action]
fn validate_order(order: &mut Order) -> Result<(), ActionError> {
    if order.items.is_empty() {
        return Err(ActionError::new("the cart is empty"));
    }
    let mut total = 0.0;
    for item in &order.items {
        total +=
            price(item).ok_or_else(|| ActionError::new(format!("`{item}` is not sold here")))?;
    }
    order.total = total;
    order.hold = true;
    Ok(())
}

/// The guard of `pay`: does this payment cover what is still due?
fn paid_in_full(order: &Order, payment: Payment) -> bool {
    order.paid + payment.amount >= order.total
}

/// Takes the payment.
#[action]
fn charge(order: &mut Order, payment: Payment) {
    order.paid += payment.amount;
}

/// Runs on entering `Paid`: emits the receipt.
#[action]
fn send_receipt(order: &mut Order) -> Outcome {
    order.receipts += 1;
    Outcome::new().emit(Signal::new(
        "order.receipt",
        json!({ "total": order.total, "paid": order.paid }),
    ))
}

/// Runs on leaving `Pending` (paid or cancelled): the stock is no longer held.
#[action]
fn release_hold(order: &mut Order) {
    order.hold = false;
}

/// Counts every `order.*` signal.
#[action]
fn audit(order: &mut Order) {
    order.audited += 1;
}

fn show(label: &str, snapshot: &Snapshot) {
    println!(
        "  {label:<28} status={:<8} done={:<5} state={}",
        format!("{:?}", snapshot.status),
        snapshot.done(),
        snapshot.details["state"]
    );
}

fn cart(items: &[&str]) -> Agent<Order> {
    Agent::new(Order {
        items: items.iter().map(|s| s.to_string()).collect(),
        ..Order::default()
    })
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The runtime's `tracing` events, quiet unless asked: `RUST_LOG=stratagem=debug` prints
    // every transition, action run, directive and emitted signal.
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .without_time()
        .init();
    println!(
        "The Order machine (OrderState::MERMAID):\n{}",
        OrderState::MERMAID
    );

    println!("1. Happy path, with the typed API");
    let mut order = cart(&["tea", "mug"]);
    show("new", &order.snapshot());
    let directives = order.cmd(OrderEvent::Checkout)?;
    show("checkout", &order.snapshot());
    if let [Directive::Schedule { delay, .. }] = directives.as_slice() {
        println!("  (Pending armed its timeout: {} s)", delay.as_secs());
    }
    // Not enough: the guard rejects the payment and nothing changes.
    match order.cmd(OrderEvent::Pay.with(json!({ "amount": 5.0 }))) {
        Err(FsmError::GuardRejected { .. }) => println!(
            "  pay 5.00 of {:.2}: rejected by `paid_in_full`",
            order.state().total
        ),
        other => return Err(format!("expected a rejected guard, got {other:?}").into()),
    }
    let directives = order.cmd(OrderEvent::Pay.with(json!({ "amount": 12.5 })))?;
    show("pay 12.50", &order.snapshot());
    for directive in &directives {
        if let Directive::Emit(signal) = directive {
            println!("  emitted {} {}", signal.signal_type, signal.data);
        }
    }
    order.cmd(OrderEvent::Deliver)?;
    show("deliver", &order.snapshot());
    let state = order.state();
    println!(
        "  paid {:.2} of {:.2}, hold released: {}, receipts: {}",
        state.paid, state.total, !state.hold, state.receipts
    );

    println!("2. An invalid event, through signals and routes");
    let mut order = cart(&["kettle"]);
    order.handle_signal(&Signal::new("order.checkout", json!({})));
    show("order.checkout", &order.snapshot());
    let directives = order.handle_signal(&Signal::new("order.deliver", json!({})));
    for error in directives.iter().filter_map(Directive::as_error) {
        println!("  order.deliver -> error: {error}");
    }
    show("after the invalid event", &order.snapshot());
    let directives = order.handle_signal(&Signal::new("order.pay", json!({ "amount": "lots" })));
    for error in directives.iter().filter_map(Directive::as_error) {
        println!("  order.pay with bad data -> error: {error}");
    }
    println!("  audited signals: {}", order.state().audited);

    println!("3. A timeout, on the agent server");
    let server = AgentServer::start(cart(&["tea"]), Options::default()).await?;
    let outcome = server
        .call(Signal::new("order.checkout", json!({})))
        .await?;
    show("order.checkout", &outcome.snapshot);
    tokio::time::advance(Duration::from_secs(29 * 60)).await;
    show("29 minutes later", &server.snapshot().await?);
    tokio::time::advance(Duration::from_secs(60)).await;
    let snapshot = server.await_completion(Duration::from_secs(1)).await?;
    show("30 minutes later", &snapshot);
    let state = server.state().await?;
    println!("  hold released on the way out: {}", !state.hold);
    let report = server.stop().await;
    println!(
        "  timers fired: {}, errors: {}",
        report.timers_fired, report.errors
    );
    Ok(())
}
