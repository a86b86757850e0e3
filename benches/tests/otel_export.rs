//! The GenAI spans as an OpenTelemetry backend receives them: the agent server's `tracing`
//! spans exported through `tracing-opentelemetry` into the OpenTelemetry SDK's in-memory
//! exporter, then read back as OTel span data (name, attributes, parent, trace).
//!
//! `cargo test -p stratagem-benches --features otel --test otel_export` (off by default: the
//! OpenTelemetry crates are not in the default build).

#[path = "../../tests/gen_ai/desk.rs"]
mod desk;

use std::collections::BTreeMap;

use opentelemetry::Value as OtelValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use stratagem::ai::semconv;
use stratagem::prelude::*;
use tracing_subscriber::layer::SubscriberExt;

/// A span's attributes by name.
fn attributes(span: &SpanData) -> BTreeMap<&str, &OtelValue> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.as_str(), &kv.value))
        .collect()
}

fn text(span: &SpanData, key: &str) -> String {
    match attributes(span).get(key) {
        Some(value) => value.as_str().into_owned(),
        None => panic!("span `{}` has no `{key}`: {:?}", span.name, span.attributes),
    }
}

fn int(span: &SpanData, key: &str) -> i64 {
    match attributes(span).get(key) {
        Some(OtelValue::I64(n)) => *n,
        other => panic!("span `{}`: `{key}` is {other:?}", span.name),
    }
}

/// The spans `run` makes, exported through `tracing-opentelemetry` into the in-memory exporter.
async fn export<T>(run: impl Future<Output = T>) -> (T, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("stratagem-test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    let out = run.await;
    drop(guard);
    provider.force_flush().unwrap();
    (out, exporter.get_finished_spans().unwrap())
}

async fn exported() -> Vec<SpanData> {
    export(desk::ask_the_desk(Options::default())).await.1
}

#[tokio::test]
async fn the_gen_ai_spans_reach_an_opentelemetry_exporter_with_their_names_and_attributes() {
    let spans = exported().await;
    let named =
        |name: &str| -> Vec<&SpanData> { spans.iter().filter(|s| s.name == name).collect() };

    let agents = named("invoke_agent Desk");
    assert_eq!(
        agents.len(),
        1,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let agent = agents[0];
    assert_eq!(text(agent, semconv::OPERATION_NAME), "invoke_agent");
    assert_eq!(text(agent, semconv::AGENT_NAME), "Desk");
    assert!(!text(agent, semconv::AGENT_ID).is_empty());
    assert!(!attributes(agent).contains_key(semconv::ERROR_TYPE));

    let chats = named("chat test-model");
    assert_eq!(chats.len(), 2);
    for chat in &chats {
        assert_eq!(
            chat.parent_span_id,
            agent.span_context.span_id(),
            "a child of the request"
        );
        assert_eq!(chat.span_context.trace_id(), agent.span_context.trace_id());
        assert_eq!(text(chat, semconv::OPERATION_NAME), "chat");
        assert_eq!(text(chat, semconv::PROVIDER_NAME), "scripted");
        assert_eq!(text(chat, semconv::REQUEST_MODEL), "test-model");
        assert!(int(chat, semconv::USAGE_INPUT_TOKENS) > 0);
        assert!(int(chat, semconv::USAGE_OUTPUT_TOKENS) > 0);
        assert!(
            !attributes(chat).contains_key(semconv::INPUT_MESSAGES),
            "content is opt-in"
        );
    }
    let mut reasons: Vec<String> = chats
        .iter()
        .map(|c| text(c, semconv::RESPONSE_FINISH_REASONS))
        .collect();
    reasons.sort();
    assert_eq!(reasons, ["stop", "tool_calls"]);

    for tool in ["open_ticket", "check_stock"] {
        let runs = named(&format!("execute_tool {tool}"));
        assert_eq!(runs.len(), 1, "{tool}");
        let run = runs[0];
        assert_eq!(text(run, semconv::OPERATION_NAME), "execute_tool");
        assert_eq!(text(run, semconv::TOOL_NAME), tool);
        assert!(!text(run, semconv::TOOL_CALL_ID).is_empty());
    }
    // The async tool runs in the host, inside the request's span; a sync tool runs inside the
    // step that handles the model's answer, which is itself inside the request's span.
    let async_tool = named("execute_tool check_stock")[0];
    assert_eq!(async_tool.parent_span_id, agent.span_context.span_id());
    assert_eq!(
        async_tool.span_context.trace_id(),
        agent.span_context.trace_id()
    );
    let sync_tool = named("execute_tool open_ticket")[0];
    assert_eq!(
        sync_tool.span_context.trace_id(),
        agent.span_context.trace_id()
    );
    let step = spans
        .iter()
        .find(|s| s.span_context.span_id() == sync_tool.parent_span_id)
        .expect("the sync tool's parent was exported");
    assert_eq!(step.name, "signal");
    assert_eq!(step.parent_span_id, agent.span_context.span_id());
}

/// Joins the server's spans to the W3C trace context signals carry, the OpenTelemetry way.
struct OtelLink;

impl stratagem::server::TraceLink for OtelLink {
    fn continue_trace(&self, span: &tracing::Span, context: &stratagem::signal::TraceContext) {
        use opentelemetry::propagation::TextMapPropagator as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let mut carrier = std::collections::HashMap::new();
        carrier.insert("traceparent".to_string(), context.traceparent().to_string());
        if let Some(state) = context.tracestate() {
            carrier.insert("tracestate".to_string(), state.to_string());
        }
        let parent =
            opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
        span.set_parent(parent)
            .expect("the span is not started yet");
    }

    fn outgoing(
        &self,
        span: &tracing::Span,
        incoming: Option<&stratagem::signal::TraceContext>,
    ) -> Option<stratagem::signal::TraceContext> {
        use opentelemetry::propagation::TextMapPropagator as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let mut carrier = std::collections::HashMap::new();
        opentelemetry_sdk::propagation::TraceContextPropagator::new()
            .inject_context(&span.context(), &mut carrier);
        stratagem::signal::TraceContext::parse(
            carrier.get("traceparent")?,
            incoming.and_then(|c| c.tracestate()),
        )
    }
}

/// Passes an order on.
#[agent(strategy = Direct, actions [pass], routes { "order.placed" => pass })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Hop {}

/// Emits the order, renamed.
#[action]
fn pass(_hop: &mut Hop, order: serde_json::Value) -> Outcome {
    Outcome::new().emit(Signal::new("order.placed", order))
}

#[tokio::test]
async fn with_a_trace_link_one_trace_spans_two_services() {
    const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
    const REMOTE_PARENT: &str = "b7ad6b7169203331";
    let ((hop, last), spans) = export(async {
        let options = Options::default().trace_link(std::sync::Arc::new(OtelLink));
        let first = AgentServer::start(Hop::new().with_id("first"), options.clone())
            .await
            .unwrap();
        let second = AgentServer::start(Hop::new().with_id("second"), options)
            .await
            .unwrap();
        let (mut from_first, mut from_second) = (first.subscribe(), second.subscribe());
        let incoming = Signal::new("order.placed", json!({"order": 7}))
            .with_extension(
                "traceparent",
                json!(format!("00-{TRACE_ID}-{REMOTE_PARENT}-01")),
            )
            .with_extension("tracestate", json!("shop=eu"));
        first.call(incoming).await.unwrap();
        // What a transport would carry to the next service.
        let hop = from_first.recv().await.unwrap();
        second.call(hop.clone()).await.unwrap();
        let last = from_second.recv().await.unwrap();
        first.stop().await;
        second.stop().await;
        (hop, last)
    })
    .await;

    let steps: Vec<&SpanData> = spans.iter().filter(|s| s.name == "signal").collect();
    assert_eq!(
        steps.len(),
        2,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let (first_step, second_step) = (steps[0], steps[1]);
    for step in &steps {
        assert_eq!(step.span_context.trace_id().to_string(), TRACE_ID);
    }
    assert_eq!(first_step.parent_span_id.to_string(), REMOTE_PARENT);
    assert_eq!(
        second_step.parent_span_id,
        first_step.span_context.span_id()
    );
    // What each service emits names its own step as the parent, in the same trace.
    let parent_of = |signal: &Signal| {
        let traceparent = signal.extensions["traceparent"]
            .as_str()
            .unwrap()
            .to_string();
        let fields: Vec<String> = traceparent.split('-').map(str::to_string).collect();
        (fields[1].clone(), fields[2].clone())
    };
    assert_eq!(
        parent_of(&hop),
        (
            TRACE_ID.to_string(),
            first_step.span_context.span_id().to_string()
        )
    );
    assert_eq!(
        parent_of(&last),
        (
            TRACE_ID.to_string(),
            second_step.span_context.span_id().to_string()
        )
    );
    assert_eq!(last.extensions["tracestate"], "shop=eu");
}
