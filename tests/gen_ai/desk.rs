//! The helpdesk the GenAI telemetry tests watch: a ReAct agent on a scripted model that calls a
//! sync tool and an async one, asked one question under a W3C trace context. Shared by
//! `tests/gen_ai_telemetry.rs` (a recording `tracing` layer) and the benches package's
//! `tests/otel_export.rs` (the OpenTelemetry SDK's in-memory exporter).

use std::sync::Arc;
use std::time::Duration;

use stratagem::ai::{ModelTable, ScriptedModel};
use stratagem::prelude::*;

/// Files support tickets: `open_ticket` runs inside `cmd`, `check_stock` in the host.
#[agent(strategy = React, model = "fast", tools = [open_ticket, check_stock], max_iterations = 4)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Desk {
    tickets: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Ticket {
    subject: String,
}

/// Opens a ticket.
#[action]
fn open_ticket(desk: &mut Desk, ticket: Ticket) -> Outcome {
    desk.tickets.push(ticket.subject);
    Outcome::new().reply(json!({"ticket": desk.tickets.len()}))
}

/// Checks the stock (in another service).
#[action]
async fn check_stock(_desk: &Desk) -> Outcome {
    Outcome::new().reply(json!({"left": 3}))
}

/// The `traceparent` the question arrives with.
pub const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
/// Its `tracestate`.
pub const TRACESTATE: &str = "congo=t61rcWkgMzE";

fn script() -> ScriptedModel {
    ScriptedModel::new()
        .user("my printer is on fire")
        .call("open_ticket", json!({"subject": "printer on fire"}))
        .also("check_stock", json!({}))
        .unwrap()
        .answer("Ticket 1 is open.")
}

/// Asks the desk one question (two model calls, two tools) under the current thread's
/// subscriber; returns what it emitted.
pub async fn ask_the_desk(options: Options) -> Vec<Signal> {
    let model = Arc::new(script());
    let options = options.models(ModelTable::new().alias("fast", model, "test-model"));
    let server = AgentServer::start(Desk::new(), options).await.unwrap();
    let mut events = server.subscribe();
    let query = Signal::new(
        "ai.query",
        json!({"query": "my printer is on fire", "request_id": "req-1"}),
    )
    .with_extension("traceparent", json!(TRACEPARENT))
    .with_extension("tracestate", json!(TRACESTATE));
    server.call(query).await.unwrap();
    let done = server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success, "{done:?}");
    server.stop().await;
    let mut emitted = Vec::new();
    while let Ok(signal) = events.try_recv() {
        emitted.push(signal);
    }
    emitted
}
