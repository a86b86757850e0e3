//! Signals over NATS by the CloudEvents NATS protocol binding, against a real `nats-server -js`
//! (and PostgreSQL for the cluster node) started here: a client's sends in structured and in
//! binary mode, read back from JetStream; and W3C trace context crossing HTTP and NATS, so one
//! trace spans services: curl-like POST → agent → JetStream → clustered agent → core NATS and
//! HTTP → agent.

mod support;

use std::sync::Arc;
use std::time::Duration;

use agent_cluster::{
    AGENT_HEADER, CONTENT_TYPE, Cluster, ClusterClient, ClusterOptions, NatsTransport, read_message,
};
use agent_macros::{action, agent};
use agent_runtime::http::{HttpIngress, HttpSink};
use agent_runtime::server::{AgentServer, Options};
use agent_runtime::signal::ContentMode;
use agent_runtime::{AgentSpec, Outcome, Signal};
use async_nats::jetstream::consumer::pull;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::{Nats, Postgres};

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const TRACESTATE: &str = "shop=eu,vendor=k%20v";

/// Fails the test after `seconds` instead of hanging it.
async fn within<T>(seconds: u64, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(seconds), future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not happen within {seconds} s"))
}

fn header<'a>(message: &'a async_nats::Message, name: &str) -> Option<&'a str> {
    message.headers.as_ref()?.get(name).map(|v| v.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_sends_in_either_content_mode_and_receivers_read_both() {
    let nats = Nats::start();
    let signal = Signal::with_id("s-1", "order.paid", json!({"order": 7}))
        .with_source("urn:shop:eu")
        .with_subject("order 7 \u{2615}")
        .with_extension("traceparent", json!(TRACEPARENT))
        .with_extension("tracestate", json!(TRACESTATE));
    for (mode, name) in [
        (ContentMode::Structured, "structured"),
        (ContentMode::Binary, "binary"),
    ] {
        let options = ClusterOptions::new()
            .prefix(format!("wire.{name}"))
            .stream(format!("WIRE_{}", name.to_uppercase()))
            .shards(1)
            .content_mode(mode);
        let client = ClusterClient::connect(&nats.url(), &options).await.unwrap();
        assert_eq!(client.content_mode(), mode);
        let stream = client.ensure_stream("Desk").await.unwrap();
        client.send_to("Desk", "desk-1", &signal).await.unwrap();

        let consumer = stream
            .create_consumer(pull::Config {
                durable_name: Some("reader".to_string()),
                ..Default::default()
            })
            .await
            .unwrap();
        let mut batch = consumer.fetch().max_messages(1).messages().await.unwrap();
        let message = within(10, "a fetch", batch.next()).await.unwrap().unwrap();
        assert_eq!(header(&message, "Nats-Msg-Id"), Some("s-1"));
        assert_eq!(header(&message, AGENT_HEADER), Some("desk-1"));
        match mode {
            ContentMode::Structured => {
                assert_eq!(header(&message, "Content-Type"), Some(CONTENT_TYPE));
                assert_eq!(header(&message, "ce-id"), None);
                let body: Value = serde_json::from_slice(&message.payload).unwrap();
                assert_eq!(body["subject"], "order 7 \u{2615}");
            }
            ContentMode::Binary => {
                assert_eq!(header(&message, "Content-Type"), None);
                assert_eq!(header(&message, "ce-specversion"), Some("1.0"));
                assert_eq!(header(&message, "ce-id"), Some("s-1"));
                assert_eq!(header(&message, "ce-type"), Some("order.paid"));
                assert_eq!(header(&message, "ce-source"), Some("urn:shop:eu"));
                assert_eq!(
                    header(&message, "ce-subject"),
                    Some("order%207%20%E2%98%95")
                );
                assert_eq!(
                    header(&message, "ce-datacontenttype"),
                    Some("application/json")
                );
                assert_eq!(header(&message, "ce-traceparent"), Some(TRACEPARENT));
                assert_eq!(
                    header(&message, "ce-tracestate"),
                    Some("shop=eu,vendor=k%2520v")
                );
                assert_eq!(&message.payload[..], br#"{"order":7}"#);
            }
        }
        let (agent, back) = read_message(&message).unwrap();
        assert_eq!(agent, "desk-1", "{name}");
        assert_eq!(back, signal, "{name}");
        message.ack().await.unwrap();
    }
}

/// Service 1: takes orders over HTTP and hands each to the clustered `Relay` `relay-1`.
#[agent(strategy = Direct, crate = agent_runtime, actions [hand_over], routes { "order.placed" => hand_over })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Front {
    handed: u32,
}

#[action(crate = "agent_runtime")]
fn hand_over(front: &mut Front, order: Value) -> Outcome {
    front.handed += 1;
    Outcome::new().emit(agent_cluster::address::<Relay>(
        Signal::new("order.relayed", order),
        "relay-1",
    ))
}

/// Service 2, on a cluster node: passes each order on (over core NATS and HTTP).
#[agent(strategy = Direct, crate = agent_runtime, actions [pass], routes { "order.relayed" => pass })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Relay {
    passed: u32,
}

#[action(crate = "agent_runtime")]
fn pass(relay: &mut Relay, order: Value) -> Outcome {
    relay.passed += 1;
    Outcome::new().emit(Signal::new("order.done", order))
}

/// Service 3: receives the finished orders over HTTP and announces them.
#[agent(strategy = Direct, crate = agent_runtime, actions [finish], routes { "order.done" => finish })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Back {
    finished: u32,
}

#[action(crate = "agent_runtime")]
fn finish(back: &mut Back, order: Value) -> Outcome {
    back.finished += 1;
    Outcome::new().emit(Signal::new("order.finished", order))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_spans_services_across_http_and_nats_in_binary_mode() {
    let nats = Nats::start();
    let pg = Postgres::start(false);

    // Service 3: an agent behind the HTTP binding.
    let back = AgentServer::start(Back::new().with_id("back-1"), Options::default())
        .await
        .unwrap();
    let mut finished = back.subscribe();
    let back_http = HttpIngress::new()
        .agent(back.handle())
        .address("127.0.0.1:0".parse().unwrap())
        .serve()
        .await
        .unwrap();

    // Service 2: a cluster node running `Relay`s, publishing in binary mode on NATS and
    // POSTing what they emit to service 3 in binary mode too.
    let sink = HttpSink::new(format!("http://{}/agents/back-1", back_http.address()))
        .mode(ContentMode::Binary);
    let options = ClusterOptions::new()
        .prefix("trace")
        .stream("TRACE")
        .shards(2)
        .content_mode(ContentMode::Binary)
        .server(Options::default().transport(Arc::new(sink)));
    let node = Cluster::<Relay>::connect_with(&nats.url(), &pg.url(), options.clone())
        .await
        .unwrap();
    let watcher = async_nats::connect(nats.url()).await.unwrap();
    let mut relay_events = watcher.subscribe("trace.events.Relay").await.unwrap();
    watcher.flush().await.unwrap();

    // Service 1: an agent behind the HTTP binding whose emitted signals go over NATS.
    let client = ClusterClient::connect(&nats.url(), &options).await.unwrap();
    let transport = NatsTransport::for_client(&client);
    let front = AgentServer::start(
        Front::new().with_id("front-1"),
        Options::default().transport(Arc::new(transport)),
    )
    .await
    .unwrap();
    let front_http = HttpIngress::new()
        .agent(front.handle())
        .address("127.0.0.1:0".parse().unwrap())
        .serve()
        .await
        .unwrap();

    // What `curl -H 'ce-traceparent: ...'` sends: the HTTP binding's binary mode.
    let answer = reqwest::Client::new()
        .post(format!("http://{}/agents/front-1", front_http.address()))
        .header("ce-specversion", "1.0")
        .header("ce-id", "order-7")
        .header("ce-source", "/shop")
        .header("ce-type", "order.placed")
        .header("ce-traceparent", TRACEPARENT)
        .header("ce-tracestate", "shop=eu,vendor=k%2520v")
        .header("content-type", "application/json")
        .body(r#"{"order":7}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202);

    // Over core NATS, in binary mode, with the trace context in `ce-*` headers.
    let published = within(30, "the relay's publish on NATS", relay_events.next())
        .await
        .unwrap();
    assert_eq!(header(&published, "ce-type"), Some("order.done"));
    assert_eq!(header(&published, "ce-traceparent"), Some(TRACEPARENT));
    assert_eq!(
        header(&published, "ce-tracestate"),
        Some("shop=eu,vendor=k%2520v")
    );
    let (emitter, done) = read_message(&published).unwrap();
    assert_eq!(emitter, "relay-1");
    assert_eq!(done.extensions["traceparent"], TRACEPARENT);
    assert_eq!(done.extensions["tracestate"], TRACESTATE);
    assert_eq!(done.data, json!({"order": 7}));

    // And over HTTP to service 3, whose own emission continues the same trace.
    let last = within(30, "service 3's answer", async {
        loop {
            let signal = finished.recv().await.unwrap();
            if signal.signal_type == "order.finished" {
                return signal;
            }
        }
    })
    .await;
    assert_eq!(last.extensions["traceparent"], TRACEPARENT);
    assert_eq!(last.extensions["tracestate"], TRACESTATE);
    assert_eq!(last.data, json!({"order": 7}));
    assert_eq!(
        node.agent("relay-1").unwrap().state().await.unwrap().passed,
        1
    );
    assert_eq!(front.state().await.unwrap().handed, 1);

    node.shutdown().await.unwrap();
    front_http.stop().await;
    back_http.stop().await;
}
