//! The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 that each test starts
//! and scripts: every case ends in the right result, and nothing hangs.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::model::{ChatMessage, LlmErrorKind, LlmRequest, ToolChoice, collect_stream};
use super::openai::{OpenAiCompatible, SseParser, host_of, parse_completion};
use super::{FinishReason, LanguageModel, LlmDelta, ToolCall, ToolSpec};
use crate::instruction::ExecOptions;

/// What the server answers to one request.
enum Reply {
    /// A complete response.
    Full {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// Server-sent events: each piece written separately after a short pause; the
    /// connection closes after the last.
    Events(Vec<String>),
    /// Read the request, answer nothing.
    Silence,
}

fn ok(body: Value) -> Reply {
    Reply::Full {
        status: 200,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

fn status(status: u16, body: &str) -> Reply {
    Reply::Full {
        status,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

struct Server {
    base_url: String,
    /// Each request: the `Authorization` header (if any) and the JSON body.
    requests: Requests,
}

async fn serve(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let replies = Arc::new(Mutex::new(
        replies
            .into_iter()
            .collect::<std::collections::VecDeque<_>>(),
    ));
    let seen = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let (seen, replies) = (seen.clone(), replies.clone());
            tokio::spawn(connection(socket, seen, replies));
        }
    });
    Server { base_url, requests }
}

type Requests = Arc<Mutex<Vec<(Option<String>, Value)>>>;

async fn connection(
    mut socket: TcpStream,
    seen: Requests,
    replies: Arc<Mutex<std::collections::VecDeque<Reply>>>,
) {
    let mut buf = Vec::new();
    loop {
        // Read one request: headers, then `Content-Length` bytes of body.
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
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let header = |name: &str| {
            head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_string())
            })
        };
        let length: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Value =
            serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or(Value::Null);
        buf.drain(..head_end + length);
        seen.lock().unwrap().push((header("authorization"), body));
        let reply = replies.lock().unwrap().pop_front();
        match reply {
            None | Some(Reply::Silence) => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return;
            }
            Some(Reply::Full {
                status,
                headers,
                body,
            }) => {
                let mut out = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                    body.len()
                );
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                out.push_str(&body);
                if socket.write_all(out.as_bytes()).await.is_err() {
                    return;
                }
            }
            Some(Reply::Events(pieces)) => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for piece in pieces {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    if socket.write_all(piece.as_bytes()).await.is_err() {
                        return;
                    }
                    let _ = socket.flush().await;
                }
                let _ = socket.shutdown().await;
                return;
            }
        }
    }
}

fn provider(server: &Server, max_retries: u32, timeout_ms: u64) -> OpenAiCompatible {
    OpenAiCompatible::new(&server.base_url).retry(ExecOptions {
        timeout: Duration::from_millis(timeout_ms),
        max_retries,
        backoff: Duration::from_millis(10),
        backoff_cap: Duration::from_millis(100),
    })
}

fn request() -> LlmRequest {
    let mut request = LlmRequest::new(
        "llama3.2",
        vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user("Where is order 42?"),
        ],
    );
    request.temperature = Some(0.0);
    request
}

fn with_tools() -> LlmRequest {
    let mut request = request();
    request.tools = Arc::from(vec![ToolSpec {
        name: "lookup_order".into(),
        description: "Looks up an order".into(),
        parameters: json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false}),
    }]);
    request.tool_choice = ToolChoice::Auto;
    request.messages.push(ChatMessage::assistant(
        "",
        vec![ToolCall {
            id: "c0".into(),
            name: "lookup_order".into(),
            arguments: json!({"id": 1}),
        }],
    ));
    request
        .messages
        .push(ChatMessage::tool("c0", "{\"status\":\"lost\"}"));
    request
}

fn completion(message: Value, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    })
}

fn event(chunk: Value) -> String {
    format!("data: {chunk}\n\n")
}

fn delta_chunk(delta: Value, finish: Option<&str>) -> String {
    event(json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

#[tokio::test]
async fn a_plain_answer() {
    let server = serve(vec![ok(completion(
        json!({"role": "assistant", "content": "It shipped."}),
        "stop",
    ))])
    .await;
    let response = provider(&server, 1, 5_000)
        .generate(request())
        .await
        .unwrap();
    assert_eq!(response.text, "It shipped.");
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(response.usage.total_tokens, 17);
    let requests = server.requests.lock().unwrap();
    let (auth, body) = &requests[0];
    assert_eq!(auth, &None, "no key configured, none sent");
    assert_eq!(body["model"], "llama3.2");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["temperature"], 0.0);
    assert!(body.get("tools").is_none() && body.get("stream").is_none());
}

#[tokio::test]
async fn tool_calls_go_out_and_come_back() {
    let server = serve(vec![ok(completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"id\": 42}"}},
            {"id": "call_b", "type": "function", "function": {"name": "open_ticket", "arguments": "{\"subject\":"}},
        ]}),
        "tool_calls",
    ))])
    .await;
    let response = provider(&server, 1, 5_000)
        .generate(with_tools())
        .await
        .unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.tool_calls[0].id, "call_a");
    assert_eq!(response.tool_calls[0].arguments, json!({"id": 42}));
    assert_eq!(
        response.tool_calls[1].arguments,
        json!("{\"subject\":"),
        "arguments that are not JSON stay raw for the strategy to report"
    );
    let body = &server.requests.lock().unwrap()[0].1;
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "lookup_order");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["additionalProperties"],
        false
    );
    assert_eq!(body["tool_choice"], "auto");
    let assistant = &body["messages"][2];
    assert_eq!(assistant["content"], Value::Null);
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        "{\"id\":1}"
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "content": "{\"status\":\"lost\"}", "tool_call_id": "c0"})
    );
}

#[tokio::test]
async fn a_streamed_answer_with_tool_call_deltas_split_across_chunks() {
    let first = delta_chunk(json!({"role": "assistant", "content": "Let me "}), None);
    // One event split across two writes, in the middle of its JSON.
    let (a, b) = first.split_at(first.len() / 2);
    let pieces = vec![
        a.to_string(),
        b.to_string(),
        delta_chunk(json!({"content": "check."}), None),
        delta_chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "lookup_order", "arguments": ""}}]}),
            None,
        ),
        delta_chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"id\""}}]}),
            None,
        ),
        ": keep-alive\n\n".to_string(),
        delta_chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "open_ticket", "arguments": "{}"}}]}),
            None,
        ),
        delta_chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": ": 42}"}}]}),
            None,
        ),
        delta_chunk(json!({}), Some("tool_calls")),
        event(
            json!({"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}}),
        ),
        "data: [DONE]\n\n".to_string(),
    ];
    let server = serve(vec![Reply::Events(pieces)]).await;
    let mut deltas = Vec::new();
    let response = collect_stream(provider(&server, 1, 5_000).stream(with_tools()), |d| {
        deltas.push(d.clone())
    })
    .await
    .unwrap();
    assert_eq!(response.text, "Let me check.");
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(response.tool_calls[0].name, "lookup_order");
    assert_eq!(response.tool_calls[0].arguments, json!({"id": 42}));
    assert_eq!(response.tool_calls[1].id, "call_b");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage.total_tokens, 39);
    assert!(deltas.len() >= 6, "{deltas:?}");
    assert!(matches!(deltas.last(), Some(LlmDelta::Finish { .. })));
    let body = &server.requests.lock().unwrap()[0].1;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
}

/// Some servers and proxies repeat the call's `id` and `name` on every chunk.
#[tokio::test]
async fn tool_call_chunks_that_repeat_id_and_name_make_one_call() {
    let repeated = |arguments: &str| {
        delta_chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "lookup_order", "arguments": arguments}}]}),
            None,
        )
    };
    let pieces = vec![
        repeated(""),
        repeated("{\"id\""),
        repeated(": 4"),
        repeated("2}"),
        delta_chunk(json!({}), Some("tool_calls")),
        "data: [DONE]\n\n".to_string(),
    ];
    let server = serve(vec![Reply::Events(pieces)]).await;
    let response = collect_stream(provider(&server, 1, 5_000).stream(with_tools()), |_| {})
        .await
        .unwrap();
    assert_eq!(
        response.tool_calls,
        [ToolCall {
            id: "call_a".into(),
            name: "lookup_order".into(),
            arguments: json!({"id": 42}),
        }]
    );
}

#[tokio::test]
async fn tool_schemas_go_out_as_strict_validators_accept_them() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Lookup {
        id: u64,
        note: Option<String>,
    }
    let mut request = request();
    request.tools = Arc::from(vec![ToolSpec {
        name: "lookup_order".into(),
        description: "Looks up an order".into(),
        parameters: crate::action::closed_schema::<Lookup>(),
    }]);
    let answer = || {
        ok(completion(
            json!({"role": "assistant", "content": "ok"}),
            "stop",
        ))
    };
    let server = serve(vec![answer(), answer()]).await;
    provider(&server, 1, 5_000)
        .generate(request.clone())
        .await
        .unwrap();
    provider(&server, 1, 5_000)
        .strict_tools(true)
        .generate(request)
        .await
        .unwrap();
    let requests = server.requests.lock().unwrap();
    let plain = &requests[0].1["tools"][0]["function"];
    assert!(plain.get("strict").is_none());
    assert!(plain["parameters"].get("$schema").is_none(), "{plain}");
    assert_eq!(
        plain["parameters"]["properties"]["id"],
        json!({"type": "integer", "minimum": 0}),
        "no `uint64` format"
    );
    assert_eq!(plain["parameters"]["required"], json!(["id"]));
    let strict = &requests[1].1["tools"][0]["function"];
    assert_eq!(strict["strict"], true);
    assert_eq!(strict["parameters"]["required"], json!(["id", "note"]));
    assert_eq!(strict["parameters"]["additionalProperties"], false);
}

#[tokio::test]
async fn rate_limited_then_success_is_retried() {
    let server = serve(vec![
        Reply::Full {
            status: 429,
            headers: vec![("Retry-After", "0".into())],
            body: r#"{"error": {"message": "slow down"}}"#.into(),
        },
        ok(completion(
            json!({"role": "assistant", "content": "fine"}),
            "stop",
        )),
    ])
    .await;
    let response = provider(&server, 1, 5_000)
        .generate(request())
        .await
        .unwrap();
    assert_eq!(response.text, "fine");
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_until_the_policy_gives_up() {
    let server = serve(
        (0..5)
            .map(|_| status(500, r#"{"error": {"message": "overloaded"}}"#))
            .collect(),
    )
    .await;
    let err = provider(&server, 2, 5_000)
        .generate(request())
        .await
        .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Server);
    assert_eq!(err.status, Some(500));
    assert_eq!(err.attempts, 3);
    assert!(err.message.contains("HTTP 500"), "{err}");
    assert!(err.message.contains("overloaded"), "{err}");
    assert!(err.message.ends_with("(after 3 attempts)"), "{err}");
    assert_eq!(
        server.requests.lock().unwrap().len(),
        3,
        "one try plus two retries"
    );
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let server = serve(vec![
        status(400, r#"{"error": {"message": "bad model"}}"#),
        status(400, ""),
    ])
    .await;
    let err = provider(&server, 3, 5_000)
        .generate(request())
        .await
        .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Http);
    assert_eq!(server.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn malformed_json_is_a_clear_failure() {
    let server = serve(vec![Reply::Full {
        status: 200,
        headers: Vec::new(),
        body: "{\"choices\": [oops".into(),
    }])
    .await;
    let err = provider(&server, 3, 5_000)
        .generate(request())
        .await
        .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Malformed);
    assert!(err.message.contains("not valid JSON"), "{err}");
    let server = serve(vec![ok(json!({"object": "chat.completion"}))]).await;
    let err = provider(&server, 3, 5_000)
        .generate(request())
        .await
        .unwrap_err();
    assert!(err.message.contains("no `choices[0]`"), "{err}");
    assert_eq!(
        server.requests.lock().unwrap().len(),
        1,
        "a malformed body is not retried"
    );
}

#[tokio::test]
async fn a_stream_cut_mid_answer_is_a_clear_failure() {
    let server = serve(vec![Reply::Events(vec![
        delta_chunk(json!({"content": "The order "}), None),
        delta_chunk(json!({"content": "is"}), None),
    ])])
    .await;
    let mut texts = 0;
    let started = Instant::now();
    let err = collect_stream(provider(&server, 1, 5_000).stream(request()), |_| {
        texts += 1
    })
    .await
    .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Malformed);
    assert!(
        err.message.contains("cut before the answer finished"),
        "{err}"
    );
    assert_eq!(texts, 2, "what arrived was delivered");
    assert!(started.elapsed() < Duration::from_secs(4));
    // A bad chunk mid-stream is malformed too.
    let server = serve(vec![Reply::Events(vec!["data: {nope\n\n".into()])]).await;
    let err = collect_stream(provider(&server, 1, 5_000).stream(request()), |_| {})
        .await
        .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Malformed);
}

#[tokio::test]
async fn a_silent_server_times_out_after_the_retries() {
    let server = serve(vec![Reply::Silence, Reply::Silence]).await;
    let started = Instant::now();
    let err = provider(&server, 1, 200)
        .generate(request())
        .await
        .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Timeout);
    assert_eq!(err.attempts, 2);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // A stream that stalls after its first piece times out too, instead of hanging.
    let server = serve(vec![Reply::Silence]).await;
    let err = collect_stream(provider(&server, 0, 200).stream(request()), |_| {})
        .await
        .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Timeout);
}

#[tokio::test]
async fn a_refused_connection_fails_after_the_retries() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let model = OpenAiCompatible::new(url).retry(ExecOptions {
        timeout: Duration::from_secs(2),
        max_retries: 1,
        backoff: Duration::from_millis(10),
        backoff_cap: Duration::from_millis(10),
    });
    let err = model.generate(request()).await.unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Transport);
    assert_eq!(err.attempts, 2);
}

#[tokio::test]
async fn the_key_comes_from_the_environment_and_is_never_shown() {
    // `PATH` is set in every test environment; a test cannot set variables (no `unsafe`).
    let secret = std::env::var("PATH").unwrap();
    let server = serve(vec![status(
        401,
        r#"{"error": {"message": "invalid key"}}"#,
    )])
    .await;
    let model = provider(&server, 1, 5_000).api_key_env("PATH");
    assert!(model.has_api_key());
    let shown = format!("{model:?}");
    assert!(
        !shown.contains(&secret) && shown.contains("<from $PATH>"),
        "{shown}"
    );
    let err = model.generate(request()).await.unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Auth);
    assert!(!err.to_string().contains(&secret));
    assert!(!serde_json::to_string(&err).unwrap().contains(&secret));
    let auth = server.requests.lock().unwrap()[0].0.clone();
    assert_eq!(auth, Some(format!("Bearer {secret}")));
    assert!(
        !OpenAiCompatible::new("http://x")
            .api_key_env("STRATAGEM_TEST_UNSET_VARIABLE")
            .has_api_key()
    );
}

#[test]
fn sse_parsing_edge_cases() {
    let mut parser = SseParser::default();
    assert!(
        parser.feed(b"data: [DONE]\n\n").is_err(),
        "done before any finish"
    );
    let mut parser = SseParser::default();
    let deltas = parser
        .feed(b"event: message\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\r\n\r\n")
        .unwrap();
    assert_eq!(deltas, [LlmDelta::Text { text: "hi".into() }]);
    // A server that closes without `[DONE]` after finishing is fine.
    assert!(matches!(
        parser.end(),
        Ok(Some(LlmDelta::Finish {
            reason: FinishReason::Stop,
            ..
        }))
    ));
    let err = SseParser::default()
        .feed(b"data: {\"error\": {\"message\": \"model crashed\"}}\n\n")
        .unwrap_err();
    assert!(err.message.contains("model crashed"));
    assert!(parse_completion("").is_err());
}

#[tokio::test]
async fn an_agent_asks_a_real_endpoint_and_streams() {
    let call = delta_chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "open_ticket", "arguments": "{\"subject\": "}}]}),
        None,
    );
    let rest = delta_chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"late\"}"}}]}),
        Some("tool_calls"),
    );
    let server = serve(vec![
        Reply::Events(vec![call, rest, "data: [DONE]\n\n".into()]),
        Reply::Events(vec![
            delta_chunk(json!({"content": "Ticket 1 "}), None),
            delta_chunk(json!({"content": "is open."}), Some("stop")),
            "data: [DONE]\n\n".into(),
        ]),
    ])
    .await;
    let models =
        super::ModelTable::new().alias("fast", Arc::new(provider(&server, 1, 5_000)), "llama3.2");
    let deltas = Arc::new(Mutex::new(0usize));
    let seen = deltas.clone();
    let runner = super::AiRunner::new(models).on_delta(move |_, _| *seen.lock().unwrap() += 1);
    let mut desk = crate::agent::Agent::new(super::tests::Desk::default());
    let answer = desk.ask(&runner, "my order is late").await.unwrap();
    assert_eq!(answer.answer(), Some("Ticket 1 is open."));
    assert_eq!(desk.state().tickets, ["late"]);
    assert!(*deltas.lock().unwrap() >= 4);
    let requests = server.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].1["model"], "llama3.2",
        "the alias resolved to the model id"
    );
    let last = requests[1].1["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last,
        json!({"role": "tool", "content": "ticket #1", "tool_call_id": "call_1"})
    );
}

#[tokio::test]
async fn every_retry_after_form_is_read_and_the_cap_holds() {
    let limited = |name: &'static str, value: &str| Reply::Full {
        status: 429,
        headers: vec![(name, value.to_string())],
        body: r#"{"error": {"message": "slow down"}}"#.into(),
    };
    let server = serve(vec![
        limited("retry-after-ms", "20"),
        limited("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"),
        // An hour, by both forms: the 100 ms cap decides, or this test would not end.
        limited("Retry-After", "3600"),
        limited("retry-after-ms", "3600000"),
        ok(completion(
            json!({"role": "assistant", "content": "fine"}),
            "stop",
        )),
    ])
    .await;
    let response = provider(&server, 4, 5_000)
        .generate(request())
        .await
        .unwrap();
    assert_eq!(response.text, "fine");
    assert_eq!(server.requests.lock().unwrap().len(), 5);
}

#[tokio::test]
async fn event_streams_follow_the_whatwg_rules_over_http() {
    // A BOM, bare CR line ends, one chunk's JSON over two `data:` lines, comments, `event`,
    // `id` and `retry` fields.
    let pieces = vec![
        "\u{FEFF}: hello\rretry: 3000\rid: 1\revent: chunk\r".to_string(),
        "data: {\"choices\": [{\"index\": 0,\rdata: \"delta\": {\"content\": \"It \"}}]}\r\r"
            .to_string(),
        "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"shipped.\"}, ".to_string(),
        "\"finish_reason\": \"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n".to_string(),
    ];
    let server = serve(vec![Reply::Events(pieces)]).await;
    let response = collect_stream(provider(&server, 0, 5_000).stream(request()), |_| {})
        .await
        .unwrap();
    assert_eq!(response.text, "It shipped.");
    assert_eq!(response.finish_reason, FinishReason::Stop);
}

#[tokio::test]
async fn a_line_past_the_cap_closes_the_stream_with_what_came_before_delivered() {
    let pieces = vec![
        delta_chunk(json!({"content": "The order "}), None),
        format!("data: {}", "x".repeat(3000)),
        "y".repeat(3000),
    ];
    let server = serve(vec![Reply::Events(pieces)]).await;
    let model = provider(&server, 0, 5_000).event_stream_limits(super::EventStreamLimits {
        max_line_bytes: 4096,
        max_event_bytes: 8192,
    });
    let mut texts = Vec::new();
    let err = collect_stream(model.stream(request()), |d| {
        if let LlmDelta::Text { text } = d {
            texts.push(text.clone());
        }
    })
    .await
    .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Malformed);
    assert!(
        err.message
            .contains("an event-stream line is longer than 4096 bytes"),
        "{err}"
    );
    assert_eq!(texts, ["The order "]);
}

#[test]
fn the_server_address_is_the_endpoints_host_and_the_answer_keeps_its_id_and_model() {
    assert_eq!(host_of("http://127.0.0.1:11434/v1"), Some("127.0.0.1"));
    assert_eq!(host_of("https://api.openai.com/v1"), Some("api.openai.com"));
    assert_eq!(host_of("http://user:pw@[::1]:8080/v1"), Some("::1"));
    assert_eq!(host_of("no scheme"), None);
    let provider = OpenAiCompatible::new("https://api.openai.com/v1");
    assert_eq!(provider.server_address(), Some("api.openai.com"));
    let body = json!({
        "id": "chatcmpl-1", "model": "gpt-4o-2024-08-06",
        "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]
    });
    let response = parse_completion(&body.to_string()).unwrap();
    assert_eq!(response.id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(response.model.as_deref(), Some("gpt-4o-2024-08-06"));
}
