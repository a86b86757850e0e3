//! The inspector's HTTP API, read by a real HTTP client from a real local server watching the
//! café of `examples/inspect`: the agent list, shapes, progress, recent steps, the live
//! stream, truncation, and who may do what (host check, token, read-only).

#[allow(dead_code)]
#[path = "../../examples/inspect/agents.rs"]
mod agents;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use stratagem::Signal;
use stratagem::inspector::{Inspector, RunningInspector};

async fn get(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.expect("the inspector answers");
    let status = response.status().as_u16();
    let body = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

fn base(inspector: &RunningInspector) -> String {
    format!("http://{}", inspector.addr())
}

/// Reads the live stream until a `step` event satisfies `wanted`.
async fn next_step<B: AsRef<[u8]>>(
    stream: &mut (impl futures::Stream<Item = reqwest::Result<B>> + Unpin),
    buffer: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    let read = async {
        loop {
            while let Some(end) = buffer.find("\n\n") {
                let frame: String = buffer.drain(..end + 2).collect();
                let data = frame
                    .lines()
                    .filter_map(|line| line.strip_prefix("data: "))
                    .collect::<String>();
                if frame.contains("event: step") {
                    let event: Value = serde_json::from_str(&data).unwrap();
                    if wanted(&event) {
                        return event;
                    }
                }
            }
            let chunk = stream.next().await.expect("the stream stays open").unwrap();
            buffer.push_str(&String::from_utf8_lossy(chunk.as_ref()));
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("the step arrives on the live stream")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_lists_draws_and_streams_the_agents() {
    let cafe = agents::Cafe::open(Duration::from_millis(20)).await.unwrap();
    let inspector = Inspector::new()
        .agent(&cafe.barista)
        .agent(&cafe.rover)
        .agent(&cafe.helpdesk)
        .serve("127.0.0.1:0")
        .await
        .unwrap();
    let base = base(&inspector);
    assert_eq!(inspector.url(), format!("{base}/"));

    let (status, page) = get(&format!("{base}/")).await;
    assert_eq!(status, 200);
    assert!(
        page.as_str()
            .unwrap()
            .contains("<script src=\"inspector.js\">")
    );

    let (status, list) = get(&format!("{base}/api/agents")).await;
    assert_eq!(status, 200);
    let names: Vec<_> = list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].clone(), a["kind"].clone()))
        .collect();
    assert_eq!(
        names,
        [
            (json!("Barista"), json!("machine")),
            (json!("Rover"), json!("tree")),
            (json!("Helpdesk"), json!("conversation")),
        ]
    );
    assert_eq!(list["allow_signals"], false);

    let (_, barista) = get(&format!("{base}/api/agents/0")).await;
    assert_eq!(barista["shape"]["initial"], "Idle");
    assert_eq!(
        barista["shape"]["transitions"][0],
        json!({"from": "Idle", "to": "Brewing", "label": "order / take_order"})
    );
    assert_eq!(
        barista["shape"]["transitions"][1]["label"],
        "after 1500ms / pour"
    );
    assert_eq!(
        barista["progress"],
        json!({"kind": "machine", "state": "Idle"})
    );
    assert_eq!(barista["snapshot"]["status"], "idle");

    let (_, rover) = get(&format!("{base}/api/agents/1")).await;
    let labels: Vec<_> = rover["shape"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["label"].as_str().unwrap().to_string())
        .collect();
    assert!(labels.contains(&"timeout(5s)".to_string()), "{labels:?}");
    assert_eq!(rover["shape"]["nodes"][0]["depth"], 0);

    // The live stream: an order moves the barista to `Brewing`, and the step says why.
    let stream = reqwest::get(format!("{base}/api/stream")).await.unwrap();
    assert_eq!(
        stream.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let mut stream = Box::pin(stream.bytes_stream());
    let mut buffer = String::new();
    let long_name = "x".repeat(5000);
    cafe.barista
        .cast(Signal::new("cafe.order", json!({ "name": long_name })))
        .unwrap();
    cafe.barista
        .cast(Signal::new("cafe.order", json!({ "name": "tea" })))
        .unwrap();
    let refused = next_step(&mut stream, &mut buffer, |e| e["agent"] == 0).await;
    assert_eq!(refused["cause"]["signal"]["type"], "cafe.order");
    let shown = refused["cause"]["signal"]["data"]["name"].as_str().unwrap();
    assert!(shown.ends_with("… (+4700 chars)"), "{shown}");
    assert!(
        refused["errors"][0]
            .as_str()
            .unwrap()
            .contains("we do not serve"),
        "{refused}"
    );
    let brewing = next_step(&mut stream, &mut buffer, |e| {
        e["agent"] == 0 && e["progress"]["state"] == "Brewing"
    })
    .await;
    assert_eq!(brewing["cause"]["signal"]["data"]["name"], "tea");
    assert_eq!(brewing["status"], "waiting");
    let poured = next_step(&mut stream, &mut buffer, |e| {
        e["agent"] == 0 && e["progress"]["state"] == "Ready"
    })
    .await;
    assert_eq!(poured["cause"]["origin"], "timer");
    assert_eq!(poured["emitted"][0]["type"], "cafe.ready");

    // The tree ticks on its own: running nodes by index into the shape.
    let tick = next_step(&mut stream, &mut buffer, |e| {
        e["agent"] == 1 && e["cause"]["kind"] == "tick"
    })
    .await;
    let running = tick["progress"]["running"].as_array().unwrap();
    assert!(!running.is_empty() && running[0] == 0, "{tick}");
    // Each node's last status, by the same index: once the battery runs low its check fails,
    // while the moves before it succeeded.
    let with_status = |step: &Value, wanted: &str| -> Vec<String> {
        step["progress"]["last"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, node)| node["status"] == wanted)
            .map(|(index, _)| labels[index].clone())
            .collect()
    };
    let has_failed = |step: &Value| step["progress"]["last"].to_string().contains("\"failure\"");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let low = loop {
        let (_, events) = get(&format!("{base}/api/agents/1/events")).await;
        if let Some(step) = events["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| has_failed(e))
        {
            break step.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no node failed: {events}"
        );
        // The check fails once a round, when the battery runs low; start another round when
        // the patrol is over.
        if cafe.rover.snapshot().await.unwrap().done() {
            cafe.rover
                .cast(Signal::new(stratagem::strategy::RESTART_SIGNAL, json!({})))
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        with_status(&low, "failure"),
        ["condition battery_ok"],
        "{low}"
    );
    let succeeded = with_status(&low, "success");
    assert!(
        succeeded
            .iter()
            .any(|label| label.starts_with("action move_to")),
        "{succeeded:?}"
    );
    let ticks = low["progress"]["ticks"].as_u64().unwrap();
    assert!(
        low["progress"]["last"]
            .as_array()
            .unwrap()
            .iter()
            .all(|node| node.is_null() || node["tick"].as_u64().unwrap() <= ticks),
        "{low}"
    );

    // The helpdesk's conversation grows step by step.
    cafe.helpdesk
        .cast(Signal::new(
            "ai.query",
            json!({ "query": agents::QUESTION, "request_id": "r1" }),
        ))
        .unwrap();
    let answered = next_step(&mut stream, &mut buffer, |e| {
        e["agent"] == 2 && e["status"] == "success"
    })
    .await;
    let roles: Vec<_> = answered["progress"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );

    // Recent steps are kept for a page that opens late.
    let (_, events) = get(&format!("{base}/api/agents/0/events")).await;
    let kinds: Vec<_> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["progress"]["state"].as_str())
        .collect();
    assert!(
        kinds.contains(&"Brewing") && kinds.contains(&"Ready"),
        "{kinds:?}"
    );

    // Read-only by default; unknown agents and foreign hosts are refused.
    let client = reqwest::Client::new();
    let sent = client
        .post(format!("{base}/api/agents/0/signals"))
        .json_body(&json!({"type": "cafe.collect"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status().as_u16(), 403);
    assert!(sent.text().await.unwrap().contains("read-only"));
    let (status, missing) = get(&format!("{base}/api/agents/7")).await;
    assert_eq!(status, 404);
    assert!(missing["error"].as_str().unwrap().contains("watches 3"));
    let foreign = client
        .get(format!("{base}/api/agents"))
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);

    inspector.shutdown().await;
    assert!(reqwest::get(format!("{base}/api/agents")).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_the_api_and_signals_are_opt_in() {
    let cafe = agents::Cafe::open(Duration::from_millis(20)).await.unwrap();
    let inspector = Inspector::new()
        .agent(&cafe.barista)
        .token("open sesame")
        .allow_signals(true)
        .serve("127.0.0.1:0")
        .await
        .unwrap();
    let base = base(&inspector);
    assert_eq!(inspector.url(), format!("{base}/?token=open%20sesame"));
    // The page itself carries no data; the API needs the token.
    assert_eq!(get(&format!("{base}/")).await.0, 200);
    let (status, refused) = get(&format!("{base}/api/agents")).await;
    assert_eq!(status, 401);
    assert!(refused["error"].as_str().unwrap().contains("token"));
    assert_eq!(get(&format!("{base}/api/agents?token=wrong")).await.0, 401);
    assert_eq!(
        get(&format!("{base}/api/agents?token=open%20sesame"))
            .await
            .0,
        200
    );

    let client = reqwest::Client::new();
    let sent = client
        .post(format!("{base}/api/agents/0/signals"))
        .bearer_auth("open sesame")
        .json_body(&json!({"type": "cafe.order", "data": {"name": "espresso"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status().as_u16(), 200);
    let outcome: Value = serde_json::from_str(&sent.text().await.unwrap()).unwrap();
    assert_eq!(outcome["snapshot"]["details"]["state"], "Brewing");
    assert_eq!(
        cafe.barista.state().await.unwrap().drink.as_deref(),
        Some("espresso")
    );
}

/// `reqwest` is built without its `json` feature here: a JSON body by hand.
trait JsonBody {
    fn json_body(self, body: &Value) -> Self;
}

impl JsonBody for reqwest::RequestBuilder {
    fn json_body(self, body: &Value) -> Self {
        self.header("content-type", "application/json")
            .body(body.to_string())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_pace_the_page_is_shown_the_latest_step_and_how_many_it_stands_for() {
    let cafe = agents::Cafe::open(Duration::from_millis(20)).await.unwrap();
    let inspector = Inspector::new()
        .agent(&cafe.barista)
        .steps_per_second(1)
        .serve("127.0.0.1:0")
        .await
        .unwrap();
    let base = base(&inspector);
    let response = reqwest::get(format!("{base}/api/stream")).await.unwrap();
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    // Thirty refused collects, then an order: far more steps than one a second.
    for _ in 0..30 {
        cafe.barista
            .cast(Signal::new("cafe.collect", json!({})))
            .unwrap();
    }
    cafe.barista
        .cast(Signal::new("cafe.order", json!({"name": "espresso"})))
        .unwrap();
    let brewing = next_step(&mut stream, &mut buffer, |e| {
        e["progress"]["state"] == "Brewing"
    })
    .await;
    assert!(
        brewing["skipped"].as_u64().unwrap() > 0,
        "the order stands for collects that were not shown: {brewing}"
    );
    // Every step is accounted for: shown, or counted by the next step shown.
    let (_, events) = get(&format!("{base}/api/agents/0/events")).await;
    let events = events["events"].as_array().unwrap();
    let upto = 1 + events
        .iter()
        .position(|e| e["progress"]["state"] == "Brewing")
        .unwrap();
    let shown = &events[..upto];
    let accounted: u64 = shown
        .iter()
        .map(|e| 1 + e["skipped"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(accounted, 31, "{shown:?}");
    assert!(shown.len() < 31, "{shown:?}");
    inspector.shutdown().await;
}
