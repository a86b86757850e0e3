//! An agent other services reach over HTTP, by the CloudEvents HTTP binding.
//!
//! ```text
//! cargo run --features http --example http_ingress
//! ```
//!
//! Then, from another terminal (the README's guide shows the answers):
//!
//! ```text
//! curl -i http://127.0.0.1:8080/agents/ledger -H 'content-type: application/cloudevents+json' \
//!   -d '{"specversion":"1.0","id":"1","source":"/shop","type":"order.placed","data":{"order":7}}'
//! curl -i http://127.0.0.1:8080/agents/ledger -H 'ce-specversion: 1.0' -H 'ce-id: 2' \
//!   -H 'ce-source: /shop' -H 'ce-type: order.placed' -H 'content-type: application/json' -d '{"order":8}'
//! curl -s http://127.0.0.1:8080/agents/ledger/call -H 'content-type: application/cloudevents+json' \
//!   -d '{"specversion":"1.0","id":"3","source":"/shop","type":"order.placed","data":{"order":9}}'
//! ```

use stratagem::http::HttpIngress;
use stratagem::prelude::*;

/// Keeps the orders it hears of and announces each.
#[agent(strategy = Direct, actions [record], routes { "order.placed" => record })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Ledger {
    orders: Vec<serde_json::Value>,
}

/// Records an order.
#[action]
fn record(ledger: &mut Ledger, order: serde_json::Value) -> Outcome {
    ledger.orders.push(order.clone());
    println!("order {order} recorded ({} so far)", ledger.orders.len());
    Outcome::new().emit(Signal::new("order.recorded", order))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ledger = AgentServer::start(Ledger::new().with_id("ledger"), Options::default()).await?;
    // Loopback only, unless you pick another address; `.bearer_token(..)` to require a token.
    let server = HttpIngress::new()
        .agent(ledger.handle())
        .call_mode(true)
        .serve()
        .await?;
    println!(
        "POST CloudEvents to http://{}/agents/ledger (Ctrl-C to stop)",
        server.address()
    );
    std::future::pending::<()>().await;
    Ok(())
}
