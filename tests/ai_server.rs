//! A ReAct agent under the agent server: model calls run in tasks, deltas reach subscribers
//! with their request id, and a checkpoint taken after a tool round thaws and carries on
//! without repeating the model calls already made.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use stratagem::ai::{
    LanguageModel, LlmError, LlmRequest, LlmResponse, ModelTable, REQUEST_COMPLETED, ScriptedModel,
};
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::MemoryStore;

/// Files support tickets.
#[agent(strategy = React, model = "fast", tools = [open_ticket], max_iterations = 4)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Desk {
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

/// A scripted model whose calls from number `hang_from` on never answer (a model that is
/// still thinking when the server is stopped).
#[derive(Debug)]
struct Gated {
    script: ScriptedModel,
    hang_from: usize,
    calls: AtomicUsize,
}

impl LanguageModel for Gated {
    fn name(&self) -> &str {
        "gated"
    }
    fn generate(&self, request: LlmRequest) -> BoxFuture<'static, Result<LlmResponse, LlmError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.hang_from {
            return Box::pin(std::future::pending());
        }
        self.script.generate(request)
    }
}

fn table(model: Arc<dyn LanguageModel>) -> ModelTable {
    ModelTable::new().alias("fast", model, "test-model")
}

async fn wait_for(server: &AgentServer<Desk>, what: impl Fn(&Snapshot) -> bool) -> Snapshot {
    for _ in 0..500 {
        let snapshot = server.snapshot().await.unwrap();
        if what(&snapshot) {
            return snapshot;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the agent never got there: {:?}", server.snapshot().await);
}

#[tokio::test]
async fn a_request_streams_deltas_to_subscribers_and_completes() {
    let script = ScriptedModel::new()
        .user("my printer is on fire")
        .say("That needs a ticket.")
        .call("open_ticket", json!({"subject": "printer on fire"}))
        .answer("I opened ticket 1; please step away from the printer.");
    let options = Options::default().models(table(Arc::new(script.clone())));
    let server = AgentServer::start(Desk::new(), options).await.unwrap();
    let mut events = server.subscribe();
    let query = Signal::new(
        "ai.query",
        json!({"query": "my printer is on fire", "request_id": "req-1"}),
    );
    server.call(query).await.unwrap();
    let done = server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success);
    assert_eq!(
        done.result.as_ref().unwrap()["answer"],
        "I opened ticket 1; please step away from the printer."
    );
    assert_eq!(server.state().await.unwrap().tickets, ["printer on fire"]);
    script.assert_finished();

    let mut deltas = Vec::new();
    let mut types = Vec::new();
    while let Ok(signal) = events.try_recv() {
        if signal.signal_type == "ai.llm.delta" {
            deltas.push(signal.data.clone());
        }
        types.push(signal.signal_type);
    }
    assert!(deltas.len() >= 4, "{deltas:?}");
    assert!(
        deltas.iter().all(|d| d["request_id"] == "req-1"),
        "{deltas:?}"
    );
    let calls: std::collections::BTreeSet<String> = deltas
        .iter()
        .map(|d| d["call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        calls.into_iter().collect::<Vec<_>>(),
        ["req-1/llm/1", "req-1/llm/2"]
    );
    let text: String = deltas
        .iter()
        .filter(|d| d["call_id"] == "req-1/llm/2" && d["delta"]["kind"] == "text")
        .map(|d| d["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        text,
        "I opened ticket 1; please step away from the printer."
    );
    assert_eq!(
        types.first().map(String::as_str),
        Some("ai.request.started")
    );
    assert_eq!(types.last().map(String::as_str), Some(REQUEST_COMPLETED));
    server.stop().await;
}

/// Runs one request with a tool round on a fresh server, with a subscriber or without; the
/// completed snapshot and what the subscriber got.
async fn run_request(subscribed: bool) -> (Snapshot, Vec<Signal>) {
    let script = ScriptedModel::new()
        .call("open_ticket", json!({"subject": "fire"}))
        .answer("Ticket 1 is open.");
    let options = Options::default().models(table(Arc::new(script)));
    let server = AgentServer::start(Desk::new().with_id("d"), options)
        .await
        .unwrap();
    let mut events = subscribed.then(|| server.subscribe());
    let query = Signal::new("ai.query", json!({"query": "fire", "request_id": "r"}));
    server.cast(query).unwrap();
    let done = server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    let mut heard = Vec::new();
    while let Some(Ok(signal)) = events.as_mut().map(|e| e.try_recv()) {
        heard.push(signal);
    }
    server.stop().await;
    (done, heard)
}

#[tokio::test]
async fn informational_events_reach_a_subscriber_and_nobody_else_changes_the_outcome() {
    let (done, heard) = run_request(true).await;
    let data = |type_: &str| -> Vec<serde_json::Value> {
        heard
            .iter()
            .filter(|s| s.signal_type == type_)
            .map(|s| s.data.clone())
            .collect()
    };
    assert_eq!(
        data("ai.tool.started"),
        [
            json!({"request_id": "r", "call_id": "r/tool/1/0", "name": "open_ticket",
                "arguments": {"subject": "fire"}})
        ]
    );
    let result = &data("ai.tool.result")[0];
    assert_eq!(
        (&result["request_id"], &result["name"], &result["ok"]),
        (&json!("r"), &json!("open_ticket"), &json!(true))
    );
    let usage = data("ai.usage");
    assert_eq!(usage.len(), 2, "one per model call: {heard:?}");
    assert_eq!(usage[1]["call_id"], "r/llm/2");
    assert_eq!(usage[1]["total"], done.result.as_ref().unwrap()["usage"]);
    // Unsubscribed, the server lets the strategy leave those events out: same outcome.
    let (quiet, nothing) = run_request(false).await;
    assert!(nothing.is_empty());
    assert_eq!(quiet.result, done.result);
    assert_eq!(quiet.status, Status::Success);
}

#[tokio::test]
async fn a_checkpoint_after_a_tool_round_thaws_without_repeating_model_calls() {
    let store = MemoryStore::new();
    let first = Arc::new(Gated {
        script: ScriptedModel::new()
            .user("the printer is on fire")
            .call("open_ticket", json!({"subject": "fire"})),
        hang_from: 2,
        calls: AtomicUsize::new(0),
    });
    let options = Options::default().models(table(first.clone()));
    let server = AgentServer::start(Desk::new().with_id("desk-1"), options)
        .await
        .unwrap();
    server
        .cast(Signal::new(
            "ai.query",
            json!({"query": "the printer is on fire", "request_id": "r"}),
        ))
        .unwrap();
    // The tool round is done and the second model call is in flight when we stop.
    wait_for(&server, |s| s.details["awaiting_llm"] == "r/llm/2").await;
    server.hibernate(&store).await.unwrap();
    assert_eq!(first.calls.load(Ordering::SeqCst), 2);

    let second = ScriptedModel::new().answer("Ticket 1 is open.");
    let options = Options::default().models(table(Arc::new(second.clone())));
    let thawed = AgentServer::<Desk>::thaw(&store, "desk-1", options)
        .await
        .unwrap();
    let done = thawed
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(done.result.as_ref().unwrap()["answer"], "Ticket 1 is open.");
    assert_eq!(
        done.result.as_ref().unwrap()["llm_calls"],
        2,
        "one call before, one after"
    );
    second.assert_finished();
    let requests = second.requests();
    assert_eq!(
        requests.len(),
        1,
        "only the call that was in flight is made again"
    );
    let tool = requests[0]
        .messages
        .iter()
        .find(|m| m.role == stratagem::ai::Role::Tool)
        .unwrap();
    assert_eq!(
        tool.content, r#"{"ticket":1}"#,
        "the conversation came back from the checkpoint"
    );
    assert_eq!(
        thawed.state().await.unwrap().tickets,
        ["fire"],
        "the tool did not run again"
    );
    thawed.stop().await;
}

#[tokio::test]
async fn an_unknown_model_alias_fails_at_start_with_the_known_ones() {
    let script: Arc<dyn LanguageModel> = Arc::new(ScriptedModel::new());
    let options = Options::default().models(ModelTable::new().alias("capable", script, "m"));
    let err = AgentServer::start(Desk::new(), options).await.unwrap_err();
    let ServerError::InvalidOptions { message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        message,
        "agent `Desk`: unknown model alias `fast`; known aliases: `capable`"
    );
    let err = AgentServer::start(Desk::new(), Options::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no model table"), "{err}");
}

#[tokio::test]
async fn a_second_query_while_busy_is_refused() {
    let gated = Arc::new(Gated {
        script: ScriptedModel::new(),
        hang_from: 1,
        calls: AtomicUsize::new(0),
    });
    let server = AgentServer::start(Desk::new(), Options::default().models(table(gated)))
        .await
        .unwrap();
    server
        .call(Signal::new("ai.query", json!("first")))
        .await
        .unwrap();
    let outcome = server
        .call(Signal::new("ai.query", json!("second")))
        .await
        .unwrap();
    let error = outcome.errors().next().unwrap().to_string();
    assert!(error.contains("busy"), "{error}");
    let cancelled = server
        .call(Signal::new("ai.cancel", json!(null)))
        .await
        .unwrap();
    assert_eq!(cancelled.snapshot.status, Status::Failure);
    server.stop().await;
}

/// Its first call streams `old` pieces for a second, then answers "old answer"; later calls
/// answer "new answer" at once. Counts the pieces it produced.
#[derive(Debug, Default)]
struct SlowThenFast {
    calls: AtomicUsize,
    pieces: Arc<AtomicUsize>,
}

impl LanguageModel for SlowThenFast {
    fn name(&self) -> &str {
        "slow-then-fast"
    }
    fn generate(&self, request: LlmRequest) -> BoxFuture<'static, Result<LlmResponse, LlmError>> {
        let stream = self.stream(request);
        Box::pin(stratagem::ai::collect_stream(stream, |_| {}))
    }
    fn stream(
        &self,
        _: LlmRequest,
    ) -> futures::stream::BoxStream<'static, Result<stratagem::ai::LlmDelta, LlmError>> {
        use futures::StreamExt;
        use stratagem::ai::{FinishReason, LlmDelta, Usage};
        let finish = || LlmDelta::Finish {
            reason: FinishReason::Stop,
            usage: Usage::default(),
        };
        if self.calls.fetch_add(1, Ordering::SeqCst) > 0 {
            let pieces = vec![
                Ok(LlmDelta::Text {
                    text: "new answer".into(),
                }),
                Ok(finish()),
            ];
            return futures::stream::iter(pieces).boxed();
        }
        let produced = self.pieces.clone();
        futures::stream::unfold(0u32, move |n| {
            let produced = produced.clone();
            async move {
                match n {
                    0..100 => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        produced.fetch_add(1, Ordering::SeqCst);
                        Some((
                            Ok(LlmDelta::Text {
                                text: "old ".into(),
                            }),
                            n + 1,
                        ))
                    }
                    100 => Some((
                        Ok(LlmDelta::Text {
                            text: "old answer".into(),
                        }),
                        n + 1,
                    )),
                    101 => Some((Ok(finish()), n + 1)),
                    _ => None,
                }
            }
        })
        .boxed()
    }
}

#[tokio::test]
async fn cancelling_stops_the_model_call_and_a_reused_request_id_gets_a_fresh_answer() {
    let model = Arc::new(SlowThenFast::default());
    let pieces = model.pieces.clone();
    let server = AgentServer::start(Desk::new(), Options::default().models(table(model)))
        .await
        .unwrap();
    let mut events = server.subscribe();
    server
        .call(Signal::new(
            "ai.query",
            json!({"query": "first", "request_id": "r1"}),
        ))
        .await
        .unwrap();
    // Some deltas stream in.
    loop {
        let event = events.recv().await.unwrap();
        if event.signal_type == "ai.llm.delta" {
            break;
        }
    }
    let cancelled = server
        .call(Signal::new("ai.cancel", json!(null)))
        .await
        .unwrap();
    assert_eq!(cancelled.snapshot.status, Status::Failure);
    let produced_at_cancel = pieces.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        pieces.load(Ordering::SeqCst) <= produced_at_cancel + 1,
        "the model call kept running after the cancel"
    );
    // Whatever was already published before the cancel, nothing streams after it.
    let mut after_cancel = Vec::new();
    let mut seen_cancel = false;
    while let Ok(event) = events.try_recv() {
        if event.signal_type == "ai.request.failed" {
            seen_cancel = true;
        } else if seen_cancel && event.signal_type == "ai.llm.delta" {
            after_cancel.push(event);
        }
    }
    assert!(seen_cancel);
    assert!(
        after_cancel.is_empty(),
        "deltas after the cancel: {after_cancel:?}"
    );

    // The same request id again: the fresh call's answer, never the old one.
    server
        .call(Signal::new(
            "ai.query",
            json!({"query": "second", "request_id": "r1"}),
        ))
        .await
        .unwrap();
    let done = server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success, "{done:?}");
    let result = done.result.expect("a completed request has a result");
    assert_eq!(result["answer"], "new answer", "{result}");
    server.stop().await;
}

/// A hand-written host-side agent that asks for the same model call twice, as a strategy of
/// the user's could, and keeps the replies it gets.
#[agent(strategy = Direct, actions [ask_twice, keep_reply], routes {
    "desk.ask_twice" => ask_twice,
    "ai.llm.response" => keep_reply,
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Asker {
    errors: Vec<String>,
}

/// Asks for call `c1` twice in one go.
#[action]
fn ask_twice(_asker: &mut Asker) -> Outcome {
    let call = || {
        Directive::Llm(Box::new(stratagem::ai::LlmCall {
            call_id: "c1".into(),
            request_id: "r1".into(),
            request: LlmRequest::new("fast", vec![stratagem::ai::ChatMessage::user("hello")]),
        }))
    };
    Outcome::new().directive(call()).directive(call())
}

/// Keeps a model reply's error.
#[action]
fn keep_reply(asker: &mut Asker, reply: serde_json::Value) {
    let reply: stratagem::ai::LlmReply = serde_json::from_value(reply).unwrap();
    if let Some(error) = reply.error {
        asker.errors.push(error.to_string());
    }
}

#[tokio::test]
async fn a_model_call_asked_again_while_running_is_refused_to_the_agent() {
    let gated = Arc::new(Gated {
        script: ScriptedModel::new(),
        hang_from: 1,
        calls: AtomicUsize::new(0),
    });
    let server = AgentServer::start(Asker::new(), Options::default().models(table(gated)))
        .await
        .unwrap();
    server
        .call(Signal::new("desk.ask_twice", json!({})))
        .await
        .unwrap();
    // The refusal arrives as the call's reply, so the agent (and whoever waits on it) sees it.
    let mut errors = Vec::new();
    for _ in 0..200 {
        errors = server.agent().await.unwrap().state().errors.clone();
        if !errors.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("`c1` is already running"), "{errors:?}");
    server.stop().await;
}

/// Files codes: its tool's schema has a `pattern` the argument validator does not enforce.
#[agent(strategy = React, model = "fast", tools = [file_code])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Coder {
    codes: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Code {
    #[schemars(regex(pattern = "^[A-Z]{3}$"))]
    code: String,
}

/// Files a code.
#[action]
fn file_code(coder: &mut Coder, code: Code) {
    coder.codes.push(code.code);
}

#[tokio::test]
async fn a_tool_schema_with_an_unenforced_keyword_fails_at_start() {
    let script: Arc<dyn LanguageModel> = Arc::new(ScriptedModel::new());
    let options = Options::default().models(table(script));
    let err = AgentServer::start(Coder::new(), options).await.unwrap_err();
    let ServerError::UnenforcedToolSchema { agent, problems } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*agent, "Coder");
    assert_eq!(
        problems,
        "tool `file_code`: `pattern` at `/properties/code`"
    );
    assert!(
        err.to_string()
            .starts_with("cannot start agent `Coder`: tool `file_code`"),
        "{err}"
    );
}
