//! The OpenTelemetry GenAI names of model calls, tool runs and agent requests under the agent
//! server, as spans a recording `tracing` layer sees (name, `otel.name`, attributes, parent),
//! and W3C trace context carried from a signal to the signals emitted while it is handled.
//!
//! A test binary of its own: `tracing` caches per-callsite interest globally.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use stratagem::ai::semconv;
use stratagem::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Subscriber, subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[path = "gen_ai/desk.rs"]
mod desk;

use desk::{TRACEPARENT, TRACESTATE, ask_the_desk};

/// One span: its name, fields, parent's name and its ancestors' names (nearest first).
#[derive(Debug, Clone, Default)]
struct SpanRecord {
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
    fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct Fields<'a>(Option<&'a mut BTreeMap<String, String>>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if let Some(map) = self.0.as_mut() {
            map.insert(field.name().to_string(), format!("{value:?}"));
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if let Some(map) = self.0.as_mut() {
            map.insert(field.name().to_string(), value.to_string());
        }
    }
}

/// Keeps every span, by id, with the fields recorded at creation and later.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<BTreeMap<u64, SpanRecord>>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut record = SpanRecord {
            name: attrs.metadata().name().to_string(),
            parent: ctx
                .span(id)
                .and_then(|s| s.parent())
                .map(|p| p.name().to_string()),
            ancestors: ctx
                .span(id)
                .map(|s| s.scope().skip(1).map(|p| p.name().to_string()).collect())
                .unwrap_or_default(),
            ..SpanRecord::default()
        };
        attrs.record(&mut Fields(Some(&mut record.fields)));
        self.0.lock().unwrap().insert(id.into_u64(), record);
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        let record = spans.entry(id.into_u64()).or_default();
        values.record(&mut Fields(Some(&mut record.fields)));
    }
}

impl Spans {
    fn named(&self, name: &str) -> Vec<SpanRecord> {
        let spans = self.0.lock().unwrap();
        spans.values().filter(|s| s.name == name).cloned().collect()
    }
}

async fn run(options: Options, spans: &Spans) -> Vec<Signal> {
    let guard = subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let emitted = ask_the_desk(options).await;
    drop(guard);
    emitted
}

#[tokio::test]
async fn model_calls_tools_and_requests_carry_the_gen_ai_names() {
    let spans = Spans::default();
    run(Options::default(), &spans).await;

    let agents = spans.named("invoke_agent");
    assert_eq!(agents.len(), 1, "{agents:?}");
    let agent = &agents[0].fields;
    assert_eq!(agent[semconv::OTEL_NAME], "invoke_agent Desk");
    assert_eq!(agent[semconv::OPERATION_NAME], "invoke_agent");
    assert_eq!(agent[semconv::AGENT_NAME], "Desk");
    assert!(!agent[semconv::AGENT_ID].is_empty());
    assert!(!agent.contains_key(semconv::ERROR_TYPE), "{agent:?}");

    let chats = spans.named("chat");
    assert_eq!(chats.len(), 2, "two model calls: {chats:?}");
    for chat in &chats {
        assert_eq!(chat.parent.as_deref(), Some("invoke_agent"));
        let f = &chat.fields;
        assert_eq!(f[semconv::OTEL_NAME], "chat test-model");
        assert_eq!(f[semconv::OPERATION_NAME], "chat");
        assert_eq!(f[semconv::PROVIDER_NAME], "scripted");
        assert_eq!(f[semconv::REQUEST_MODEL], "test-model");
        assert!(f[semconv::USAGE_INPUT_TOKENS].parse::<u64>().unwrap() > 0);
        assert!(f[semconv::USAGE_OUTPUT_TOKENS].parse::<u64>().unwrap() > 0);
        assert!(
            !f.contains_key(semconv::INPUT_MESSAGES),
            "content is opt-in"
        );
        assert!(
            !f.contains_key(semconv::OUTPUT_MESSAGES),
            "content is opt-in"
        );
    }
    let reasons: Vec<&str> = chats
        .iter()
        .map(|c| c.fields[semconv::RESPONSE_FINISH_REASONS].as_str())
        .collect();
    assert_eq!(reasons, ["tool_calls", "stop"]);

    let mut tools = spans.named("execute_tool");
    tools.sort_by(|a, b| a.fields[semconv::TOOL_NAME].cmp(&b.fields[semconv::TOOL_NAME]));
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t.fields[semconv::OTEL_NAME].as_str())
        .collect();
    assert_eq!(
        names,
        ["execute_tool check_stock", "execute_tool open_ticket"]
    );
    for tool in &tools {
        assert_eq!(tool.fields[semconv::OPERATION_NAME], "execute_tool");
        assert!(!tool.fields[semconv::TOOL_CALL_ID].is_empty(), "{tool:?}");
        assert!(!tool.fields.contains_key(semconv::ERROR_TYPE), "{tool:?}");
    }
    assert_eq!(
        tools[0].parent.as_deref(),
        Some("invoke_agent"),
        "the host runs an async tool inside the request's span"
    );
    assert_eq!(
        tools[1].ancestors[..2],
        ["signal", "invoke_agent"],
        "a sync tool runs in the step that handles the model's answer, inside the request's span"
    );
}

#[tokio::test]
async fn prompt_and_answer_are_recorded_only_on_request() {
    let spans = Spans::default();
    run(Options::default().record_model_content(true), &spans).await;
    let chats = spans.named("chat");
    let first = &chats[0].fields;
    assert!(
        first[semconv::INPUT_MESSAGES].contains("my printer is on fire"),
        "{first:?}"
    );
    let last = &chats[1].fields;
    assert!(
        last[semconv::OUTPUT_MESSAGES].contains("Ticket 1 is open."),
        "{last:?}"
    );
}

#[tokio::test]
async fn signals_emitted_while_handling_a_traced_signal_carry_its_trace_context() {
    let spans = Spans::default();
    let emitted = run(Options::default(), &spans).await;
    let started = emitted
        .iter()
        .find(|s| s.signal_type == "ai.request.started")
        .expect("the request started");
    assert_eq!(started.extensions["traceparent"], TRACEPARENT);
    assert_eq!(started.extensions["tracestate"], TRACESTATE);
    // The model's answers and the async tool's completion continue the request's trace, so
    // what the agent emits after them (the request's end) carries it too.
    let completed = emitted
        .iter()
        .find(|s| s.signal_type == "ai.request.completed")
        .expect("the request completed");
    assert_eq!(completed.extensions["traceparent"], TRACEPARENT);
    assert_eq!(completed.extensions["tracestate"], TRACESTATE);
    let traced = |name: &str| {
        spans
            .named(name)
            .into_iter()
            .map(|s| s.fields.get("traceparent").cloned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        traced("signal"),
        vec![Some(TRACEPARENT.to_string()); 3],
        "the query and both model answers are handled in its trace"
    );
    assert_eq!(
        traced("completion"),
        [Some(TRACEPARENT.to_string())],
        "the async tool's completion is handled in its trace"
    );
}

/// Embeds texts on request (the Chat plugin's `chat.embed`).
#[agent(plugins = [Chat { default_model = "fast" }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Embedder {}

#[tokio::test]
async fn an_embeddings_call_has_its_span_and_its_answer_stays_in_the_trace() {
    let spans = Spans::default();
    let guard = subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let model = Arc::new(stratagem::ai::ScriptedModel::new());
    let models = stratagem::ai::ModelTable::new()
        .alias("fast", model.clone(), "test-chat")
        .alias("embedding", model, "test-embedder");
    let server = AgentServer::start(Embedder::new(), Options::default().models(models))
        .await
        .unwrap();
    let mut events = server.subscribe();
    let ask = Signal::new(
        "chat.embed",
        json!({"input": ["red apple", "blue sky"], "request_id": "e1"}),
    )
    .with_extension("traceparent", json!(TRACEPARENT))
    .with_extension("tracestate", json!(TRACESTATE));
    server.call(ask).await.unwrap();
    let embedded = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        loop {
            let signal = events.recv().await.unwrap();
            if signal.signal_type == stratagem::ai::plugins::CHAT_EMBEDDED {
                return signal;
            }
        }
    })
    .await
    .expect("the embeddings arrive");
    server.stop().await;
    drop(guard);
    assert_eq!(embedded.extensions["traceparent"], TRACEPARENT);
    assert_eq!(embedded.extensions["tracestate"], TRACESTATE);

    let calls = spans.named("embeddings");
    assert_eq!(calls.len(), 1, "{calls:?}");
    let call = &calls[0].fields;
    assert_eq!(call[semconv::OTEL_NAME], "embeddings test-embedder");
    assert_eq!(call[semconv::OPERATION_NAME], "embeddings");
    assert_eq!(call[semconv::PROVIDER_NAME], "scripted");
    assert_eq!(call[semconv::REQUEST_MODEL], "test-embedder");
    assert!(
        call[semconv::USAGE_INPUT_TOKENS].parse::<i64>().unwrap() > 0,
        "{call:?}"
    );
    assert!(!call.contains_key(semconv::ERROR_TYPE), "{call:?}");
    let traced: Vec<_> = spans
        .named("signal")
        .into_iter()
        .map(|s| s.fields.get("traceparent").cloned())
        .collect();
    assert_eq!(
        traced,
        vec![Some(TRACEPARENT.to_string()); 2],
        "the request and the embeddings' answer are handled in its trace"
    );
}
