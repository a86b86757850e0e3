//! The search strategies written with `#[agent(strategy = TreeOfThoughts | GraphOfThoughts |
//! AlgorithmOfThoughts | Trm | Adaptive, ...)]`: their options reach the runtime, they run in
//! process and under the server, and a Tree-of-Thoughts frontier's calls reach a real
//! (loopback) OpenAI-compatible endpoint at the same time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use stratagem::ai::{
    Aggregation, AiAgent, AiRunner, ModelTable, OpenAiCompatible, ScriptedModel, StrategyKind,
    Termination, Traversal,
};
use stratagem::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Plans by searching a tree of thoughts.
#[agent(
    strategy = TreeOfThoughts,
    branching_factor = 3,
    max_depth = 2,
    beam_width = 1,
    traversal_strategy = bfs,
    evaluation_prompt = "Score the step from 0 to 10 as `Score: N`.",
    max_llm_calls = 40
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Planner;

/// Weaves ideas together.
#[agent(
    strategy = GraphOfThoughts,
    branching_factor = 3,
    max_depth = 2,
    max_nodes = 10,
    aggregation_strategy = synthesis
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Weaver;

/// Searches in one answer.
#[agent(strategy = AlgorithmOfThoughts, model = "capable")]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Solver;

/// Polishes its answer.
#[agent(strategy = Trm, act_threshold = 0.8, max_supervision_steps = 2, token_budget = 10000)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Polisher;

/// Lets the question decide.
#[agent(
    strategy = Adaptive,
    available_strategies = [cod, cot, TreeOfThoughts],
    complexity_thresholds = (0.3, 0.6),
    default_strategy = cot,
    branching_factor = 2,
    max_depth = 1,
    beam_width = 1
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Chooser;

/// A frontier of three for the concurrency test.
#[agent(strategy = TreeOfThoughts, branching_factor = 3, max_depth = 1)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Wide;

#[test]
fn the_options_reach_the_runtime() {
    let tot = Planner::AI.reasoning;
    assert_eq!(
        (tot.branching_factor, tot.max_depth, tot.beam_width),
        (3, 2, 1)
    );
    assert_eq!(tot.traversal, Traversal::Bfs);
    assert_eq!(tot.max_llm_calls, 40);
    assert!(tot.evaluation_prompt.unwrap().contains("Score: N"));
    let got = Weaver::AI.reasoning;
    assert_eq!(
        (got.max_nodes, got.aggregation),
        (10, Aggregation::Synthesis)
    );
    assert_eq!(Solver::AI.model, "capable");
    let trm = Polisher::AI.reasoning;
    assert_eq!(
        (
            trm.act_threshold,
            trm.max_supervision_steps,
            trm.token_budget
        ),
        (0.8, 2, Some(10000))
    );
    let adaptive = Chooser::AI.reasoning;
    assert_eq!(
        adaptive.available_strategies,
        [StrategyKind::Cod, StrategyKind::Cot, StrategyKind::Tot]
    );
    assert_eq!(adaptive.complexity_thresholds, (0.3, 0.6));
    assert_eq!(adaptive.default_strategy, StrategyKind::Cot);
}

fn tree_script() -> ScriptedModel {
    let mut model = ScriptedModel::new();
    for (i, (thought, score)) in [("A", 3), ("B", 9), ("C", 5)].into_iter().enumerate() {
        model = model
            .when(
                format!("No steps yet.\nPropose candidate {} of 3", i + 1),
                thought,
            )
            .when(
                format!("Proposed step 1: {thought}\n"),
                format!("Score: {score}"),
            );
    }
    for (i, (thought, score)) in [("B then X", 4), ("B then Y", 8), ("B then Z", 6)]
        .into_iter()
        .enumerate()
    {
        model = model
            .when(format!("1. B\nPropose candidate {} of 3", i + 1), thought)
            .when(
                format!("Proposed step 2: {thought}\n"),
                format!("Score: {score}"),
            );
    }
    model
}

fn scripted(model: &ScriptedModel) -> ModelTable {
    ModelTable::standard(Arc::new(model.clone()), "m", "m")
}

#[tokio::test]
async fn tree_of_thoughts_in_process() {
    let model = tree_script();
    let answer = Planner::new()
        .ask(&AiRunner::new(scripted(&model)), "Q?")
        .await
        .unwrap();
    assert_eq!(answer.answer(), Some("B then Y"));
    assert_eq!(answer.result.reasoning, ["B", "B then Y"]);
    // The agent's own evaluation prompt was used.
    let eval = model
        .requests()
        .into_iter()
        .find(|r| r.last_user_message().unwrap().contains("Proposed step"))
        .unwrap();
    assert!(eval.messages[0].content.contains("Score the step"));
}

async fn run_on_server<S>(
    agent: Agent<S>,
    model: &ScriptedModel,
    signal: &str,
    query: &str,
) -> Snapshot
where
    S: AgentSpec,
{
    let options = Options::default().models(scripted(model));
    let server = AgentServer::start(agent, options).await.unwrap();
    server
        .call(Signal::new(signal, json!({"query": query})))
        .await
        .unwrap();
    let done = server
        .await_completion(Duration::from_secs(10))
        .await
        .unwrap();
    server.stop().await;
    done
}

#[tokio::test]
async fn tree_and_graph_under_the_server() {
    let done = run_on_server(Planner::new(), &tree_script(), "reasoning.tot.run", "Q?").await;
    assert_eq!(done.status, Status::Success);
    let result = done.result.unwrap();
    assert_eq!(result["answer"], "B then Y");
    assert_eq!(result["trace"]["kind"], "tree");
    assert_eq!(result["trace"]["nodes"].as_array().unwrap().len(), 7);

    let graph = ScriptedModel::new()
        .when("Propose thought 1 of 3", "solar\nScore: 6")
        .when("Propose thought 2 of 3", "wind\nScore: 7")
        .when("Propose thought 3 of 3", "coal\nScore: 1")
        .when("Which thoughts belong together?", "Group: 1, 2, 3")
        .when("Thoughts to merge:", "all of them, renewables first");
    let done = run_on_server(Weaver::new(), &graph, "reasoning.got.run", "Energy?").await;
    let result = done.result.unwrap();
    assert_eq!(result["answer"], "all of them, renewables first");
    assert_eq!(result["trace"]["kind"], "graph");
    assert_eq!(result["llm_calls"], 5);
}

#[tokio::test]
async fn trm_aot_and_adaptive_under_the_server() {
    let model = ScriptedModel::new()
        .answer("Answer: 40\nConfidence: 0.5")
        .answer("Critique: wrong\nAnswer: 42\nConfidence: 0.85");
    let done = run_on_server(Polisher::new(), &model, "ai.query", "6 * 7?").await;
    let result = done.result.unwrap();
    assert_eq!(result["answer"], "42");
    assert_eq!(result["trace"]["drafts"].as_array().unwrap().len(), 2);

    let model = ScriptedModel::new().answer("Try: 2 + 2 = 4\nAnswer: 4");
    let done = run_on_server(Solver::new(), &model, "reasoning.aot.run", "2 + 2?").await;
    assert_eq!(done.result.unwrap()["answer"], "4");

    let model = ScriptedModel::new().answer("Paris\n#### Paris");
    let done = run_on_server(
        Chooser::new(),
        &model,
        "reasoning.adaptive.run",
        "What is the capital of France?",
    )
    .await;
    let result = done.result.unwrap();
    assert_eq!(result["strategy"], "cod");
    assert_eq!(result["adaptive"]["class"], "simple");
}

// ------------------------------------------------------------ concurrency on a real endpoint

/// A loopback OpenAI-compatible endpoint that holds each answer until `gate` requests are in
/// flight at once (or two seconds passed), and records the most it ever saw at once.
struct Endpoint {
    base_url: String,
    most_at_once: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

async fn serve_endpoint(gate: usize) -> Endpoint {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most_at_once = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(AtomicUsize::new(0));
    let (most, count) = (most_at_once.clone(), requests.clone());
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (in_flight, most, count) = (in_flight.clone(), most.clone(), count.clone());
            tokio::spawn(answer(socket, gate, in_flight, most, count));
        }
    });
    Endpoint {
        base_url,
        most_at_once,
        requests,
    }
}

async fn answer(
    mut socket: TcpStream,
    gate: usize,
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    count: Arc<AtomicUsize>,
) {
    let mut buf = Vec::new();
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
            let mut chunk = [0u8; 4096];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: serde_json::Value =
            serde_json::from_slice(&buf[head_end..head_end + length]).unwrap();
        buf.drain(..head_end + length);
        count.fetch_add(1, Ordering::SeqCst);
        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        // Hold the answer until the whole frontier is here (bounded, so a sequential host
        // fails the assertion below instead of hanging).
        for _ in 0..200 {
            if in_flight.load(Ordering::SeqCst) >= gate || most.load(Ordering::SeqCst) >= gate {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let prompt = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string();
        let text = if prompt.contains("Proposed step") {
            "Score: 7".to_string()
        } else {
            format!("idea {}", prompt.len())
        };
        let reply = json!({
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        })
        .to_string();
        in_flight.fetch_sub(1, Ordering::SeqCst);
        let out = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
            reply.len()
        );
        if socket.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn a_frontier_runs_at_once_against_an_openai_compatible_endpoint() {
    let endpoint = serve_endpoint(3).await;
    let provider = Arc::new(OpenAiCompatible::new(&endpoint.base_url));
    let models = ModelTable::new().alias("fast", provider, "test-model");

    // In process.
    let answer = Wide::new()
        .ask(&AiRunner::new(models.clone()), "Plan a trip")
        .await
        .unwrap();
    assert_eq!(answer.result.reason, Termination::FinalAnswer);
    assert_eq!(answer.result.llm_calls, 6);
    assert_eq!(endpoint.requests.load(Ordering::SeqCst), 6);
    assert_eq!(
        endpoint.most_at_once.load(Ordering::SeqCst),
        3,
        "the three generations of the frontier were in flight together"
    );

    // Under the server.
    let endpoint = serve_endpoint(3).await;
    let provider = Arc::new(OpenAiCompatible::new(&endpoint.base_url));
    let options =
        Options::default().models(ModelTable::new().alias("fast", provider, "test-model"));
    let server = AgentServer::start(Wide::new(), options).await.unwrap();
    server
        .call(Signal::new(
            "reasoning.tot.run",
            json!({"query": "Plan a trip"}),
        ))
        .await
        .unwrap();
    let done = server
        .await_completion(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success);
    assert_eq!(endpoint.most_at_once.load(Ordering::SeqCst), 3);
    server.stop().await;
}
