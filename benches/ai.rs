//! AI strategies: the cost of a ReAct step, and many agents against a slow model.
//!
//! - (a) `ai/react_step`: one 3-step ReAct request (two tool rounds, then the answer) on the
//!   scripted model, reported per step. `stratagem` is `agent.ask` through `AiRunner`: the
//!   machine, the hooks, tool checks against the schema, sync tool dispatch on a draft, the
//!   signals it emits and the reply round trip through `cmd`. `machine_only` feeds the same
//!   replies straight into `cmd` (no runner, no model). `hand_written` is the loop a programmer
//!   would write with no framework: call the same scripted model, run the tool function,
//!   push messages. No I/O anywhere.
//! - (b) printed, not timed by criterion: 1,000 agents each run a 3-step ReAct request at once
//!   against a loopback OpenAI-compatible HTTP server that answers every call after 50 ms.
//!   The ideal wall time is 3 x 50 ms. The baseline is 1,000 tasks making the same three
//!   HTTP calls in a row with the same client and no agents: the same two tools offered in
//!   each request, the same tool functions run on each tool call. Memory per running agent is the
//!   RSS growth while every agent waits for its first answer, over the RSS before they
//!   started.
//!
//! `cargo bench -p stratagem-benches --bench ai`; results and ratios are in BENCHMARKS.md.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use serde_json::Value;
use stratagem::ai::{
    AiAgent, AiRunner, ChatMessage, LanguageModel, LlmReply, LlmRequest, ModelTable,
    OpenAiCompatible, QUERY, ScriptedModel, ToolCall, ToolChoice,
};
use stratagem::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Answers questions about orders.
#[agent(strategy = React, model = "fast", tools = [lookup_order, open_ticket], max_iterations = 5)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Desk {
    tickets: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Lookup {
    id: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NewTicket {
    subject: String,
}

/// Looks an order up.
#[action]
fn lookup_order(_desk: &Desk, params: Lookup) -> Outcome {
    Outcome::new().reply(json!({"id": params.id, "status": "late"}))
}

/// Opens a ticket.
#[action]
fn open_ticket(desk: &mut Desk, params: NewTicket) -> Outcome {
    desk.tickets.push(params.subject);
    Outcome::new().reply(json!({"ticket": desk.tickets.len()}))
}

const SCRIPT: &str = r#"
call lookup_order {"id": 42}
call open_ticket {"subject": "order 42 is late"}
answer "Order 42 is late; ticket 1 is open."
"#;

fn script() -> ScriptedModel {
    ScriptedModel::parse(SCRIPT).unwrap().looping()
}

/// The framework-free loop: the same model, the same tools as plain functions.
async fn hand_written(model: &ScriptedModel, tickets: &mut Vec<String>) -> String {
    let mut messages = vec![ChatMessage::user("Where is order 42?")];
    for _ in 0..5 {
        let request = LlmRequest::new("m", messages.clone());
        let response = model.generate(request).await.unwrap();
        if response.tool_calls.is_empty() {
            return response.text;
        }
        messages.push(ChatMessage::assistant(
            response.text.clone(),
            response.tool_calls.clone(),
        ));
        for call in &response.tool_calls {
            let result = run_tool(call, tickets);
            messages.push(ChatMessage::tool(call.id.clone(), result.to_string()));
        }
    }
    String::new()
}

/// The two tools as a programmer would write them without the framework.
fn run_tool(call: &ToolCall, tickets: &mut Vec<String>) -> Value {
    match call.name.as_str() {
        "lookup_order" => {
            let id = call.arguments["id"].as_u64().unwrap_or(0);
            json!({"id": id, "status": "late"})
        }
        _ => {
            let subject = call.arguments["subject"].as_str().unwrap_or("").to_string();
            tickets.push(subject);
            json!({"ticket": tickets.len()})
        }
    }
}

fn step_benches(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("ai/react_step");
    group.throughput(Throughput::Elements(3));
    let runner = AiRunner::new(ModelTable::new().alias("fast", Arc::new(script()), "scripted"));
    group.bench_function("stratagem", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut desk = Desk::new();
                let answer = desk.ask(&runner, "Where is order 42?").await.unwrap();
                black_box(answer.result.steps)
            })
        })
    });
    // The replies the model would give, prepared once: only the machine runs.
    let model = script();
    let replies: Vec<stratagem::ai::LlmResponse> = rt.block_on(async {
        let mut out = Vec::new();
        for _ in 0..3 {
            out.push(model.generate(LlmRequest::new("m", vec![])).await.unwrap());
        }
        out
    });
    group.bench_function("machine_only", |b| {
        b.iter(|| {
            let mut desk = Desk::new();
            let query =
                Instruction::new(QUERY, json!({"query": "Where is order 42?"})).with_id("r");
            black_box(desk.cmd(query));
            for (n, response) in replies.iter().enumerate() {
                let reply = LlmReply::new(format!("r/llm/{}", n + 1), Ok(response.clone()));
                black_box(desk.cmd(reply.into_instruction()));
            }
            black_box(desk.snapshot().status)
        })
    });
    let model = script();
    group.bench_function("hand_written", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut tickets = Vec::new();
                black_box(hand_written(&model, &mut tickets).await)
            })
        })
    });
    group.finish();
}

// ---------------------------------------------------------------- (b) a slow loopback model

/// An OpenAI-compatible endpoint that answers every call after `delay`: a tool call while the
/// conversation has fewer than two tool results, then an answer.
async fn slow_model(delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(serve(socket, delay));
        }
    });
    url
}

async fn serve(mut socket: TcpStream, delay: Duration) {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 8192];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Value =
            serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or_default();
        buf.drain(..head_end + length);
        let tools = body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        let message = match tools {
            0 => {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"id\": 42}"}}]})
            }
            1 => {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "open_ticket", "arguments": "{\"subject\": \"late\"}"}}]})
            }
            _ => json!({"role": "assistant", "content": "Order 42 is late; ticket 1 is open."}),
        };
        let finish = if tools < 2 { "tool_calls" } else { "stop" };
        let reply = json!({
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        })
        .to_string();
        tokio::time::sleep(delay).await;
        let out = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
            reply.len()
        );
        if socket.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn many_agents(agents: usize) {
    let delay = Duration::from_millis(50);
    // The model server has its own thread, as a real one would have its own machine.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            tx.send(slow_model(delay).await).unwrap();
            std::future::pending::<()>().await;
        });
    });
    let url = rx.recv().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let provider = OpenAiCompatible::new(&url).timeout(Duration::from_secs(30));
    let ideal = delay * 3;
    rt.block_on(async {
        // The first run opens the client's connections (one per agent in flight) and warms the
        // allocator; its agents stay alive so the second run's memory is its own.
        let (cold_wall, cold_memory, first) = run_agents(&provider, agents, "cold").await;
        let (wall, memory, second) = run_agents(&provider, agents, "warm").await;
        let baseline = run_raw(&provider, agents).await;
        println!(
            "ai/many_agents: {agents} agents x 3-step ReAct, model answers after {delay:?}: wall {:.1} ms = {:.2}x the ideal {} ms (first run, opening connections: {:.1} ms = {:.2}x); hand-written HTTP loop {:.1} ms = {:.2}x; memory per running agent {:.0} B ({:.0} B in the first run, with its new connection)",
            wall.as_secs_f64() * 1e3,
            wall.as_secs_f64() / ideal.as_secs_f64(),
            ideal.as_millis(),
            cold_wall.as_secs_f64() * 1e3,
            cold_wall.as_secs_f64() / ideal.as_secs_f64(),
            baseline.as_secs_f64() * 1e3,
            baseline.as_secs_f64() / ideal.as_secs_f64(),
            memory,
            cold_memory,
        );
        for server in first.iter().chain(&second) {
            server.stop().await;
        }
    });
}

/// Starts `n` agents, asks each one question, waits for every answer; returns the wall time,
/// the RSS growth per agent while all of them wait for their first answer, and the agents.
async fn run_agents(
    provider: &OpenAiCompatible,
    n: usize,
    tag: &str,
) -> (Duration, f64, Vec<AgentServer<Desk>>) {
    let models = ModelTable::new().alias("fast", Arc::new(provider.clone()), "bench-model");
    let options = Options::default().models(models);
    let before = rss_kib();
    let mut servers = Vec::with_capacity(n);
    for i in 0..n {
        let desk = Desk::new().with_id(format!("{tag}-{i}"));
        servers.push(AgentServer::start(desk, options.clone()).await.unwrap());
    }
    let start = Instant::now();
    for server in &servers {
        server
            .cast(Signal::new(QUERY, json!({"query": "Where is order 42?"})))
            .unwrap();
    }
    // Every agent is now waiting for its first answer.
    tokio::time::sleep(Duration::from_millis(25)).await;
    let running = rss_kib().saturating_sub(before) * 1024;
    for server in &servers {
        let done = server
            .await_completion(Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(done.status, Status::Success, "{done:?}");
    }
    let wall = start.elapsed();
    (wall, running as f64 / n as f64, servers)
}

/// The same traffic without agents: three calls in a row per task, each offering the same
/// two tools (a model can only call tools it is shown), the tools run as plain functions.
async fn run_raw(provider: &OpenAiCompatible, n: usize) -> Duration {
    let tools = <Desk as AiAgent>::tool_specs();
    let start = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let provider = provider.clone();
            let tools = tools.clone();
            tokio::spawn(async move {
                let mut tickets = Vec::new();
                let mut messages = vec![ChatMessage::user("Where is order 42?")];
                for _ in 0..3 {
                    let mut request = LlmRequest::new("bench-model", messages.clone());
                    request.tools = tools.clone();
                    request.tool_choice = ToolChoice::Auto;
                    let response = provider.generate(request).await.unwrap();
                    messages.push(ChatMessage::assistant(
                        response.text.clone(),
                        response.tool_calls.clone(),
                    ));
                    for call in &response.tool_calls {
                        let result = run_tool(call, &mut tickets);
                        messages.push(ChatMessage::tool(call.id.clone(), result.to_string()));
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    start.elapsed()
}

/// `STRATAGEM_PROFILE=ai/server_request:<n>` (or `ai/server_start_stop:<n>`): `n` fresh agent
/// servers on the scripted model, each asked one 3-step question (or only started and
/// stopped), on one `current_thread` runtime, then exit. Under callgrind, the difference of the
/// two over `n` is the instructions of one request through the server, free of HTTP and load.
fn profile(request: &str) {
    let (id, passes) = request.rsplit_once(':').unwrap_or((request, "1"));
    let ask = match id {
        "ai/server_request" => true,
        "ai/server_start_stop" => false,
        _ => return,
    };
    let passes: u64 = passes.parse().expect("a number of passes");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let models = ModelTable::new().alias("fast", Arc::new(script()), "scripted");
        let options = Options::default().models(models);
        for i in 0..passes {
            let desk = Desk::new().with_id(format!("profile-{i}"));
            let server = AgentServer::start(desk, options.clone()).await.unwrap();
            if ask {
                let query = Signal::with_id("q", QUERY, json!({"query": "Where is order 42?"}));
                server.cast(query).unwrap();
                let done = server
                    .await_completion(Duration::from_secs(60))
                    .await
                    .unwrap();
                assert_eq!(done.status, Status::Success, "{done:?}");
            }
            black_box(server.stop().await);
        }
    });
    std::process::exit(0);
}

fn main() {
    if let Ok(request) = std::env::var("STRATAGEM_PROFILE") {
        profile(&request);
    }
    let benchmarking = std::env::args().any(|a| a == "--bench");
    // `cargo test --all-targets` runs this binary as a smoke test: fewer agents there.
    many_agents(if benchmarking { 1_000 } else { 50 });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
        .configure_from_args();
    step_benches(&mut c, &rt);
    c.final_summary();
}
