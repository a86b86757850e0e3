//! Exports the agent server's spans to an OpenTelemetry collector over OTLP: a ReAct agent asks
//! a (scripted) model, runs a tool and answers, and `invoke_agent`, `chat` and `execute_tool`
//! spans with their `gen_ai.*` attributes reach the collector.
//!
//! ```text
//! docker run -p 4318:4318 otel/opentelemetry-collector   # or Jaeger: jaegertracing/jaeger (UI on :16686)
//! cargo run -p stratagem-benches --features otel --example otlp
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 cargo run -p stratagem-benches --features otel --example otlp
//! ```
//!
//! The library depends on `tracing` alone; the wiring below (an OTLP/HTTP exporter, a tracer
//! provider, the `tracing-opentelemetry` layer) is the application's.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use stratagem::ai::{ModelTable, ScriptedModel};
use stratagem::prelude::*;
use tracing_subscriber::layer::SubscriberExt;

/// Answers questions about the weather.
#[agent(strategy = React, model = "fast", tools = [forecast], max_iterations = 4)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Forecaster {
    asked: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct City {
    /// The city, such as Lyon.
    city: String,
}

/// Tomorrow's forecast for a city.
#[action]
fn forecast(forecaster: &mut Forecaster, params: City) -> Outcome {
    forecaster.asked += 1;
    Outcome::new().reply(json!({"city": params.city, "sky": "sunny", "high_c": 21}))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // OTLP over HTTP (protobuf) to `OTEL_EXPORTER_OTLP_ENDPOINT`, by default
    // http://localhost:4318. The blocking client lives on the exporter's own thread, so the
    // provider is built and shut down outside the async runtime.
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .unwrap_or_else(|_| "http://localhost:4318".to_string());
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("forecaster").build())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("stratagem"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let answer = runtime.block_on(ask())?;
    drop(runtime);
    println!("the agent answered: {answer}");

    match provider.shutdown() {
        Ok(()) => println!("spans exported to {endpoint}"),
        Err(error) => {
            println!("exporting to {endpoint} failed ({error}); is a collector listening?")
        }
    }
    Ok(())
}

/// One question to the agent, under a W3C trace context as another service would send it.
async fn ask() -> Result<String, Box<dyn std::error::Error>> {
    let model = ScriptedModel::new()
        .user("Will it rain in Lyon tomorrow?")
        .call("forecast", json!({"city": "Lyon"}))
        .answer("No: tomorrow is sunny in Lyon, 21 °C at most.");
    let models = ModelTable::new().alias("fast", Arc::new(model), "scripted-weather");
    let server = AgentServer::start(Forecaster::new(), Options::default().models(models)).await?;
    let mut events = server.subscribe();
    let question = Signal::new(
        "ai.query",
        json!({"query": "Will it rain in Lyon tomorrow?", "request_id": "q-1"}),
    )
    .with_extension(
        "traceparent",
        json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    );
    server.call(question).await?;
    server.await_completion(Duration::from_secs(10)).await?;
    server.stop().await;
    let mut answer = String::from("(none)");
    while let Ok(signal) = events.try_recv() {
        if signal.signal_type == "ai.request.completed" {
            answer = signal.data["answer"]
                .as_str()
                .unwrap_or("(none)")
                .to_string();
        }
    }
    Ok(answer)
}
