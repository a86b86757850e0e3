//! Signals in over HTTP, by the CloudEvents HTTP protocol binding.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::quote::ByteSize;
use crate::server::{AgentRef, CallOutcome, ServerError};
use crate::signal::{Signal, SignalError, TraceContext, from_binary};

/// The media type of a CloudEvent in structured mode.
pub const STRUCTURED: &str = "application/cloudevents+json";
/// The media type of a batch of CloudEvents.
pub const BATCH: &str = "application/cloudevents-batch+json";
/// The type of the event `call` mode answers with when the signal was handled.
pub const CALL_COMPLETED: &str = "stratagem.call.completed";
/// The type of the event `call` mode answers with when handling it reported errors.
pub const CALL_FAILED: &str = "stratagem.call.failed";

/// An HTTP endpoint that delivers CloudEvents to agents, by the CloudEvents HTTP binding.
///
/// `POST /agents/{id}` takes one signal in structured mode (`application/cloudevents+json`),
/// in binary mode (`ce-*` headers, the body as data) or a batch
/// (`application/cloudevents-batch+json`). The answers:
///
/// | status | when |
/// |---|---|
/// | 202 | every signal entered the agent's mailbox |
/// | 400 | a signal breaks a CloudEvents rule: `{"error", "attribute"}` (and `index` in a batch) |
/// | 401 | a bearer token is configured and the request lacks it |
/// | 404 | no agent with that id is registered |
/// | 413 | the body is larger than [`max_body_bytes`](HttpIngress::max_body_bytes) |
/// | 429 | the mailbox is full; `Retry-After` says when to try again |
/// | 503 | the agent has stopped |
///
/// A batch is checked whole before any of it is delivered: one bad event refuses all of them.
/// If the mailbox fills part way through, the answer is 429 with `{"accepted": n}`: the first
/// `n` events went in, in order, and the sender retries the rest. Nothing is dropped silently.
///
/// With [`call_mode`](HttpIngress::call_mode), `POST /agents/{id}/call` takes one signal,
/// waits until the agent has handled it and answers 200 with a CloudEvent in structured mode:
/// type [`CALL_COMPLETED`] (or [`CALL_FAILED`] when the agent reported errors) whose data holds
/// the signals it emitted (`emitted`) and its errors (`errors`); 504 when it takes longer than
/// the server's call timeout.
#[derive(Clone)]
pub struct HttpIngress {
    agents: Arc<RwLock<HashMap<String, AgentRef>>>,
    max_body_bytes: usize,
    token: Option<Arc<str>>,
    call_mode: bool,
    address: SocketAddr,
}

impl Default for HttpIngress {
    fn default() -> Self {
        HttpIngress::new()
    }
}

impl std::fmt::Debug for HttpIngress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpIngress")
            .field("max_body_bytes", &self.max_body_bytes)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("call_mode", &self.call_mode)
            .field("address", &self.address)
            .finish()
    }
}

impl HttpIngress {
    /// The largest body taken by default: 2 MB, as the agent server's largest signal.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 2_000_000;
    /// The address [`serve`](HttpIngress::serve) binds by default: loopback, port 8080.
    pub const DEFAULT_ADDRESS: SocketAddr =
        SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8080);

    /// An ingress with no agents, a 2 MB body limit, no token, no call mode, on loopback.
    pub fn new() -> Self {
        HttpIngress {
            agents: Arc::default(),
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            token: None,
            call_mode: false,
            address: Self::DEFAULT_ADDRESS,
        }
    }

    /// Makes an agent reachable at `/agents/{its id}`.
    #[must_use]
    pub fn agent(self, agent: &AgentRef) -> Self {
        self.add(agent);
        self
    }

    /// Makes an agent reachable at `/agents/{its id}` on a running ingress.
    pub fn add(&self, agent: &AgentRef) {
        self.agents
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(agent.id().to_string(), agent.clone());
    }

    /// Makes the agent with this id unreachable; whether it was reachable.
    pub fn remove(&self, id: &str) -> bool {
        self.agents
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
            .is_some()
    }

    /// The largest request body taken (413 above it).
    #[must_use]
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// Requires `Authorization: Bearer {token}` on every request (401 without it).
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into().into());
        self
    }

    /// Opens `POST /agents/{id}/call`, which waits for the agent to handle the signal and
    /// answers with the outcome as a CloudEvent.
    #[must_use]
    pub fn call_mode(mut self, on: bool) -> Self {
        self.call_mode = on;
        self
    }

    /// The address [`serve`](HttpIngress::serve) binds ([`DEFAULT_ADDRESS`](Self::DEFAULT_ADDRESS)
    /// unless set: only this machine can reach it). Port 0 picks a free port.
    #[must_use]
    pub fn address(mut self, address: SocketAddr) -> Self {
        self.address = address;
        self
    }

    /// The routes, to serve yourself or to merge into your own `axum` router.
    pub fn router(&self) -> Router {
        let mut router = Router::new().route("/agents/{id}", post(deliver));
        if self.call_mode {
            router = router.route("/agents/{id}/call", post(call));
        }
        router.with_state(self.clone())
    }

    /// Binds the address and serves in a task of its own until the returned handle is
    /// stopped or dropped.
    pub async fn serve(&self) -> std::io::Result<HttpServer> {
        let listener = tokio::net::TcpListener::bind(self.address).await?;
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let router = self.router();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(error) = axum::serve(listener, router)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::warn!(%error, "the HTTP ingress stopped");
            }
        });
        Ok(HttpServer {
            address,
            stop: Some(stop),
            task,
        })
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|given| constant_time_eq(given.as_bytes(), token.as_bytes()))
    }

    fn find(&self, id: &str) -> Option<AgentRef> {
        self.agents
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// The checks every request goes through (token, agent, size, CloudEvents rules): the
    /// agent and the request's signals, in order, or the answer that refuses them.
    async fn admit(
        &self,
        id: &str,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<(AgentRef, Vec<Signal>), Box<Response>> {
        if !self.authorized(headers) {
            let mut response = problem(
                StatusCode::UNAUTHORIZED,
                "a bearer token is required: send `Authorization: Bearer <token>`",
                None,
            );
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return Err(Box::new(response));
        }
        let Some(agent) = self.find(id) else {
            return Err(Box::new(problem(
                StatusCode::NOT_FOUND,
                &format!("no agent `{}` is reachable here", crate::quote::clip(id)),
                None,
            )));
        };
        let too_large = || {
            Box::new(problem(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "the body is larger than {}; send less, or raise `HttpIngress::max_body_bytes`",
                    ByteSize(self.max_body_bytes)
                ),
                None,
            ))
        };
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > self.max_body_bytes) {
            return Err(too_large());
        }
        let bytes = axum::body::to_bytes(body, self.max_body_bytes)
            .await
            .map_err(|_| too_large())?;
        Ok((agent, read_signals(headers, &bytes)?))
    }
}

/// A running [`HttpIngress`]: stops serving when stopped or dropped.
#[derive(Debug)]
pub struct HttpServer {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// The address it listens on (with the port picked when port 0 was asked for).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting, lets requests in progress finish, and waits for that.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// How a request carries its signals.
enum Mode {
    Structured,
    Batch,
    Binary,
}

fn mode(headers: &HeaderMap) -> Mode {
    let essence = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    match essence.as_deref() {
        Some(STRUCTURED) => Mode::Structured,
        Some(BATCH) => Mode::Batch,
        _ => Mode::Binary,
    }
}

/// The signals of a request, in order; the first bad one as a 400.
fn read_signals(headers: &HeaderMap, body: &[u8]) -> Result<Vec<Signal>, Box<Response>> {
    match mode(headers) {
        Mode::Structured => {
            let value: Value = serde_json::from_slice(body).map_err(|e| {
                Box::new(problem(
                    StatusCode::BAD_REQUEST,
                    &format!("the body is not JSON: {e}"),
                    Some(("specversion", None)),
                ))
            })?;
            Signal::from_json(value)
                .map(|s| vec![s])
                .map_err(|e| Box::new(invalid(&e, None)))
        }
        Mode::Batch => {
            let values: Vec<Value> = serde_json::from_slice(body).map_err(|e| {
                Box::new(problem(
                    StatusCode::BAD_REQUEST,
                    &format!("a batch is a JSON array of CloudEvents: {e}"),
                    Some(("specversion", None)),
                ))
            })?;
            values
                .into_iter()
                .enumerate()
                .map(|(i, v)| Signal::from_json(v).map_err(|e| Box::new(invalid(&e, Some(i)))))
                .collect()
        }
        Mode::Binary => {
            let pairs = headers
                .iter()
                .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)));
            from_binary(pairs, body)
                .map(|s| vec![s])
                .map_err(|e| Box::new(invalid(&e, None)))
        }
    }
}

async fn deliver(
    State(ingress): State<HttpIngress>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (agent, signals) = match ingress.admit(&id, &headers, body).await {
        Ok(admitted) => admitted,
        Err(response) => return *response,
    };
    let total = signals.len();
    for (accepted, signal) in signals.into_iter().enumerate() {
        if let Err(error) = agent.cast(signal) {
            let mut response = refused(&error);
            if total > 1 && response.status() == StatusCode::TOO_MANY_REQUESTS {
                response = with_retry_after(
                    (
                        StatusCode::TOO_MANY_REQUESTS,
                        axum::Json(json!({
                            "error": error.to_string(),
                            "accepted": accepted,
                        })),
                    )
                        .into_response(),
                );
            }
            return response;
        }
    }
    StatusCode::ACCEPTED.into_response()
}

async fn call(
    State(ingress): State<HttpIngress>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if matches!(mode(&headers), Mode::Batch) {
        return problem(
            StatusCode::BAD_REQUEST,
            "call mode takes one signal, not a batch",
            None,
        );
    }
    let (agent, mut signals) = match ingress.admit(&id, &headers, body).await {
        Ok(admitted) => admitted,
        Err(response) => return *response,
    };
    let signal = signals.remove(0);
    let (request_id, request_source) = (signal.id.clone(), signal.source.clone());
    let context = TraceContext::of(&signal);
    match agent.call(signal).await {
        Ok(outcome) => {
            let answer = outcome_event(
                &id,
                &request_id,
                &request_source,
                &outcome,
                context.as_ref(),
            );
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, STRUCTURED)],
                serde_json::to_vec(&answer).unwrap_or_default(),
            )
                .into_response()
        }
        Err(error) => refused(&error),
    }
}

/// The CloudEvent that answers a call: what the agent emitted and the errors it reported, in
/// the trace of the request when it carried one (the emitted signals as they were published,
/// with that context).
fn outcome_event(
    agent: &str,
    request_id: &str,
    request_source: &str,
    outcome: &CallOutcome,
    context: Option<&TraceContext>,
) -> Signal {
    let errors: Vec<String> = outcome.errors().map(ToString::to_string).collect();
    let emitted: Vec<Signal> = outcome
        .emitted()
        .map(|signal| match context {
            Some(context) => context.apply(signal.clone()),
            None => signal.clone(),
        })
        .collect();
    let signal_type = if errors.is_empty() {
        CALL_COMPLETED
    } else {
        CALL_FAILED
    };
    let answer = Signal::with_id(
        format!("{request_id}/outcome"),
        signal_type,
        json!({"emitted": emitted, "errors": errors, "status": outcome.snapshot.status}),
    )
    .with_source(format!("/agents/{agent}"))
    .with_subject(format!("{request_source}#{request_id}"));
    match context {
        Some(context) => context.apply(answer),
        None => answer,
    }
}

fn invalid(error: &SignalError, index: Option<usize>) -> Response {
    problem(
        StatusCode::BAD_REQUEST,
        &error.to_string(),
        Some((&error.attribute, index)),
    )
}

/// The answer to a delivery the agent server refused.
fn refused(error: &ServerError) -> Response {
    let status = match error {
        ServerError::MailboxFull { .. } => StatusCode::TOO_MANY_REQUESTS,
        ServerError::InvalidSignal { error, .. } => return invalid(error, None),
        ServerError::SignalTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        ServerError::Stopped { .. } => StatusCode::SERVICE_UNAVAILABLE,
        ServerError::CallTimeout { .. } => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let response = problem(status, &error.to_string(), None);
    if status == StatusCode::TOO_MANY_REQUESTS {
        with_retry_after(response)
    } else {
        response
    }
}

/// How long a sender refused for a full mailbox should wait.
const RETRY_AFTER: Duration = Duration::from_secs(1);

fn with_retry_after(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from(RETRY_AFTER.as_secs()),
    );
    response
}

/// A JSON error body: `{"error"}`, plus `attribute` (and `index`) for a bad signal.
fn problem(
    status: StatusCode,
    message: &str,
    attribute: Option<(&str, Option<usize>)>,
) -> Response {
    let mut body = json!({ "error": message });
    if let Some((attribute, index)) = attribute {
        body["attribute"] = json!(attribute);
        if let Some(index) = index {
            body["index"] = json!(index);
        }
    }
    (status, axum::Json(body)).into_response()
}

/// Compares a token without stopping at the first difference (no timing hint of its prefix).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
