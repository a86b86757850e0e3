//! Signals out over HTTP: a [`Transport`] that POSTs every emitted signal to an endpoint.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;

use crate::ai::retry_wait::{random_draw, server_asked, wait_before_retry};
use crate::instruction::ExecOptions;
use crate::server::{AgentRef, Origin, Transport, TransportError};
use crate::signal::{ContentMode, Signal, to_binary};

use super::ingress::STRUCTURED;

/// The type of the signal an [`HttpSink`] sends after the last try of a delivery failed:
/// data `{"endpoint", "signal_id", "signal_type", "attempts", "error"}`.
pub const DELIVERY_FAILED: &str = "stratagem.delivery.failed";

/// Delivers the signals an agent emits to an HTTP endpoint, by the CloudEvents HTTP binding:
/// in order, one request each, with a timeout per attempt and retries with exponential
/// backoff and full jitter (honouring `Retry-After`) on a connection failure, a timeout, 429
/// or 5xx. After the last try a [`DELIVERY_FAILED`] signal goes to the agent named by
/// [`report_to`](HttpSink::report_to), if any, and the delivery is dropped. Any 2xx answer is
/// a delivery.
///
/// `publish` never blocks the agent: signals wait in a bounded queue
/// ([`queue_capacity`](HttpSink::queue_capacity)); a full queue is a transport error of the
/// emitting agent, not a silent drop. Use it inside a tokio runtime.
#[derive(Clone)]
pub struct HttpSink {
    inner: Inner,
    /// Made on the first publish, with the worker that drains it.
    queue: Arc<OnceLock<mpsc::Sender<Signal>>>,
}

#[derive(Clone)]
struct Inner {
    endpoint: String,
    mode: ContentMode,
    retry: ExecOptions,
    token: Option<String>,
    report_to: Option<AgentRef>,
    queue_capacity: usize,
}

impl std::fmt::Debug for HttpSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSink")
            .field("endpoint", &self.inner.endpoint)
            .field("mode", &self.inner.mode)
            .field("retry", &self.inner.retry)
            .finish_non_exhaustive()
    }
}

impl HttpSink {
    /// How many signals may wait for delivery by default.
    pub const DEFAULT_QUEUE_CAPACITY: usize = 1_024;

    /// A sink to `endpoint` in structured mode, with 10 s per attempt and 3 retries from
    /// 200 ms, capped at 10 s.
    pub fn new(endpoint: impl Into<String>) -> Self {
        HttpSink {
            inner: Inner {
                endpoint: endpoint.into(),
                mode: ContentMode::Structured,
                retry: ExecOptions {
                    timeout: Duration::from_secs(10),
                    max_retries: 3,
                    backoff: Duration::from_millis(200),
                    backoff_cap: Duration::from_secs(10),
                },
                token: None,
                report_to: None,
                queue_capacity: Self::DEFAULT_QUEUE_CAPACITY,
            },
            queue: Arc::default(),
        }
    }

    /// A changed configuration: a new sink, with its own queue.
    fn configure(mut self, change: impl FnOnce(&mut Inner)) -> Self {
        change(&mut self.inner);
        self.queue = Arc::default();
        self
    }

    /// Sends in this content mode.
    #[must_use]
    pub fn mode(self, mode: ContentMode) -> Self {
        self.configure(|i| i.mode = mode)
    }

    /// The timeout per attempt, the retries and their backoff.
    #[must_use]
    pub fn retry(self, retry: ExecOptions) -> Self {
        self.configure(|i| i.retry = retry)
    }

    /// Sends `Authorization: Bearer {token}`.
    #[must_use]
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        let token = token.into();
        self.configure(|i| i.token = Some(token))
    }

    /// Where [`DELIVERY_FAILED`] signals go (usually the emitting agent itself).
    #[must_use]
    pub fn report_to(self, agent: &AgentRef) -> Self {
        let agent = agent.clone();
        self.configure(|i| i.report_to = Some(agent))
    }

    /// How many signals may wait for delivery.
    #[must_use]
    pub fn queue_capacity(self, capacity: usize) -> Self {
        self.configure(|i| i.queue_capacity = capacity.max(1))
    }

    fn queue(&self) -> &mpsc::Sender<Signal> {
        self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(self.inner.queue_capacity);
            tokio::spawn(deliver_all(Arc::new(self.inner.clone()), rx));
            tx
        })
    }
}

impl Transport for HttpSink {
    fn name(&self) -> &str {
        &self.inner.endpoint
    }

    fn publish(&self, _origin: &Origin<'_>, signal: &Signal) -> Result<(), TransportError> {
        self.queue().try_send(signal.clone()).map_err(|_| {
            TransportError::new(format!(
                "the HTTP sink to `{}` has {} signals waiting; the signal was not sent: the endpoint is slow or down",
                self.inner.endpoint, self.inner.queue_capacity
            ))
        })
    }
}

async fn deliver_all(inner: Arc<Inner>, mut rx: mpsc::Receiver<Signal>) {
    let client = reqwest::Client::new();
    while let Some(signal) = rx.recv().await {
        let (attempts, error) = match deliver(&client, &inner, &signal).await {
            Ok(()) => continue,
            Err(failure) => failure,
        };
        tracing::warn!(endpoint = %inner.endpoint, signal_id = %signal.id, attempts, %error, "delivery failed");
        if let Some(agent) = &inner.report_to {
            let report = Signal::new(
                DELIVERY_FAILED,
                json!({
                    "endpoint": inner.endpoint,
                    "signal_id": signal.id,
                    "signal_type": signal.signal_type,
                    "attempts": attempts,
                    "error": error,
                }),
            );
            let _ = agent.cast(report);
        }
    }
}

/// One signal, with its retries: `Err((attempts, last error))` after the last.
async fn deliver(
    client: &reqwest::Client,
    inner: &Inner,
    signal: &Signal,
) -> Result<(), (u32, String)> {
    let mut attempt = 0;
    loop {
        let (error, retryable, asked) = match send(client, inner, signal).await {
            Ok(response) if response.status().is_success() => return Ok(()),
            Ok(response) => {
                let status = response.status();
                let header = |name: &str| {
                    response
                        .headers()
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string)
                };
                let asked = server_asked(
                    header("retry-after-ms").as_deref(),
                    header("retry-after").as_deref(),
                    chrono::Utc::now(),
                );
                let retryable = status.as_u16() == 429 || status.is_server_error();
                (format!("the endpoint answered {status}"), retryable, asked)
            }
            Err(e) if e.is_timeout() => (
                format!("no answer within {:?}", inner.retry.timeout),
                true,
                None,
            ),
            Err(e) => (format!("the request failed: {e}"), true, None),
        };
        attempt += 1;
        if !retryable || attempt > inner.retry.max_retries {
            return Err((attempt, error));
        }
        let wait = wait_before_retry(&inner.retry, attempt - 1, asked, random_draw());
        tokio::time::sleep(wait).await;
    }
}

async fn send(
    client: &reqwest::Client,
    inner: &Inner,
    signal: &Signal,
) -> Result<reqwest::Response, reqwest::Error> {
    let mut request = client.post(&inner.endpoint).timeout(inner.retry.timeout);
    if let Some(token) = &inner.token {
        request = request.bearer_auth(token);
    }
    request = match inner.mode {
        ContentMode::Structured => request
            .header("content-type", STRUCTURED)
            .body(serde_json::to_vec(signal).unwrap_or_default()),
        ContentMode::Binary => {
            let (headers, body) = to_binary(signal);
            for (name, value) in headers {
                request = request.header(name, value);
            }
            request.body(body)
        }
    };
    request.send().await
}
