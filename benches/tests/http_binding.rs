//! The CloudEvents HTTP binding end to end, on a real local server: structured, binary and
//! batched deliveries and their status codes, call mode, the bearer token, and the sink that
//! POSTs emitted signals (in both modes, with retries and a delivery-failed report).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use stratagem::ExecOptions;
use stratagem::http::{ContentMode, DELIVERY_FAILED, HttpIngress, HttpSink};
use stratagem::prelude::*;
use stratagem::signal::from_binary;

/// Keeps the orders it hears of; `order.slow` holds the agent for a while.
#[agent(strategy = Direct, actions [record, slow], routes {
    "order.placed" => record,
    "order.slow" => slow,
    "stratagem.delivery.failed" => record,
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Ledger {
    seen: Vec<Value>,
}

/// Records an order and announces it.
#[action]
fn record(ledger: &mut Ledger, order: Value) -> Outcome {
    ledger.seen.push(order.clone());
    Outcome::new().emit(Signal::new("order.recorded", order))
}

/// Blocks the agent's task (so its mailbox fills).
#[action]
fn slow(ledger: &mut Ledger) {
    std::thread::sleep(Duration::from_millis(400));
    ledger.seen.push(json!("slow"));
}

async fn json_of(answer: reqwest::Response) -> Value {
    serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap()
}

fn event(id: &str, order: u32) -> Value {
    json!({"specversion": "1.0", "id": id, "source": "/shop", "type": "order.placed", "data": {"order": order}})
}

async fn seen(server: &AgentServer<Ledger>, count: usize) -> Vec<Value> {
    for _ in 0..300 {
        let seen = server.state().await.unwrap().seen;
        if seen.len() >= count {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server.state().await.unwrap().seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_binary_and_batched_signals_reach_the_agent() {
    let agent = AgentServer::start(Ledger::new().with_id("ledger-1"), Options::default())
        .await
        .unwrap();
    let ingress = HttpIngress::new()
        .agent(agent.handle())
        .address("127.0.0.1:0".parse().unwrap());
    let server = ingress.serve().await.unwrap();
    let url = format!("http://{}/agents/ledger-1", server.address());
    let client = reqwest::Client::new();

    let structured = client
        .post(&url)
        .header(
            "content-type",
            "application/cloudevents+json; charset=utf-8",
        )
        .body(event("1", 1).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(structured.status(), 202);

    let binary = client
        .post(&url)
        .header("ce-specversion", "1.0")
        .header("ce-id", "2")
        .header("ce-source", "/shop")
        .header("ce-type", "order.placed")
        .header(
            "ce-traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        )
        .header("content-type", "application/json")
        .body(r#"{"order": 2}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(binary.status(), 202);

    let batch = client
        .post(&url)
        .header("content-type", "application/cloudevents-batch+json")
        .body(json!([event("3", 3), event("4", 4)]).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(batch.status(), 202);

    let seen = seen(&agent, 4).await;
    assert_eq!(
        seen,
        [
            json!({"order": 1}),
            json!({"order": 2}),
            json!({"order": 3}),
            json!({"order": 4})
        ]
    );
    server.stop().await;
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_binding_refuses_gets_its_status_and_names_the_attribute() {
    let agent = AgentServer::start(
        Ledger::new().with_id("ledger-2"),
        Options::default().mailbox_capacity(1),
    )
    .await
    .unwrap();
    let ingress = HttpIngress::new()
        .agent(agent.handle())
        .max_body_bytes(1_000)
        .address("127.0.0.1:0".parse().unwrap());
    let server = ingress.serve().await.unwrap();
    let url = format!("http://{}/agents/ledger-2", server.address());
    let client = reqwest::Client::new();
    let post = |body: String, content_type: &'static str| {
        client
            .post(&url)
            .header("content-type", content_type)
            .body(body)
            .send()
    };

    let mut bad = event("1", 1);
    bad["specversion"] = json!("1.1");
    let answer = post(bad.to_string(), "application/cloudevents+json")
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let body: Value = json_of(answer).await;
    assert_eq!(body["attribute"], "specversion", "{body}");

    let mut bad = event("2", 2);
    bad["Bad.Name"] = json!(1);
    let answer = post(
        json!([event("1", 1), bad]).to_string(),
        "application/cloudevents-batch+json",
    )
    .await
    .unwrap();
    assert_eq!(answer.status(), 400);
    let body: Value = json_of(answer).await;
    assert_eq!(
        (body["attribute"].as_str(), body["index"].as_u64()),
        (Some("Bad.Name"), Some(1)),
        "{body}"
    );

    let answer = post("{}".into(), "application/json").await.unwrap();
    assert_eq!(answer.status(), 400, "binary mode without ce-specversion");
    let body: Value = json_of(answer).await;
    assert_eq!(body["attribute"], "specversion");

    let answer = post("x".repeat(2_000), "application/cloudevents+json")
        .await
        .unwrap();
    assert_eq!(answer.status(), 413);

    let unknown = client
        .post(format!("http://{}/agents/nobody", server.address()))
        .header("content-type", "application/cloudevents+json")
        .body(event("1", 1).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        seen(&agent, 0).await,
        Vec::<Value>::new(),
        "nothing invalid entered"
    );

    // The agent is busy with a slow signal and its mailbox holds one: a batch gets part way.
    let slow = json!({"specversion": "1.0", "id": "s", "source": "/shop", "type": "order.slow"});
    assert_eq!(
        post(slow.to_string(), "application/cloudevents+json")
            .await
            .unwrap()
            .status(),
        202
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let batch: Vec<Value> = (10..15).map(|n| event(&n.to_string(), n)).collect();
    let answer = post(
        json!(batch).to_string(),
        "application/cloudevents-batch+json",
    )
    .await
    .unwrap();
    assert_eq!(answer.status(), 429);
    assert_eq!(answer.headers()["retry-after"], "1");
    let body: Value = json_of(answer).await;
    let accepted = body["accepted"].as_u64().unwrap() as usize;
    assert!(accepted < 5, "{body}");
    let seen = seen(&agent, 1 + accepted).await;
    assert_eq!(
        seen.len(),
        1 + accepted,
        "exactly the accepted ones went in: {seen:?}"
    );
    server.stop().await;
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_mode_answers_with_the_outcome_and_a_token_is_required_when_set() {
    let agent = AgentServer::start(Ledger::new().with_id("ledger-3"), Options::default())
        .await
        .unwrap();
    let ingress = HttpIngress::new()
        .agent(agent.handle())
        .call_mode(true)
        .bearer_token("s3cret")
        .address("127.0.0.1:0".parse().unwrap());
    let server = ingress.serve().await.unwrap();
    let url = format!("http://{}/agents/ledger-3/call", server.address());
    let client = reqwest::Client::new();

    let anonymous = client
        .post(&url)
        .header("content-type", "application/cloudevents+json")
        .body(event("1", 1).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(anonymous.headers()["www-authenticate"], "Bearer");

    let answer = client
        .post(&url)
        .bearer_auth("s3cret")
        .header("content-type", "application/cloudevents+json")
        .body(event("7", 7).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.headers()["content-type"],
        "application/cloudevents+json"
    );
    let outcome = Signal::from_json(json_of(answer).await).unwrap();
    assert_eq!(outcome.signal_type, "stratagem.call.completed");
    assert_eq!(outcome.id, "7/outcome");
    assert_eq!(outcome.data["emitted"][0]["type"], "order.recorded");
    assert_eq!(outcome.data["emitted"][0]["data"], json!({"order": 7}));
    assert!(
        !outcome.extensions.contains_key("traceparent"),
        "{outcome:?}"
    );

    // A traced call (binary mode, as `curl -H 'ce-traceparent: ...'` sends it) is answered in
    // its trace, and the emitted signals are listed as they went out, with its context.
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let answer = client
        .post(&url)
        .bearer_auth("s3cret")
        .header("ce-specversion", "1.0")
        .header("ce-id", "8")
        .header("ce-source", "/shop")
        .header("ce-type", "order.placed")
        .header("ce-traceparent", traceparent)
        .header("ce-tracestate", "shop=eu")
        .header("content-type", "application/json")
        .body(r#"{"order":8}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let outcome = Signal::from_json(json_of(answer).await).unwrap();
    assert_eq!(outcome.extensions["traceparent"], traceparent);
    assert_eq!(outcome.extensions["tracestate"], "shop=eu");
    assert_eq!(outcome.data["emitted"][0]["traceparent"], traceparent);
    assert_eq!(outcome.data["emitted"][0]["tracestate"], "shop=eu");
    server.stop().await;
    agent.stop().await;
}

/// A receiving endpoint: answers `failures` requests with 503, then 200; keeps what it got.
async fn endpoint(failures: usize) -> (String, Arc<Mutex<Vec<Signal>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let left = Arc::new(Mutex::new(failures));
    let keep = got.clone();
    let app = Router::new().route(
        "/in",
        post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let keep = keep.clone();
            let left = left.clone();
            async move {
                let mut left = left.lock().unwrap();
                if *left > 0 {
                    *left -= 1;
                    return StatusCode::SERVICE_UNAVAILABLE;
                }
                let structured = headers["content-type"] == "application/cloudevents+json";
                let signal = if structured {
                    Signal::from_json(serde_json::from_slice(&body).unwrap()).unwrap()
                } else {
                    let pairs = headers
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.to_str().unwrap()));
                    from_binary(pairs, &body).unwrap()
                };
                keep.lock().unwrap().push(signal);
                StatusCode::ACCEPTED
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/in"), got)
}

fn quick(max_retries: u32) -> ExecOptions {
    ExecOptions {
        timeout: Duration::from_secs(2),
        max_retries,
        backoff: Duration::from_millis(5),
        backoff_cap: Duration::from_millis(20),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sink_delivers_emitted_signals_in_either_mode_and_retries() {
    for mode in [ContentMode::Structured, ContentMode::Binary] {
        let (url, got) = endpoint(2).await;
        let sink = HttpSink::new(url).mode(mode).retry(quick(3));
        let agent = AgentServer::start(Ledger::new(), Options::default().transport(Arc::new(sink)))
            .await
            .unwrap();
        agent
            .call(Signal::new("order.placed", json!({"order": 9})))
            .await
            .unwrap();
        for _ in 0..300 {
            if !got.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let got = got.lock().unwrap().clone();
        assert_eq!(got.len(), 1, "{mode:?}: {got:?}");
        assert_eq!(got[0].signal_type, "order.recorded");
        assert_eq!(got[0].data, json!({"order": 9}));
        agent.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_last_try_a_delivery_failed_signal_reports_it() {
    let (url, got) = endpoint(usize::MAX).await;
    let agent = AgentServer::start(Ledger::new(), Options::default())
        .await
        .unwrap();
    let sink = HttpSink::new(url.clone())
        .retry(quick(1))
        .report_to(agent.handle());
    let signal = Signal::new("order.recorded", json!({"order": 5}));
    use stratagem::server::{Origin, Transport};
    sink.publish(
        &Origin {
            agent: "Ledger",
            id: "x",
        },
        &signal,
    )
    .unwrap();
    let seen = seen(&agent, 1).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["endpoint"], url.as_str());
    assert_eq!(seen[0]["signal_id"], signal.id.as_str());
    assert_eq!(seen[0]["attempts"], 2);
    assert!(
        seen[0]["error"].as_str().unwrap().contains("503"),
        "{seen:?}"
    );
    assert!(got.lock().unwrap().is_empty());
    assert_eq!(
        DELIVERY_FAILED, "stratagem.delivery.failed",
        "the route above"
    );
    agent.stop().await;
}
