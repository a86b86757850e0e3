//! The HTTP side: the page, the JSON API, the live stream, and who may use them.

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use agent_runtime::Signal;
use agent_runtime::server::AgentRef;
use axum::Json;
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use crate::assets;
use crate::feed::Feed;

/// How long the API waits for a busy agent to answer a snapshot.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// Who may use the API, and for what.
pub(crate) struct Access {
    pub(crate) token: Option<String>,
    pub(crate) allow_signals: bool,
}

#[derive(Clone)]
struct App {
    feed: Arc<Feed>,
    access: Arc<Access>,
    stopping: watch::Receiver<bool>,
}

pub(crate) fn router(feed: Arc<Feed>, access: Access, stopping: watch::Receiver<bool>) -> Router {
    let app = App {
        feed,
        access: Arc::new(access),
        stopping,
    };
    let api = Router::new()
        .route("/api/agents", get(agents))
        .route("/api/agents/{n}", get(agent))
        .route("/api/agents/{n}/events", get(events))
        .route("/api/agents/{n}/signals", post(send_signal))
        .route("/api/stream", get(stream))
        .route_layer(middleware::from_fn_with_state(app.clone(), authorize));
    Router::new()
        .route("/", get(|| async { assets::page() }))
        .route("/inspector.js", get(|| async { assets::script() }))
        .route("/inspector.css", get(|| async { assets::style() }))
        .merge(api)
        .layer(middleware::from_fn_with_state(app.clone(), check_host))
        .with_state(app)
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

/// Without a token, only requests that name a loopback host: a page elsewhere that rebinds
/// its own domain to 127.0.0.1 sends its domain as `Host` and is refused.
async fn check_host(State(app): State<App>, request: Request, next: Next) -> Response {
    if app.access.token.is_none() {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !is_loopback_host(host) {
            return error(
                StatusCode::FORBIDDEN,
                format!(
                    "the inspector answers loopback hosts only, not `{host}`; open it as \
                     127.0.0.1 or localhost, or give it a token"
                ),
            );
        }
    }
    next.run(request).await
}

fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

async fn authorize(State(app): State<App>, request: Request, next: Next) -> Response {
    if let Some(token) = &app.access.token {
        let given = bearer(request.headers())
            .map(str::to_string)
            .or_else(|| request.uri().query().and_then(query_token));
        if !given.is_some_and(|given| same_secret(&given, token)) {
            return error(
                StatusCode::UNAUTHORIZED,
                "this inspector needs its token: `Authorization: Bearer <token>` or `?token=<token>`",
            );
        }
    }
    next.run(request).await
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
}

/// The `token` parameter of a query string, percent-decoded.
fn query_token(query: &str) -> Option<String> {
    let raw = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))?;
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Compares without stopping at the first difference, so the time taken does not tell an
/// attacker how much of a guess was right.
fn same_secret(given: &str, secret: &str) -> bool {
    let (a, b) = (given.as_bytes(), secret.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn watched(app: &App, n: usize) -> Option<&AgentRef> {
    app.feed.agents.get(n).map(|w| &w.handle)
}

fn missing(app: &App, n: usize) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!(
            "no agent `{n}`: the inspector watches {} (numbered from 0)",
            app.feed.agents.len()
        ),
    )
}

/// The agent's snapshot as JSON, or why there is none.
async fn snapshot(handle: &AgentRef) -> Result<Value, String> {
    match tokio::time::timeout(ANSWER_WITHIN, handle.snapshot()).await {
        Ok(Ok(snapshot)) => Ok(serde_json::to_value(snapshot).unwrap_or(Value::Null)),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("busy: no answer within {ANSWER_WITHIN:?}")),
    }
}

async fn agents(State(app): State<App>) -> Response {
    let mut list = Vec::with_capacity(app.feed.agents.len());
    for (index, watched) in app.feed.agents.iter().enumerate() {
        let handle = &watched.handle;
        let status = match snapshot(handle).await {
            Ok(snapshot) => snapshot["status"].clone(),
            Err(_) if handle.is_stopped() => "stopped".into(),
            Err(_) => "unknown".into(),
        };
        list.push(json!({
            "index": index,
            "name": handle.name(),
            "id": handle.id(),
            "kind": watched.shape["kind"],
            "status": status,
            "stopped": handle.is_stopped(),
            "queued": handle.queued(),
        }));
    }
    Json(json!({ "agents": list, "allow_signals": app.access.allow_signals })).into_response()
}

async fn agent(State(app): State<App>, Path(n): Path<usize>) -> Response {
    let Some(handle) = watched(&app, n) else {
        return missing(&app, n);
    };
    let (snapshot, progress) = match snapshot(handle).await {
        Ok(snapshot) => {
            let progress = handle
                .progress()
                .await
                .ok()
                .and_then(|p| serde_json::to_value(p).ok())
                .unwrap_or(Value::Null);
            (snapshot, progress)
        }
        Err(why) => (json!({ "unavailable": why }), Value::Null),
    };
    let cut = app.feed.truncation;
    Json(json!({
        "index": n,
        "name": handle.name(),
        "id": handle.id(),
        "stopped": handle.is_stopped(),
        "queued": handle.queued(),
        "snapshot": cut.apply(&snapshot),
        "shape": app.feed.agents[n].shape,
        "progress": cut.apply(&progress),
    }))
    .into_response()
}

async fn events(State(app): State<App>, Path(n): Path<usize>) -> Response {
    if watched(&app, n).is_none() {
        return missing(&app, n);
    }
    // Each event is already JSON: join them instead of parsing them back.
    let recent = app.feed.agents[n].recent();
    let mut body = String::from("{\"events\":[");
    for (i, event) in recent.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(event);
    }
    body.push_str("]}");
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A signal from the page.
#[derive(Deserialize)]
struct Outgoing {
    #[serde(rename = "type")]
    signal_type: String,
    #[serde(default)]
    data: Value,
}

async fn send_signal(
    State(app): State<App>,
    Path(n): Path<usize>,
    Json(outgoing): Json<Outgoing>,
) -> Response {
    if !app.access.allow_signals {
        return error(
            StatusCode::FORBIDDEN,
            "this inspector is read-only; start it with `Inspector::allow_signals(true)` to send signals",
        );
    }
    let Some(handle) = watched(&app, n) else {
        return missing(&app, n);
    };
    let signal =
        Signal::new(outgoing.signal_type, outgoing.data).with_source("/stratagem/inspector");
    match handle.call(signal).await {
        Ok(outcome) => {
            let outcome = serde_json::to_value(outcome).unwrap_or(Value::Null);
            Json(app.feed.truncation.apply(&outcome)).into_response()
        }
        Err(why) => error(StatusCode::UNPROCESSABLE_ENTITY, why.to_string()),
    }
}

async fn stream(State(app): State<App>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let events = futures::stream::unfold(app.feed.live.subscribe(), |mut live| async move {
        let event = match live.recv().await {
            Ok(text) => Event::default().event("step").data(&*text),
            Err(RecvError::Lagged(missed)) => Event::default()
                .event("lagged")
                .data(json!({ "missed": missed }).to_string()),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok(event), live))
    });
    // The stream ends when the inspector stops, so its graceful shutdown can finish.
    let mut stopping = app.stopping.clone();
    let stopped = async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    Sse::new(events.take_until(stopped)).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_recognised() {
        for host in [
            "localhost",
            "localhost:7878",
            "127.0.0.1:80",
            "[::1]:9",
            "LOCALHOST",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "",
            "evil.example:7878",
            "10.0.0.1",
            "127.0.0.1.evil.example",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn tokens_are_read_from_the_query_and_compared_whole() {
        assert_eq!(query_token("a=1&token=s%20t+x").as_deref(), Some("s t x"));
        assert_eq!(query_token("a=1"), None);
        assert_eq!(query_token("token=%zz"), None);
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
    }
}
