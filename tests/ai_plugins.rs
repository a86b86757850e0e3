//! The Chat, Planning, Reasoning and Retrieval (with embeddings) plugins' signal contracts,
//! through the public API: on the scripted model in process, in the server, and against a
//! loopback OpenAI-compatible endpoint.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use stratagem::ai::plugins::{
    CHAT_EMBEDDED, CHAT_OBJECT, CHAT_RESPONSE, CHAT_TOOL_RESULT, CHAT_TOOLS, Chat, ChatError,
    ChatState, Decomposition, PLANNED, Plan, Planning, Prioritization, Quota, Reasoning, Retrieval,
};
use stratagem::ai::{
    AiRunner, EMBEDDING_DIMENSIONS, EmbeddingRequest, Embeddings, LanguageModel, LlmError,
    LlmErrorKind, ModelTable, OpenAiCompatible, REQUEST_ERROR, ScriptedModel,
};
use stratagem::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers questions about orders.
#[agent(
    actions [lookup_order, track_parcel, secret],
    plugins = [
        Chat { default_model = "fast", system_prompt = "Be brief.", max_turns = 2, deny_tools = ["secret"] },
        Planning { default_model = "fast", max_steps = 3 },
        Reasoning { default_model = "fast", timeout_ms = 60000, temperature = 0, max_depth = 1, deny_tools = ["secret"] },
        Retrieval { embedding_model = "embedding", top_k = 2, enrich = false }
    ]
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Desk {
    lookups: u32,
    tracked: u32,
}

/// Which order.
#[derive(Debug, Deserialize, JsonSchema)]
struct Order {
    id: u32,
}

/// Looks up an order.
#[action]
fn lookup_order(desk: &mut Desk, order: Order) -> Outcome {
    desk.lookups += 1;
    Outcome::new().reply(json!({"id": order.id, "status": "shipped"}))
}

/// Which parcel.
#[derive(Debug, Deserialize, JsonSchema)]
struct Parcel {
    code: String,
}

/// Asks the carrier where a parcel is (an async action: the host runs it).
#[action]
async fn track_parcel(desk: &Desk, parcel: Parcel) -> Outcome {
    tokio::time::sleep(Duration::from_millis(2)).await;
    Outcome::new()
        .set(json!({"tracked": desk.tracked + 1}))
        .reply(json!({"code": parcel.code, "at": "depot"}))
}

/// Never offered to the model.
#[action]
fn secret(_desk: &mut Desk) -> Outcome {
    Outcome::new()
}

/// A pet, asked of the model as a typed object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Pet {
    name: String,
    legs: u8,
}

fn runner(script: &ScriptedModel) -> AiRunner {
    AiRunner::new(models(Arc::new(script.clone())))
}

fn models(model: Arc<dyn LanguageModel>) -> ModelTable {
    ModelTable::new()
        .alias("fast", model.clone(), "m")
        .alias("embedding", model, "e")
}

fn emitted<'a>(directives: &'a [Directive], signal_type: &str) -> Option<&'a Signal> {
    directives.iter().find_map(|d| match d {
        Directive::Emit(s) if s.signal_type == signal_type => Some(s),
        _ => None,
    })
}

async fn ask(runner: &AiRunner, desk: &mut Agent<Desk>, signal: Signal) -> Vec<Directive> {
    let out = desk.handle_signal(&signal);
    runner.settle(desk, out).await
}

#[tokio::test]
async fn chat_message_runs_tool_calls_and_answers() {
    let script = ScriptedModel::new()
        .user("Where is order 42?")
        .call("lookup_order", json!({"id": 42}))
        .answer("Order 42 shipped.");
    let mut desk = Desk::new();
    let out = ask(
        &runner(&script),
        &mut desk,
        Signal::new(
            "chat.message",
            json!({"prompt": "Where is order 42?", "request_id": "r1"}),
        ),
    )
    .await;
    let answer = emitted(&out, CHAT_RESPONSE).expect("an answer");
    assert_eq!(answer.data["request_id"], "r1");
    assert_eq!(answer.data["text"], "Order 42 shipped.");
    assert_eq!(answer.data["turns"], 2);
    assert_eq!(answer.data["tool_calls"][0]["name"], "lookup_order");
    assert_eq!(
        answer.data["tool_calls"][0]["result"]["status"], "shipped",
        "{answer:?}"
    );
    assert_eq!(desk.state().lookups, 1, "the tool ran on the agent's state");
    assert!(emitted(&out, "ai.usage").is_some(), "tokens are reported");
    let requests = script.requests();
    assert_eq!(requests[0].messages[0].content, "Be brief.");
    let offered: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        offered,
        ["lookup_order", "track_parcel"],
        "async actions are offered, denied ones are not"
    );
    assert_eq!(requests[0].max_tokens, Some(1024));
    assert_eq!(
        requests[1].messages.last().unwrap().role,
        stratagem::ai::Role::Tool
    );
    script.assert_finished();
    assert!(desk.plugin_state::<Chat>().unwrap().pending.is_empty());
}

#[tokio::test]
async fn chat_message_stops_after_max_turns() {
    // Turns with a sync tool and turns with an async one count alike.
    for (tool, arguments) in [
        ("lookup_order", json!({"id": 1})),
        ("track_parcel", json!({"code": "A"})),
    ] {
        let script = ScriptedModel::new()
            .call(tool, arguments.clone())
            .call(tool, arguments);
        let mut desk = Desk::new();
        let out = ask(
            &runner(&script),
            &mut desk,
            Signal::new(
                "chat.message",
                json!({"prompt": "Loop?", "request_id": "r2"}),
            ),
        )
        .await;
        let error = ChatError::from_signal(emitted(&out, REQUEST_ERROR).unwrap()).unwrap();
        assert_eq!(
            error,
            ChatError::MaxTurns {
                request_id: "r2".into(),
                turns: 2
            },
            "{tool}"
        );
        let state = desk.state();
        assert_eq!(
            state.lookups + state.tracked,
            1,
            "the first turn's call ran"
        );
    }
}

#[tokio::test]
async fn simple_and_complete_differ_in_system_prompt_and_tools() {
    let script = ScriptedModel::new().answer("Hi.").answer("Done.");
    let runner = runner(&script);
    let mut desk = Desk::new();
    let out = ask(
        &runner,
        &mut desk,
        Signal::new(
            "chat.simple",
            json!({"prompt": "Hello", "temperature": 0.1}),
        ),
    )
    .await;
    assert_eq!(emitted(&out, CHAT_RESPONSE).unwrap().data["text"], "Hi.");
    let out = ask(
        &runner,
        &mut desk,
        Signal::new(
            "chat.complete",
            json!({"messages": [
                {"role": "system", "content": "Finish the list."},
                {"role": "user", "content": "a, b,"}
            ]}),
        ),
    )
    .await;
    assert_eq!(emitted(&out, CHAT_RESPONSE).unwrap().data["text"], "Done.");
    let requests = script.requests();
    assert_eq!(requests[0].messages.len(), 2, "system prompt and prompt");
    assert_eq!(requests[0].temperature, Some(0.1));
    assert!(requests[0].tools.is_empty());
    assert_eq!(requests[1].messages[0].content, "Finish the list.");
    assert_eq!(requests[1].messages.len(), 2, "the conversation as given");
}

#[tokio::test]
async fn a_failed_model_call_is_a_typed_error() {
    let script = ScriptedModel::new().fail("the model is down");
    let mut desk = Desk::new();
    let out = ask(
        &runner(&script),
        &mut desk,
        Signal::new(
            "chat.simple",
            json!({"prompt": "Hello", "request_id": "r3"}),
        ),
    )
    .await;
    match ChatError::from_signal(emitted(&out, REQUEST_ERROR).unwrap()) {
        Some(ChatError::Model { request_id, error }) => {
            assert_eq!(request_id, "r3");
            assert!(error.message.contains("down"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn generate_object_validates_and_repairs_once() {
    let script = ScriptedModel::new()
        .answer("{\"name\": \"Rex\"}")
        .answer("```json\n{\"name\": \"Rex\", \"legs\": 4}\n```");
    let mut desk = Desk::new();
    let out = ask(
        &runner(&script),
        &mut desk,
        Chat::generate_object::<Pet>("Describe a dog."),
    )
    .await;
    let object = emitted(&out, CHAT_OBJECT).expect("an object");
    assert_eq!(object.data["repaired"], true);
    assert_eq!(
        Chat::object::<Pet>(object).unwrap(),
        Pet {
            name: "Rex".into(),
            legs: 4
        }
    );
    let requests = script.requests();
    let format = requests[0]
        .response_format
        .as_ref()
        .expect("response_format");
    assert_eq!(format.schema["required"], json!(["name", "legs"]));
    let repair = &requests[1].messages.last().unwrap().content;
    assert!(
        repair.contains("legs"),
        "the repair turn says what is wrong: {repair}"
    );
}

#[tokio::test]
async fn generate_object_fails_typed_after_the_repair() {
    let script = ScriptedModel::new().answer("a dog").answer("still prose");
    let mut desk = Desk::new();
    let out = ask(
        &runner(&script),
        &mut desk,
        Chat::generate_object::<Pet>("Describe a dog."),
    )
    .await;
    match ChatError::from_signal(emitted(&out, REQUEST_ERROR).unwrap()) {
        Some(ChatError::InvalidObject {
            problems, answer, ..
        }) => {
            assert_eq!(answer, "still prose");
            assert!(problems[0].contains("not JSON"), "{problems:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn embed_list_tools_and_execute_tool() {
    let script = ScriptedModel::new();
    let runner = runner(&script);
    let mut desk = Desk::new();
    let out = ask(
        &runner,
        &mut desk,
        Signal::new(
            "chat.embed",
            json!({"input": ["red apple", "apple red", "blue sky"]}),
        ),
    )
    .await;
    let vectors: Vec<Vec<f32>> =
        serde_json::from_value(emitted(&out, CHAT_EMBEDDED).unwrap().data["embeddings"].clone())
            .unwrap();
    assert_eq!(vectors.len(), 3);
    assert_eq!(vectors[0].len(), EMBEDDING_DIMENSIONS);
    assert_eq!(vectors[0], vectors[1], "the same words, the same vector");
    assert_ne!(vectors[0], vectors[2]);

    let out = desk.handle_signal(&Signal::new("chat.list_tools", json!({})));
    let tools = &emitted(&out, CHAT_TOOLS).unwrap().data["tools"];
    assert_eq!(tools.as_array().unwrap().len(), 2);
    assert_eq!(tools[0]["name"], "lookup_order");
    assert_eq!(tools[1]["name"], "track_parcel");
    assert_eq!(tools[0]["parameters"]["required"], json!(["id"]), "{tools}");

    let out = desk.handle_signal(&Signal::new(
        "chat.execute_tool",
        json!({"name": "lookup_order", "arguments": {"id": 7}}),
    ));
    let result = &emitted(&out, CHAT_TOOL_RESULT).unwrap().data;
    assert_eq!(result["ok"], true);
    assert_eq!(result["result"]["id"], 7);
    assert_eq!(desk.state().lookups, 1);
    for (arguments, name, why) in [
        (json!({"id": "seven"}), "lookup_order", "invalid arguments"),
        (json!({}), "secret", "not allowed"),
        (json!({}), "nope", "unknown tool"),
    ] {
        let out = desk.handle_signal(&Signal::new(
            "chat.execute_tool",
            json!({"name": name, "arguments": arguments}),
        ));
        let result = &emitted(&out, CHAT_TOOL_RESULT).unwrap().data;
        assert_eq!(result["ok"], false);
        assert!(result["error"].as_str().unwrap().contains(why), "{result}");
    }
    assert_eq!(desk.state().lookups, 1);
}

#[tokio::test]
async fn a_request_in_flight_survives_hibernate_and_thaw() {
    let script = ScriptedModel::new().answer("Later.");
    let mut desk = Desk::new();
    let out = desk.handle_signal(&Signal::new(
        "chat.simple",
        json!({"prompt": "Hello", "request_id": "r4"}),
    ));
    let saved = serde_json::to_value(&desk).unwrap();
    assert!(
        saved["plugins"]["chat"]["pending"]["r4"].is_object(),
        "{saved}"
    );
    let mut thawed: Agent<Desk> = serde_json::from_value(saved).unwrap();
    let state: &ChatState = thawed.plugin_state::<Chat>().unwrap();
    assert_eq!(state.pending["r4"].turns, 1);
    let out = runner(&script).settle(&mut thawed, out).await;
    assert_eq!(emitted(&out, CHAT_RESPONSE).unwrap().data["text"], "Later.");
}

#[tokio::test]
async fn planning_answers_with_typed_structures() {
    let plan = json!({"goal": "ship", "steps": [
        {"id": 1, "title": "build", "description": "compile it", "depends_on": []},
        {"id": 2, "title": "test", "description": "run the tests", "depends_on": [1]}
    ]});
    let decomposition =
        json!({"goal": "ship", "subgoals": [{"title": "code", "tasks": ["write", "review"]}]});
    let ranking = json!({"ranked": [
        {"task": "fix the bug", "priority": 1, "reason": "users see it"},
        {"task": "write docs", "priority": 2, "reason": "can wait"}
    ]});
    let script = ScriptedModel::new()
        .answer(plan.to_string())
        .answer(decomposition.to_string())
        .answer(ranking.to_string());
    let runner = runner(&script);
    let mut desk = Desk::new();
    let out = ask(
        &runner,
        &mut desk,
        Signal::new("planning.plan", json!({"goal": "ship the release"})),
    )
    .await;
    let planned: Plan = Planning::read(emitted(&out, PLANNED).unwrap()).unwrap();
    assert_eq!(planned.steps[1].depends_on, [1]);
    let out = ask(
        &runner,
        &mut desk,
        Signal::new("planning.decompose", json!({"goal": "ship"})),
    )
    .await;
    let parts: Decomposition =
        Planning::read(emitted(&out, "planning.decomposed").unwrap()).unwrap();
    assert_eq!(parts.subgoals[0].tasks, ["write", "review"]);
    let out = ask(
        &runner,
        &mut desk,
        Signal::new(
            "planning.prioritize",
            json!({"tasks": ["write docs", "fix the bug"], "criteria": "user impact"}),
        ),
    )
    .await;
    let ranked: Prioritization =
        Planning::read(emitted(&out, "planning.prioritized").unwrap()).unwrap();
    assert_eq!(ranked.ranked[0].task, "fix the bug");
    let requests = script.requests();
    assert!(
        requests[0]
            .last_user_message()
            .unwrap()
            .contains("at most 3 steps")
    );
    assert!(
        requests[2]
            .last_user_message()
            .unwrap()
            .contains("- fix the bug")
    );
    let bad = desk.handle_signal(&Signal::new("planning.prioritize", json!({"tasks": []})));
    assert!(bad[0].as_error().is_some(), "{bad:?}");
}

#[tokio::test]
async fn in_the_server_chat_answers_reach_subscribers() {
    let script = ScriptedModel::new()
        .call("lookup_order", json!({"id": 5}))
        .answer("Order 5 shipped.");
    let (server, mut events) = serve_desk(&script).await;
    server
        .call(Signal::new(
            "chat.message",
            json!({"prompt": "Order 5?", "request_id": "s1"}),
        ))
        .await
        .unwrap();
    server
        .call(Signal::new(
            "chat.embed",
            json!({"input": "hello", "request_id": "s2"}),
        ))
        .await
        .unwrap();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while seen.len() < 2 {
        let signal = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("both answers arrive")
            .unwrap();
        if signal.signal_type == CHAT_RESPONSE || signal.signal_type == CHAT_EMBEDDED {
            seen.push(signal);
        }
    }
    let answer = seen
        .iter()
        .find(|s| s.signal_type == CHAT_RESPONSE)
        .unwrap();
    assert_eq!(answer.data["text"], "Order 5 shipped.");
    assert_eq!(server.state().await.unwrap().lookups, 1);
    script.assert_finished();
}

/// A loopback OpenAI-compatible endpoint: answers each request by its path, and records
/// (path, body).
async fn endpoint(chat_answers: Vec<String>) -> (String, Arc<Mutex<Vec<(String, Value)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let answers = Arc::new(Mutex::new(chat_answers));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (log, answers) = (log.clone(), answers.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let Some(head_end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        let mut chunk = [0u8; 4096];
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < head_end + 4 + length {
                        let mut chunk = [0u8; 4096];
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let body: Value =
                        serde_json::from_slice(&buf[head_end + 4..head_end + 4 + length]).unwrap();
                    buf.drain(..head_end + 4 + length);
                    let reply = if path.ends_with("/embeddings") {
                        let inputs = body["input"].as_array().unwrap().len();
                        // Out of order, as the index says: the client must sort them.
                        let data: Vec<Value> = (0..inputs)
                            .rev()
                            .map(|i| json!({"index": i, "embedding": [i as f32, 1.0]}))
                            .collect();
                        json!({"data": data, "usage": {"prompt_tokens": 3, "total_tokens": 3}})
                    } else {
                        let text = answers.lock().unwrap().remove(0);
                        json!({"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": 5, "completion_tokens": 5}})
                    };
                    // A server with subscribers streams the answer: the same, as SSE.
                    let (content_type, reply) = if body["stream"] == true {
                        let choice = &reply["choices"][0];
                        let events = [
                            json!({"choices": [{"delta": choice["message"], "finish_reason": null}]}),
                            json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
                            json!({"choices": [], "usage": reply["usage"]}),
                        ];
                        let mut sse: String =
                            events.iter().map(|e| format!("data: {e}\n\n")).collect();
                        sse.push_str("data: [DONE]\n\n");
                        ("text/event-stream", sse)
                    } else {
                        ("application/json", reply.to_string())
                    };
                    log.lock().unwrap().push((path, body));
                    let out = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{reply}",
                        reply.len()
                    );
                    if socket.write_all(out.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (base_url, seen)
}

#[tokio::test]
async fn generate_object_and_embed_against_an_openai_compatible_endpoint() {
    let (base_url, seen) = endpoint(vec![r#"{"name": "Tom", "legs": 4}"#.into()]).await;
    let runner = AiRunner::new(models(Arc::new(OpenAiCompatible::new(&base_url))));
    let mut desk = Desk::new();
    let out = ask(&runner, &mut desk, Chat::generate_object::<Pet>("A cat?")).await;
    let object = emitted(&out, CHAT_OBJECT).unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(Chat::object::<Pet>(object).unwrap().name, "Tom");
    assert_eq!(object.data["repaired"], false);
    let out = ask(
        &runner,
        &mut desk,
        Signal::new("chat.embed", json!({"input": ["a", "b"]})),
    )
    .await;
    let embedded = emitted(&out, CHAT_EMBEDDED).unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(embedded.data["embeddings"], json!([[0.0, 1.0], [1.0, 1.0]]));
    assert_eq!(embedded.data["usage"]["total_tokens"], 3);
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0, "/v1/chat/completions");
    let format = &seen[0].1["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "Pet");
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        json!(["name", "legs"])
    );
    assert_eq!(seen[1].0, "/v1/embeddings");
    assert_eq!(seen[1].1, json!({"model": "e", "input": ["a", "b"]}));
}

#[tokio::test]
async fn reasoning_runs_each_strategy_with_the_plugin_defaults() {
    let script = ScriptedModel::new()
        .answer("Step 1: two and two\nConclusion: 4")
        .answer("2+2\n#### 4");
    let runner = runner(&script);
    let mut desk = Desk::new();
    let out = ask(
        &runner,
        &mut desk,
        Signal::new(
            "reasoning.cot.run",
            json!({"query": "2+2?", "request_id": "c1"}),
        ),
    )
    .await;
    let done = emitted(&out, "ai.request.completed").unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(done.data["request_id"], "c1");
    assert_eq!(done.data["answer"], "4");
    assert!(emitted(&out, "ai.request.started").is_some());
    let out = ask(
        &runner,
        &mut desk,
        Signal::new("reasoning.cod.run", json!("2+2?")),
    )
    .await;
    assert_eq!(
        emitted(&out, "ai.request.completed").unwrap().data["answer"],
        "4"
    );
    let requests = script.requests();
    assert_eq!(requests[0].model, "m", "the plugin's model alias, resolved");
    assert_eq!(requests[0].temperature, Some(0.0));
    assert!(
        requests[0].messages[0].content.contains("Conclusion"),
        "CoT's instructions"
    );
    assert!(
        requests[1].messages[0].content.contains("####"),
        "CoD's instructions"
    );
    assert!(requests[0].tools.is_empty(), "CoT offers no tools");
    assert!(desk.plugin_state::<Reasoning>().unwrap().runs.is_empty());
}

#[tokio::test]
async fn reasoning_searches_take_options_from_the_request() {
    // A tree of thoughts one level deep (the plugin's `max_depth`), two candidates (the
    // request's `branching_factor`).
    let script = ScriptedModel::new().when("", "Score: 7");
    let mut desk = Desk::new();
    let out = ask(
        &runner(&script),
        &mut desk,
        Signal::new(
            "reasoning.tot.run",
            json!({"query": "Propose a plan", "options": {"branching_factor": 2}}),
        ),
    )
    .await;
    let ended = out
        .iter()
        .find_map(|d| match d {
            Directive::Emit(s)
                if s.signal_type == "ai.request.completed"
                    || s.signal_type == "ai.request.failed" =>
            {
                Some(s)
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(ended.signal_type, "ai.request.completed", "{ended:?}");
    assert!(script.requests().len() > 2, "a search: several calls");
    assert!(desk.plugin_state::<Reasoning>().unwrap().runs.is_empty());
}

#[tokio::test]
async fn a_reasoning_run_over_its_timeout_fails_with_reason_timeout() {
    let mut desk = Desk::new();
    let out = desk.handle_signal(&Signal::new(
        "reasoning.react.run",
        json!({"query": "slow?", "request_id": "t1", "timeout_ms": 5}),
    ));
    let timer = out
        .iter()
        .find_map(|d| match d {
            Directive::Schedule { delay, signal } => Some((*delay, signal.clone())),
            _ => None,
        })
        .expect("a deadline");
    assert_eq!(timer.0, Duration::from_millis(5));
    let saved = serde_json::to_value(&desk).unwrap();
    assert!(
        saved["plugins"]["reasoning"]["runs"]["t1"].is_object(),
        "{saved}"
    );
    let out = desk.handle_signal(&timer.1);
    let failed = emitted(&out, "ai.request.failed").unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(failed.data["reason"], "timeout");
    assert!(desk.plugin_state::<Reasoning>().unwrap().runs.is_empty());
}

#[tokio::test]
async fn retrieval_ranks_by_embeddings_when_a_model_is_configured() {
    let script = ScriptedModel::new();
    let runner = runner(&script);
    let mut desk = Desk::new();
    ask(
        &runner,
        &mut desk,
        Signal::new(
            "retrieval.upsert",
            json!({"memories": [
                {"id": "a", "text": "The office opens at nine"},
                {"id": "b", "text": "Parking is behind the building"},
                {"id": "c", "text": "Lunch is served at noon"}
            ]}),
        ),
    )
    .await;
    let memories = &desk.plugin_state::<Retrieval>().unwrap().namespaces["default"].memories;
    assert!(
        memories.iter().all(|m| m.embedding.is_some()),
        "{memories:?}"
    );
    let out = ask(
        &runner,
        &mut desk,
        Signal::new(
            "retrieval.recall",
            json!({"query": "when does the office open", "top_k": 1}),
        ),
    )
    .await;
    let recalled = &emitted(&out, "retrieval.recalled")
        .unwrap_or_else(|| panic!("{out:?}"))
        .data;
    assert_eq!(recalled["ranking"], "embedding");
    assert_eq!(recalled["memories"][0]["id"], "a");
    assert_eq!(recalled["memories"].as_array().unwrap().len(), 1);
    // The embeddings are part of the checkpoint.
    let saved = serde_json::to_value(&desk).unwrap();
    let thawed: Agent<Desk> = serde_json::from_value(saved).unwrap();
    let memories = &thawed.plugin_state::<Retrieval>().unwrap().namespaces["default"].memories;
    assert!(memories[2].embedding.is_some());
}

/// Thinks in chains of thought itself.
#[agent(strategy = ChainOfThought, model = "fast", plugins = [Reasoning { default_model = "fast" }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Thinker;

#[tokio::test]
async fn an_ai_agent_keeps_its_own_strategy_signal() {
    let script = ScriptedModel::new()
        .answer("Step 1: think\nConclusion: mine")
        .answer("x\n#### plugin");
    let runner = runner(&script);
    let mut thinker = Thinker::new();
    let out = ask_thinker(
        &runner,
        &mut thinker,
        Signal::new("reasoning.cot.run", json!({"query": "q1"})),
    )
    .await;
    assert_eq!(
        emitted(&out, "ai.request.completed").unwrap().data["answer"],
        "mine"
    );
    assert_eq!(
        thinker.snapshot().status,
        Status::Success,
        "the strategy ran it"
    );
    let out = ask_thinker(
        &runner,
        &mut thinker,
        Signal::new("reasoning.cod.run", json!({"query": "q2"})),
    )
    .await;
    assert_eq!(
        emitted(&out, "ai.request.completed").unwrap().data["answer"],
        "plugin"
    );
    script.assert_finished();
}

async fn ask_thinker(
    runner: &AiRunner,
    agent: &mut Agent<Thinker>,
    signal: Signal,
) -> Vec<Directive> {
    let out = agent.handle_signal(&signal);
    runner.settle(agent, out).await
}

#[tokio::test]
async fn in_the_server_planning_reasoning_and_embedding_recall_answer() {
    let plan = json!({"goal": "g", "steps": [{"id": 1, "title": "t", "description": "d", "depends_on": []}]});
    let script = ScriptedModel::new()
        .when("Make a plan", plan.to_string())
        .when("2+2", "Step 1: add\nConclusion: 4");
    let (server, mut events) = serve_desk(&script).await;
    server
        .call(Signal::new(
            "retrieval.upsert",
            json!({"memories": [{"id": "a", "text": "the door code is 1234"}, {"id": "b", "text": "lunch at noon"}]}),
        ))
        .await
        .unwrap();
    for signal in [
        Signal::new("planning.plan", json!({"goal": "ship"})),
        Signal::new(
            "reasoning.cot.run",
            json!({"query": "2+2?", "request_id": "q"}),
        ),
    ] {
        server.call(signal).await.unwrap();
    }
    let mut seen = std::collections::BTreeMap::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while seen.len() < 2 {
        let signal = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("the answers arrive")
            .unwrap();
        if signal.signal_type == PLANNED || signal.signal_type == "ai.request.completed" {
            seen.insert(signal.signal_type.clone(), signal);
        }
    }
    let planned: Plan = Planning::read(&seen[PLANNED]).unwrap();
    assert_eq!(planned.steps.len(), 1);
    assert_eq!(seen["ai.request.completed"].data["answer"], "4");
    // The memories' embeddings arrived in the server too: recall ranks by them.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        server
            .call(Signal::new(
                "retrieval.recall",
                json!({"query": "what is the door code", "top_k": 1}),
            ))
            .await
            .unwrap();
        let recalled = loop {
            let signal = tokio::time::timeout_at(deadline, events.recv())
                .await
                .expect("a recall answer")
                .unwrap();
            if signal.signal_type == "retrieval.recalled" {
                break signal;
            }
        };
        if recalled.data["memories"]
            .as_array()
            .is_some_and(|m| !m.is_empty())
        {
            assert_eq!(recalled.data["ranking"], "embedding");
            assert_eq!(recalled.data["memories"][0]["id"], "a");
            break;
        }
    }
}

/// A `Desk` in the server on the scripted model, and a subscription to what it emits.
async fn serve_desk(
    script: &ScriptedModel,
) -> (AgentServer<Desk>, tokio::sync::broadcast::Receiver<Signal>) {
    let options = Options::default().models(models(Arc::new(script.clone())));
    let server = AgentServer::start(Desk::new(), options).await.unwrap();
    let events = server.subscribe();
    (server, events)
}

/// The next signal of type `signal_type` a subscriber sees (within five seconds).
async fn next_of(
    events: &mut tokio::sync::broadcast::Receiver<Signal>,
    signal_type: &str,
) -> Signal {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let signal = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("no `{signal_type}` arrived"))
            .unwrap();
        if signal.signal_type == signal_type {
            return signal;
        }
    }
}

#[tokio::test]
async fn in_the_server_simple_complete_and_generate_object_answer() {
    let script = ScriptedModel::new()
        .answer("Hi.")
        .answer("c, d.")
        .answer("{\"name\": \"Rex\"}")
        .answer("{\"name\": \"Rex\", \"legs\": 4}");
    let (server, mut events) = serve_desk(&script).await;

    server
        .call(Signal::new(
            "chat.simple",
            json!({"prompt": "Hello", "request_id": "s1"}),
        ))
        .await
        .unwrap();
    let simple = next_of(&mut events, CHAT_RESPONSE).await;
    assert_eq!(simple.data["request_id"], "s1");
    assert_eq!(simple.data["text"], "Hi.");

    server
        .call(Signal::new(
            "chat.complete",
            json!({"request_id": "s2", "messages": [
                {"role": "system", "content": "Finish the list."},
                {"role": "user", "content": "a, b,"}
            ]}),
        ))
        .await
        .unwrap();
    let complete = next_of(&mut events, CHAT_RESPONSE).await;
    assert_eq!(complete.data["request_id"], "s2");
    assert_eq!(complete.data["text"], "c, d.");

    server
        .call(Chat::generate_object::<Pet>("Describe a dog."))
        .await
        .unwrap();
    let object = next_of(&mut events, CHAT_OBJECT).await;
    assert_eq!(object.data["repaired"], true, "the repair turn ran");
    assert_eq!(
        Chat::object::<Pet>(&object).unwrap(),
        Pet {
            name: "Rex".into(),
            legs: 4
        }
    );

    let requests = script.requests();
    assert_eq!(
        requests[0].messages[0].content, "Be brief.",
        "simple: system prompt"
    );
    assert!(requests[0].tools.is_empty(), "simple: no tools");
    assert_eq!(requests[1].messages[0].content, "Finish the list.");
    assert_eq!(
        requests[1].messages.len(),
        2,
        "complete: the conversation as given"
    );
    assert!(requests[2].response_format.is_some());
    script.assert_finished();
    let agent = server.agent().await.unwrap();
    assert!(agent.plugin_state::<Chat>().unwrap().pending.is_empty());
}

#[tokio::test]
async fn in_the_server_execute_tool_and_list_tools_answer() {
    let server = AgentServer::start(Desk::new(), Options::default())
        .await
        .unwrap();
    let mut events = server.subscribe();

    let listed = server
        .call(Signal::new("chat.list_tools", json!({})))
        .await
        .unwrap();
    let tools = &listed
        .emitted()
        .find(|s| s.signal_type == CHAT_TOOLS)
        .expect("the call's answer")
        .data["tools"];
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["lookup_order", "track_parcel"],
        "`secret` is denied"
    );
    assert_eq!(
        next_of(&mut events, CHAT_TOOLS).await.data["tools"],
        *tools,
        "subscribers see it too"
    );

    let ran = server
        .call(Signal::new(
            "chat.execute_tool",
            json!({"name": "lookup_order", "arguments": {"id": 9}, "request_id": "x1"}),
        ))
        .await
        .unwrap();
    let result = ran
        .emitted()
        .find(|s| s.signal_type == CHAT_TOOL_RESULT)
        .expect("the call's answer");
    assert_eq!(result.data["request_id"], "x1");
    assert_eq!(result.data["ok"], true);
    assert_eq!(result.data["result"]["id"], 9);
    assert_eq!(server.state().await.unwrap().lookups, 1, "the tool ran");

    let refused = server
        .call(Signal::new(
            "chat.execute_tool",
            json!({"name": "secret", "arguments": {}, "request_id": "x2"}),
        ))
        .await
        .unwrap();
    let result = refused
        .emitted()
        .find(|s| s.signal_type == CHAT_TOOL_RESULT)
        .expect("the call's answer");
    assert_eq!(result.data["ok"], false);
    assert!(
        result.data["error"]
            .as_str()
            .unwrap()
            .contains("not allowed"),
        "{result:?}"
    );
    assert_eq!(
        next_of(&mut events, CHAT_TOOL_RESULT).await.data["request_id"],
        "x1"
    );
    assert_eq!(server.state().await.unwrap().lookups, 1);
}

#[tokio::test]
async fn in_the_server_generate_object_against_an_openai_compatible_endpoint() {
    let (base_url, seen) = endpoint(vec![r#"{"name": "Tom", "legs": 4}"#.into()]).await;
    let options = Options::default().models(models(Arc::new(OpenAiCompatible::new(&base_url))));
    let server = AgentServer::start(Desk::new(), options).await.unwrap();
    let mut events = server.subscribe();
    server
        .call(Chat::generate_object::<Pet>("A cat?"))
        .await
        .unwrap();
    // The tokens are reported before the answer.
    let usage = next_of(&mut events, "ai.usage").await;
    assert_eq!(usage.data["usage"]["prompt_tokens"], 5, "{usage:?}");
    let object = next_of(&mut events, CHAT_OBJECT).await;
    assert_eq!(
        Chat::object::<Pet>(&object).unwrap(),
        Pet {
            name: "Tom".into(),
            legs: 4
        }
    );
    assert_eq!(object.data["repaired"], false);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "/v1/chat/completions");
    assert_eq!(seen[0].1["model"], "m");
    assert_eq!(
        seen[0].1["stream"], true,
        "a subscriber sees the answer stream in"
    );
    assert_eq!(seen[0].1["response_format"]["json_schema"]["name"], "Pet");
}

#[tokio::test]
async fn chat_message_runs_async_actions_as_tools() {
    let script = ScriptedModel::new()
        .call("track_parcel", json!({"code": "P7"}))
        .also("lookup_order", json!({"id": 7}))
        .unwrap()
        .answer("P7 is at the depot; order 7 shipped.");
    let mut desk = Desk::new();
    let out = desk.handle_signal(&Signal::new(
        "chat.message",
        json!({"prompt": "Where are P7 and order 7?", "request_id": "a1"}),
    ));
    let runner = runner(&script);
    // The first turn's answer: the sync call runs, the async one goes to the host.
    let llm = out
        .into_iter()
        .find_map(|d| match d {
            Directive::Llm(call) => Some(*call),
            _ => None,
        })
        .expect("a model call");
    let reply = stratagem::ai::LlmReply::new(llm.call_id.clone(), runner.call_model(&llm).await);
    let out = desk.handle_signal(&reply.into_signal());
    let run = out
        .iter()
        .find_map(|d| match d {
            Directive::RunInstruction { instruction, .. } => Some(instruction.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the async tool goes to the host: {out:?}"));
    assert_eq!(run.action, "track_parcel");
    assert_eq!(run.id, "chat/a1/tool/1/0");
    assert!(
        !out.iter().any(|d| matches!(d, Directive::Llm(_))),
        "the next turn waits for the async result"
    );
    assert_eq!(desk.state().lookups, 1, "the sync call ran at once");
    // The round waiting on the host is part of the checkpoint.
    let saved = serde_json::to_value(&desk).unwrap();
    assert_eq!(
        saved["plugins"]["chat"]["tools"]["chat/a1/tool/1/0"]["name"], "track_parcel",
        "{saved}"
    );
    let mut desk: Agent<Desk> = serde_json::from_value(saved).unwrap();
    let out = runner.settle(&mut desk, out).await;
    let answer = emitted(&out, CHAT_RESPONSE).unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(answer.data["text"], "P7 is at the depot; order 7 shipped.");
    assert_eq!(answer.data["tool_calls"][0]["name"], "track_parcel");
    assert_eq!(answer.data["tool_calls"][0]["result"]["at"], "depot");
    assert_eq!(answer.data["tool_calls"][1]["result"]["status"], "shipped");
    assert_eq!(
        desk.state().tracked,
        1,
        "the async action's state change applied"
    );
    let requests = script.requests();
    let tool_messages: Vec<&str> = requests[1]
        .messages
        .iter()
        .filter(|m| m.role == stratagem::ai::Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(tool_messages.len(), 2, "both results, in call order");
    assert!(tool_messages[0].contains("depot"), "{tool_messages:?}");
    assert!(tool_messages[1].contains("shipped"), "{tool_messages:?}");
    let chat = desk.plugin_state::<Chat>().unwrap();
    assert!(chat.pending.is_empty() && chat.tools.is_empty());
    script.assert_finished();
}

#[tokio::test]
async fn execute_tool_runs_an_async_action_through_the_host() {
    let script = ScriptedModel::new();
    let mut desk = Desk::new();
    let signal = Signal::new(
        "chat.execute_tool",
        json!({"name": "track_parcel", "arguments": {"code": "Z9"}, "request_id": "e1"}),
    );
    let out = desk.handle_signal(&signal);
    assert!(
        emitted(&out, CHAT_TOOL_RESULT).is_none(),
        "answered once the host ran it"
    );
    let out = runner(&script).settle(&mut desk, out).await;
    let result = &emitted(&out, CHAT_TOOL_RESULT)
        .unwrap_or_else(|| panic!("{out:?}"))
        .data;
    assert_eq!(result["request_id"], "e1");
    assert_eq!(result["ok"], true);
    assert_eq!(result["result"]["at"], "depot");
    assert_eq!(desk.state().tracked, 1);
    let out = desk.handle_signal(&Signal::new(
        "chat.execute_tool",
        json!({"name": "track_parcel", "arguments": {"code": 5}}),
    ));
    let result = &emitted(&out, CHAT_TOOL_RESULT).unwrap().data;
    assert_eq!(
        result["ok"], false,
        "arguments are checked before the host runs it"
    );
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("invalid arguments")
    );
}

#[tokio::test]
async fn in_the_server_chat_runs_async_actions_as_tools() {
    let script = ScriptedModel::new()
        .call("track_parcel", json!({"code": "S1"}))
        .answer("S1 is at the depot.");
    let (server, mut events) = serve_desk(&script).await;
    server
        .call(Signal::new(
            "chat.message",
            json!({"prompt": "Where is S1?", "request_id": "sa"}),
        ))
        .await
        .unwrap();
    let answer = next_of(&mut events, CHAT_RESPONSE).await;
    assert_eq!(answer.data["text"], "S1 is at the depot.");
    assert_eq!(answer.data["tool_calls"][0]["result"]["code"], "S1");
    assert_eq!(server.state().await.unwrap().tracked, 1);
    server
        .call(Signal::new(
            "chat.execute_tool",
            json!({"name": "track_parcel", "arguments": {"code": "S2"}, "request_id": "sb"}),
        ))
        .await
        .unwrap();
    let result = next_of(&mut events, CHAT_TOOL_RESULT).await;
    assert_eq!(result.data["request_id"], "sb");
    assert_eq!(result.data["result"]["code"], "S2");
    assert_eq!(server.state().await.unwrap().tracked, 2);
    script.assert_finished();
}

#[tokio::test]
async fn reasoning_react_runs_use_the_agents_tools_under_the_policy() {
    let script = ScriptedModel::new()
        .call("lookup_order", json!({"id": 3}))
        .also("track_parcel", json!({"code": "R1"}))
        .unwrap()
        .call("secret", json!({}))
        .answer("Order 3 shipped; R1 is at the depot.");
    let mut desk = Desk::new();
    let out = ask(
        &runner(&script),
        &mut desk,
        Signal::new(
            "reasoning.react.run",
            json!({"query": "Order 3 and parcel R1?", "request_id": "rt"}),
        ),
    )
    .await;
    let done = emitted(&out, "ai.request.completed").unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(done.data["answer"], "Order 3 shipped; R1 is at the depot.");
    assert_eq!(desk.state().lookups, 1, "the sync tool ran on the agent");
    assert_eq!(
        desk.state().tracked,
        1,
        "the async tool ran through the host"
    );
    let requests = script.requests();
    let offered: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        offered,
        ["lookup_order", "track_parcel"],
        "`secret` is denied"
    );
    let results: Vec<&str> = requests[1]
        .messages
        .iter()
        .filter(|m| m.role == stratagem::ai::Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert!(
        results[0].contains("shipped") && results[1].contains("depot"),
        "{results:?}"
    );
    let refused = requests[2].messages.last().unwrap();
    assert!(
        refused.content.contains("unknown tool `secret`"),
        "a denied tool is not run: {refused:?}"
    );
    let reasoning = desk.plugin_state::<Reasoning>().unwrap();
    assert!(reasoning.runs.is_empty() && reasoning.tools.is_empty());
    script.assert_finished();
}

#[tokio::test]
async fn an_adaptive_run_that_looks_something_up_chooses_react_with_tools() {
    let script = ScriptedModel::new()
        .call("lookup_order", json!({"id": 8}))
        .answer("Order 8 shipped.");
    let mut desk = Desk::new();
    let out = ask(
        &runner(&script),
        &mut desk,
        Signal::new(
            "reasoning.adaptive.run",
            json!({"query": "Look up order 8", "request_id": "ad"}),
        ),
    )
    .await;
    assert_eq!(
        emitted(&out, "ai.request.started").unwrap().data["strategy"],
        "react"
    );
    assert_eq!(
        emitted(&out, "ai.request.completed").unwrap().data["answer"],
        "Order 8 shipped."
    );
    assert_eq!(desk.state().lookups, 1);
    assert_eq!(script.requests()[0].tools.len(), 2);
}

#[tokio::test]
async fn in_the_server_a_reasoning_run_awaits_its_async_tool() {
    let script = ScriptedModel::new()
        .call("track_parcel", json!({"code": "Q5"}))
        .answer("Q5 is at the depot.");
    let (server, mut events) = serve_desk(&script).await;
    server
        .call(Signal::new(
            "reasoning.react.run",
            json!({"query": "Where is Q5?", "request_id": "sq"}),
        ))
        .await
        .unwrap();
    let done = next_of(&mut events, "ai.request.completed").await;
    assert_eq!(done.data["request_id"], "sq");
    assert_eq!(done.data["answer"], "Q5 is at the depot.");
    assert_eq!(server.state().await.unwrap().tracked, 1);
    script.assert_finished();
}

/// Embeds by meaning, not by words: a text's vector counts the concepts it mentions, so
/// "food" is close to "cafeteria" although they share no word (which BM25 needs). It fails
/// for a text that says `offline`, and answers no chat request.
#[derive(Debug)]
struct Meanings;

impl LanguageModel for Meanings {
    fn name(&self) -> &str {
        "meanings"
    }

    fn generate(
        &self,
        _: stratagem::ai::LlmRequest,
    ) -> futures::future::BoxFuture<'static, Result<stratagem::ai::LlmResponse, LlmError>> {
        Box::pin(async { Err(LlmError::new(LlmErrorKind::Other, "embeddings only")) })
    }

    fn embed(
        &self,
        request: EmbeddingRequest,
    ) -> futures::future::BoxFuture<'static, Result<Embeddings, LlmError>> {
        const CONCEPTS: [&[&str]; 3] = [
            &["food", "eat", "lunch", "cafeteria"],
            &["car", "drive", "parking"],
            &["open", "opens", "hours"],
        ];
        let result = if request.inputs.iter().any(|t| t.contains("offline")) {
            Err(LlmError::new(LlmErrorKind::Transport, "offline"))
        } else {
            let vectors = request
                .inputs
                .iter()
                .map(|text| {
                    let lower = text.to_lowercase();
                    CONCEPTS
                        .iter()
                        .map(|words| words.iter().filter(|w| lower.contains(*w)).count() as f32)
                        .collect()
                })
                .collect();
            Ok(Embeddings {
                vectors,
                usage: Default::default(),
            })
        };
        Box::pin(async move { result })
    }
}

/// Answers from what it remembers, ranked by meaning.
#[agent(plugins = [
    Chat { default_model = "fast" },
    Retrieval { embedding_model = "meanings", top_k = 1 }
])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Librarian {}

fn librarian_models(script: &ScriptedModel) -> ModelTable {
    ModelTable::new()
        .alias("fast", Arc::new(script.clone()), "m")
        .alias("meanings", Arc::new(Meanings), "e")
}

fn memories() -> Signal {
    Signal::new(
        "retrieval.upsert",
        json!({"memories": [
            {"id": "parking", "text": "Parking is behind the building"},
            {"id": "lunch", "text": "The cafeteria serves lunch at noon"}
        ]}),
    )
}

#[tokio::test]
async fn enrichment_ranks_by_embeddings_and_falls_back_to_bm25() {
    let script = ScriptedModel::new()
        .answer("At the cafeteria.")
        .answer("At noon.");
    let runner = AiRunner::new(librarian_models(&script));
    let mut librarian = Librarian::new();
    let out = librarian.handle_signal(&memories());
    runner.settle(&mut librarian, out).await;

    // No word in common with either memory: only the embeddings find the cafeteria.
    let out = librarian.handle_signal(&Signal::new(
        "chat.message",
        json!({"prompt": "Where can I get food?", "request_id": "m1"}),
    ));
    assert!(
        matches!(out.as_slice(), [Directive::Embed(_)]),
        "the request waits for its prompt's embedding: {out:?}"
    );
    let saved = serde_json::to_value(&librarian).unwrap();
    let held = &saved["plugins"]["retrieval"]["pending"];
    assert_eq!(
        held.as_object().unwrap().values().next().unwrap()["for"],
        "enrich",
        "the held request is in the checkpoint: {held}"
    );
    let mut librarian: Agent<Librarian> = serde_json::from_value(saved).unwrap();
    let out = runner.settle(&mut librarian, out).await;
    assert_eq!(
        emitted(&out, CHAT_RESPONSE)
            .unwrap_or_else(|| panic!("{out:?}"))
            .data["text"],
        "At the cafeteria."
    );

    // The embedding call fails: the memories are ranked by BM25 (which finds "lunch").
    let out = librarian.handle_signal(&Signal::new(
        "chat.message",
        json!({"prompt": "offline: lunch time?", "request_id": "m2"}),
    ));
    let out = runner.settle(&mut librarian, out).await;
    assert_eq!(
        emitted(&out, CHAT_RESPONSE).unwrap().data["text"],
        "At noon."
    );

    let requests = script.requests();
    let first = requests[0].last_user_message().unwrap();
    assert!(
        first.starts_with("Relevant memories:\n- The cafeteria serves lunch at noon\n"),
        "{first}"
    );
    assert!(first.ends_with("Where can I get food?"), "{first}");
    let second = requests[1].last_user_message().unwrap();
    assert!(second.contains("- The cafeteria serves lunch"), "{second}");
    assert!(!second.contains("Parking"), "{second}");
    assert!(
        librarian
            .plugin_state::<Retrieval>()
            .unwrap()
            .pending
            .is_empty()
    );
    script.assert_finished();
}

#[tokio::test]
async fn enrichment_by_embeddings_in_the_server() {
    let script = ScriptedModel::new().answer("At the cafeteria.");
    let options = Options::default().models(librarian_models(&script));
    let server = AgentServer::start(Librarian::new(), options).await.unwrap();
    let mut events = server.subscribe();
    server.call(memories()).await.unwrap();
    // The memories' embeddings arrive through the server before the question is asked.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let agent = server.agent().await.unwrap();
        let ns = &agent.plugin_state::<Retrieval>().unwrap().namespaces["default"];
        if ns.memories.iter().all(|m| m.embedding.is_some()) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no embeddings");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server
        .call(Signal::new(
            "chat.message",
            json!({"prompt": "Where can I get food?", "request_id": "s9"}),
        ))
        .await
        .unwrap();
    let answer = next_of(&mut events, CHAT_RESPONSE).await;
    assert_eq!(answer.data["request_id"], "s9");
    let prompt = script.requests()[0]
        .last_user_message()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains("- The cafeteria serves lunch at noon"),
        "{prompt}"
    );
    assert!(!prompt.contains("Parking"), "{prompt}");
}

/// Remembers by meaning, and answers one request.
#[agent(plugins = [
    Chat { default_model = "fast" },
    Retrieval { embedding_model = "meanings", top_k = 1 },
    Quota { max_requests = 1 }
])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Gatekeeper {}

#[tokio::test]
async fn a_held_request_reaches_the_hooks_after_retrieval_once() {
    let script = ScriptedModel::new().answer("At the cafeteria.");
    let runner = AiRunner::new(librarian_models(&script));
    let mut keeper = Gatekeeper::new();
    let out = keeper.handle_signal(&memories());
    runner.settle(&mut keeper, out).await;
    let counted = |keeper: &Agent<Gatekeeper>| {
        keeper
            .plugin_state::<Quota>()
            .unwrap()
            .scopes
            .get("default")
            .map_or(0, |s| s.requests.len())
    };
    let ask = |id: &str| {
        Signal::new(
            "chat.message",
            json!({"prompt": "Where can I get food?", "request_id": id}),
        )
    };
    let out = keeper.handle_signal(&ask("q1"));
    assert_eq!(
        counted(&keeper),
        0,
        "Quota, after Retrieval, has not seen it yet"
    );
    let out = runner.settle(&mut keeper, out).await;
    assert!(emitted(&out, CHAT_RESPONSE).is_some(), "{out:?}");
    assert_eq!(
        counted(&keeper),
        1,
        "counted once, when it came back enriched"
    );
    // Over budget: the request comes back enriched and Quota refuses it.
    let out = keeper.handle_signal(&ask("q2"));
    let out = runner.settle(&mut keeper, out).await;
    let refused = emitted(&out, REQUEST_ERROR).unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(refused.data["reason"], "quota_exceeded");
    assert_eq!(refused.data["request_id"], "q2");
    assert_eq!(
        script.requests().len(),
        1,
        "the refused request reached no model"
    );
}
