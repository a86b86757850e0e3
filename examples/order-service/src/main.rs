//! Runs the three agents of `agents/*.agent` in the agent server: `cargo run -p order-service`.
//! The order (an FSM) is driven by signals, the sentry (a behaviour tree) is ticked until its
//! patrol succeeds, and the helpdesk (ReAct) answers a question on a scripted model, offline.

use std::sync::Arc;
use std::time::Duration;

use order_service::agents::{Helpdesk, Order, Sentry};
use stratagem::ai::{ModelTable, QUERY, ScriptedModel};
use stratagem::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The FSM: checkout, a payment the guard refuses, one it accepts, delivery.
    // The file routes `order.checkout`, `order.pay` and cancellations; this host adds a route
    // for deliveries to the machine's `deliver` event.
    let options = Options::default().plugin_route("order.deliver", "deliver");
    let order = AgentServer::start(Order::new().with_id("order-1"), options).await?;
    order
        .call(Signal::new(
            "order.checkout",
            json!({"items": ["tea", "cake"], "total": 7.5}),
        ))
        .await?;
    let refused = order
        .call(Signal::new("order.pay", json!({"amount": 5.0})))
        .await?;
    for error in refused.errors() {
        println!("order: order.pay 5.00 refused: {error}");
    }
    let paid = order
        .call(Signal::new("order.pay", json!({"amount": 7.5})))
        .await?;
    println!(
        "order: order.pay 7.50 -> {}",
        paid.snapshot.details["state"]
    );
    order.cast(Signal::new("order.deliver", json!({})))?;
    let done = order.await_completion(Duration::from_secs(5)).await?;
    let state = order.state().await?;
    println!(
        "order: {:?} in {}, {:?}, paid {:.2}",
        done.status, done.details["state"], state.items, state.paid
    );

    // The behaviour tree: the server ticks it every 100 ms (`tick every 100ms`) until it ends.
    let sentry = AgentServer::start(Sentry::new(), Options::default()).await?;
    let done = sentry.await_completion(Duration::from_secs(10)).await?;
    let log = sentry.state().await?.log;
    println!(
        "sentry: {:?} after {} ticks",
        done.status, done.details["ticks"]
    );
    for line in log {
        println!("sentry:   {line}");
    }

    // The ReAct agent, on a scripted model: the model looks the order up, then answers.
    let model = ScriptedModel::parse(
        r#"
        user "Where is order 7?"
        call lookup_order {"id": 7}
        answer "Order 7 is running late."
        "#,
    )?;
    let models = ModelTable::new().alias("fast", Arc::new(model), "scripted");
    let desk = AgentServer::start(Helpdesk::new(), Options::default().models(models)).await?;
    desk.call(Signal::new(QUERY, json!({"query": "Where is order 7?"})))
        .await?;
    let done = desk.await_completion(Duration::from_secs(10)).await?;
    let answer = done.result.as_ref().map(|r| r["answer"].clone());
    println!(
        "helpdesk: {:?}: {}",
        done.status,
        answer.unwrap_or_default()
    );

    for server in [order.handle(), sentry.handle(), desk.handle()] {
        server.stop().await;
    }
    Ok(())
}
