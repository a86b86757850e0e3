//! HTTP ingress: signals per second through `HttpIngress` (structured mode, every CloudEvents
//! rule checked, delivered to a running agent's mailbox) against a bare `axum` handler that
//! only parses the body as JSON and answers 202. One keep-alive client on loopback, one request
//! at a time. `cargo bench --bench http_ingress`; results are in BENCHMARKS.md.

use std::hint::black_box;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use criterion::{Criterion, Throughput};
use serde_json::Value;
use stratagem::http::HttpIngress;
use stratagem::prelude::*;

/// Counts what it receives.
#[agent(strategy = Direct, actions [count], routes { "order.paid" => count })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Counter {
    n: u64,
}

/// Adds one.
#[action]
fn count(counter: &mut Counter) {
    counter.n += 1;
}

const EVENT: &str = r#"{"specversion":"1.0","id":"0192e4a8-7c1e-7d3a-9f1a-2b3c4d5e6f70","source":"https://shop.example/orders","type":"order.paid","subject":"order-17","time":"2026-01-31T12:00:00.123Z","datacontenttype":"application/json","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","data":{"order":17,"amount":12.5,"currency":"EUR","lines":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}]}}"#;

async fn bare() -> std::net::SocketAddr {
    let app = Router::new().route(
        "/agents/{id}",
        post(|body: axum::body::Bytes| async move {
            black_box(serde_json::from_slice::<Value>(&body).is_ok());
            StatusCode::ACCEPTED
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (agent, ingress_server, bare_address) = runtime.block_on(async {
        let agent = AgentServer::start(Counter::new().with_id("counter"), Options::default())
            .await
            .unwrap();
        let server = HttpIngress::new()
            .agent(agent.handle())
            .address("127.0.0.1:0".parse().unwrap())
            .serve()
            .await
            .unwrap();
        (agent, server, bare().await)
    });
    let client = reqwest::Client::new();
    let runtime = &runtime;
    let post = |url: String| {
        let client = client.clone();
        move || {
            runtime.block_on(async {
                let answer = client
                    .post(&url)
                    .header("content-type", "application/cloudevents+json")
                    .body(EVENT)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(answer.status(), 202);
            })
        }
    };
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("http_ingress");
    group.throughput(Throughput::Elements(1));
    let ours = post(format!(
        "http://{}/agents/counter",
        ingress_server.address()
    ));
    group.bench_function("stratagem_ingress", |b| b.iter(&ours));
    let theirs = post(format!("http://{bare_address}/agents/counter"));
    group.bench_function("bare_axum_parse_only", |b| b.iter(&theirs));
    group.finish();
    let delivered = runtime.block_on(agent.state()).unwrap().n;
    assert!(delivered > 0);
    c.final_summary();
}
