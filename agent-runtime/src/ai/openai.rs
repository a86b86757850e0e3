//! The OpenAI-compatible provider: chat completions with tools and SSE streaming, for OpenAI,
//! Ollama, vLLM, llama.cpp's server and anything else that speaks `/chat/completions`.
//!
//! A thin client on reqwest rather than async-openai (see ARCHITECTURE.md): the request and
//! response shapes we need are small, provider-neutral types are ours anyway, and failure
//! handling (what is retried, what a cut stream means, that keys never reach a message) stays
//! in one readable file.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::{Value, json};

use super::event_stream::{EventStreamLimits, EventStreamParser, ServerSentEvent};
use super::model::{
    EmbeddingRequest, Embeddings, FinishReason, LanguageModel, LlmDelta, LlmError, LlmErrorKind,
    LlmRequest, LlmResponse, ToolCall, Usage, parse_arguments,
};
use super::openai_body::{RenderedTools, chat_body};
use super::retry_wait::{random_draw, server_asked, wait_before_retry};
use crate::instruction::ExecOptions;

/// A provider for any OpenAI-compatible endpoint.
///
/// The API key is read from an environment variable when the provider is built, and only ever
/// sent as the `Authorization` header: it is not in `Debug` output, errors, logs, requests
/// handed to hooks, or checkpoints.
///
/// ```
/// use agent_runtime::ai::OpenAiCompatible;
/// use std::time::Duration;
/// let ollama = OpenAiCompatible::new("http://127.0.0.1:11434/v1").timeout(Duration::from_secs(120));
/// assert!(format!("{ollama:?}").contains("11434"));
/// ```
#[derive(Clone)]
pub struct OpenAiCompatible {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    url: String,
    /// `{base}/embeddings`.
    embeddings_url: String,
    key: Option<Key>,
    retry: ExecOptions,
    strict_tools: bool,
    /// `response_format` as `json_schema` (else `json_object`).
    structured_outputs: bool,
    stream_limits: EventStreamLimits,
    /// Tool lists already rendered for request bodies.
    rendered_tools: RenderedTools,
}

/// An API key and the variable it came from (only the variable's name is ever shown).
struct Key {
    var: String,
    value: String,
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("url", &self.inner.url)
            .field(
                "api_key",
                &self
                    .inner
                    .key
                    .as_ref()
                    .map_or("none".to_string(), |k| format!("<from ${}>", k.var)),
            )
            .field("retry", &self.inner.retry)
            .finish()
    }
}

impl OpenAiCompatible {
    /// A provider for `base_url` (`http://127.0.0.1:11434/v1`, `https://api.openai.com/v1`),
    /// without a key, with the Exec defaults for retries (1 retry, 250 ms backoff doubling) and a
    /// 30 s timeout per attempt.
    pub fn new(base_url: impl Into<String>) -> Self {
        let base = base_url.into();
        let url = format!("{}/chat/completions", base.trim_end_matches('/'));
        let embeddings_url = format!("{}/embeddings", base.trim_end_matches('/'));
        OpenAiCompatible {
            inner: Arc::new(Inner {
                client: reqwest::Client::new(),
                url,
                embeddings_url,
                key: None,
                retry: ExecOptions::DEFAULT,
                strict_tools: false,
                structured_outputs: true,
                stream_limits: EventStreamLimits::DEFAULT,
                rendered_tools: RenderedTools::default(),
            }),
        }
    }

    /// OpenAI itself: `$OPENAI_BASE_URL` (default `https://api.openai.com/v1`, which needs the
    /// `ai-tls` feature) with the key in `$OPENAI_API_KEY`.
    pub fn from_env() -> Self {
        let base = std::env::var("OPENAI_BASE_URL")
            .unwrap_or_else(|_| "https://api.openai.com/v1".to_string());
        OpenAiCompatible::new(base).api_key_env("OPENAI_API_KEY")
    }

    fn with(self, f: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            client: shared.client.clone(),
            url: shared.url.clone(),
            embeddings_url: shared.embeddings_url.clone(),
            key: shared.key.as_ref().map(|k| Key {
                var: k.var.clone(),
                value: k.value.clone(),
            }),
            retry: shared.retry,
            strict_tools: shared.strict_tools,
            structured_outputs: shared.structured_outputs,
            stream_limits: shared.stream_limits,
            rendered_tools: RenderedTools::default(),
        });
        f(&mut inner);
        OpenAiCompatible {
            inner: Arc::new(inner),
        }
    }

    /// Sends the key found in the environment variable `var` (nothing when it is unset or
    /// empty: local servers need none).
    #[must_use]
    pub fn api_key_env(self, var: &str) -> Self {
        let value = std::env::var(var).ok().filter(|v| !v.is_empty());
        self.with(|inner| {
            inner.key = value.map(|value| Key {
                var: var.to_string(),
                value,
            })
        })
    }

    /// Retries (429, 5xx, timeouts, failed connections) and their backoff, and the timeout of
    /// each attempt (for a stream: of each wait for the next piece).
    ///
    /// Retry `n` (from 0) waits a uniformly random time between zero and
    /// `backoff * 2^n` ("full jitter", so agents that failed together do not retry together),
    /// or what the server asked for in `retry-after-ms` or `Retry-After` (seconds or an HTTP
    /// date) if that is longer; never longer than `backoff_cap`.
    #[must_use]
    pub fn retry(self, retry: ExecOptions) -> Self {
        self.with(|inner| inner.retry = retry)
    }

    /// The timeout of each attempt, keeping the retry policy.
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> Self {
        self.with(|inner| inner.retry.timeout = timeout)
    }

    /// Marks every tool `"strict": true` and lists all its properties as required, for
    /// endpoints with structured outputs (OpenAI's strict mode); off by default, since other
    /// servers may refuse the flag. Tool schemas always go out without `$schema` and
    /// non-standard `format`s (see [`provider_schema`](super::provider_schema)).
    #[must_use]
    pub fn strict_tools(self, strict: bool) -> Self {
        self.with(|inner| inner.strict_tools = strict)
    }

    /// How a request's [`response_format`](crate::ai::LlmRequest::response_format) goes out:
    /// as OpenAI's `{"type": "json_schema", ...}` (the default), or, for endpoints without
    /// structured outputs, as `{"type": "json_object"}` (JSON mode; the schema is then only in
    /// the prompt, and the caller's validation is what holds the answer to it).
    #[must_use]
    pub fn structured_outputs(self, supported: bool) -> Self {
        self.with(|inner| inner.structured_outputs = supported)
    }

    /// Caps on a streamed answer's lines and events ([`EventStreamLimits::DEFAULT`] unless
    /// set): a server that sends more without ending them gets its stream closed with a
    /// [`LlmErrorKind::Malformed`] error instead of growing memory.
    #[must_use]
    pub fn event_stream_limits(self, limits: EventStreamLimits) -> Self {
        self.with(|inner| inner.stream_limits = limits)
    }

    /// Whether a key will be sent.
    pub fn has_api_key(&self) -> bool {
        self.inner.key.is_some()
    }
}

impl Inner {
    /// The JSON body of a chat completion request.
    fn body(&self, request: &LlmRequest, stream: bool) -> Vec<u8> {
        chat_body(
            request,
            stream,
            self.strict_tools,
            self.structured_outputs,
            &self.rendered_tools,
        )
    }

    /// Sends the request and returns a response with a success status, retrying what may
    /// succeed on another attempt.
    async fn send(&self, body: &[u8]) -> Result<reqwest::Response, LlmError> {
        self.send_to(&self.url, body).await
    }

    /// [`send`](Inner::send) to another endpoint of the same server.
    async fn send_to(&self, url: &str, body: &[u8]) -> Result<reqwest::Response, LlmError> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut request = self
                .client
                .post(url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_vec());
            if let Some(key) = &self.key {
                request = request.bearer_auth(&key.value);
            }
            let result = match tokio::time::timeout(self.retry.timeout, request.send()).await {
                Err(_) => Err((
                    LlmError::new(
                        LlmErrorKind::Timeout,
                        format!("no response from {url} within {:?}", self.retry.timeout),
                    ),
                    None,
                )),
                Ok(Err(e)) => Err((
                    LlmError::new(
                        LlmErrorKind::Transport,
                        format!("cannot reach {url}: {}", without_url(&e)),
                    ),
                    None,
                )),
                Ok(Ok(response)) if response.status().is_success() => Ok(response),
                Ok(Ok(response)) => Err(self.status_error(url, response).await),
            };
            match result {
                Ok(response) => return Ok(response),
                Err((mut error, retry_after)) => {
                    error.attempts = attempt;
                    if !error.is_retryable() || attempt > self.retry.max_retries {
                        if attempt > 1 {
                            error
                                .message
                                .push_str(&format!(" (after {attempt} attempts)"));
                        }
                        return Err(error);
                    }
                    let wait =
                        wait_before_retry(&self.retry, attempt - 1, retry_after, random_draw());
                    tracing::debug!(url = %url, attempt, ?wait, error = %error, "retrying the model call");
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    async fn status_error(
        &self,
        url: &str,
        response: reqwest::Response,
    ) -> (LlmError, Option<Duration>) {
        let status = response.status();
        let header = |name| response.headers().get(name).and_then(|v| v.to_str().ok());
        let retry_after = server_asked(
            header("retry-after-ms"),
            header(reqwest::header::RETRY_AFTER.as_str()),
            chrono::Utc::now(),
        );
        let body = tokio::time::timeout(self.retry.timeout, response.text())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let kind = match status.as_u16() {
            429 => LlmErrorKind::RateLimited,
            401 | 403 => LlmErrorKind::Auth,
            s if s >= 500 => LlmErrorKind::Server,
            _ => LlmErrorKind::Http,
        };
        let detail = api_message(&body);
        let error = LlmError::new(
            kind,
            format!(
                "HTTP {status} from {url}{}",
                detail.map_or(String::new(), |d| format!(": {d}"))
            ),
        )
        .with_status(status.as_u16());
        (error, retry_after)
    }
}

/// reqwest's errors name the URL, which is ours to show; the message without it.
fn without_url(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text.replace(&format!(" for url ({url})"), "");
    }
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    text
}

/// The `error.message` of an OpenAI-style error body, or the start of the body.
fn api_message(body: &str) -> Option<String> {
    if body.trim().is_empty() {
        return None;
    }
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Some(from_json.unwrap_or_else(|| body.chars().take(200).collect()))
}

fn malformed(what: impl fmt::Display) -> LlmError {
    LlmError::new(LlmErrorKind::Malformed, what.to_string())
}

fn usage_of(value: Option<&Value>) -> Usage {
    let get = |k: &str| {
        value
            .and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let (prompt_tokens, completion_tokens) = (get("prompt_tokens"), get("completion_tokens"));
    let total = get("total_tokens");
    Usage {
        prompt_tokens,
        completion_tokens,
        total_tokens: if total == 0 {
            prompt_tokens + completion_tokens
        } else {
            total
        },
    }
}

/// Reads a (non-streamed) chat completion.
pub(crate) fn parse_completion(body: &str) -> Result<LlmResponse, LlmError> {
    let value: Value = serde_json::from_str(body).map_err(|e| {
        malformed(format!(
            "the answer is not valid JSON ({e}); it starts with {:?}",
            body.chars().take(80).collect::<String>()
        ))
    })?;
    let choice = value
        .pointer("/choices/0")
        .ok_or_else(|| malformed("the answer has no `choices[0]`"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| malformed("the answer's `choices[0]` has no `message`"))?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut tool_calls = Vec::new();
    for (i, call) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .enumerate()
    {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed(format!("tool call {i} has no `function.name`")))?;
        let arguments = match call.pointer("/function/arguments") {
            Some(Value::String(raw)) => parse_arguments(raw),
            Some(other) => other.clone(),
            None => Value::Object(Default::default()),
        };
        tool_calls.push(ToolCall {
            id: call
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            name: name.to_string(),
            arguments,
        });
    }
    let finish_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some(raw) => FinishReason::normalize(raw),
        None if !tool_calls.is_empty() => FinishReason::ToolCalls,
        None => FinishReason::Stop,
    };
    let text_of = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    Ok(LlmResponse {
        text,
        tool_calls,
        finish_reason,
        usage: usage_of(value.get("usage")),
        id: text_of("id"),
        model: text_of("model"),
    })
}

/// An embeddings answer (`{"data": [{"index", "embedding": [...]}], "usage"}`), checked to
/// hold one vector per input.
pub(crate) fn parse_embeddings(body: &str, inputs: usize) -> Result<Embeddings, LlmError> {
    let value: Value = serde_json::from_str(body).map_err(|e| {
        malformed(format!(
            "the embeddings answer is not valid JSON ({e}); it starts with {:?}",
            body.chars().take(80).collect::<String>()
        ))
    })?;
    let data = value
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("the embeddings answer has no `data` list"))?;
    if data.len() != inputs {
        return Err(malformed(format!(
            "the embeddings answer holds {} vector(s) for {inputs} input(s)",
            data.len()
        )));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; inputs];
    for (position, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(position, |i| usize::try_from(i).unwrap_or(usize::MAX));
        let vector = item
            .get("embedding")
            .and_then(Value::as_array)
            .and_then(|numbers| {
                numbers
                    .iter()
                    .map(|n| n.as_f64().map(|f| f as f32))
                    .collect::<Option<Vec<f32>>>()
            })
            .ok_or_else(|| {
                malformed(format!(
                    "`data[{position}].embedding` is not a list of numbers"
                ))
            })?;
        match vectors.get_mut(index) {
            Some(slot @ None) => *slot = Some(vector),
            _ => {
                return Err(malformed(format!(
                    "`data[{position}].index` is {index}: out of range or repeated"
                )));
            }
        }
    }
    Ok(Embeddings {
        vectors: vectors.into_iter().flatten().collect(),
        usage: usage_of(value.get("usage")),
    })
}

/// The host of `url` (`http://127.0.0.1:11434/v1` gives `127.0.0.1`), without user info or
/// port.
pub(crate) fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']')?.0,
        None => authority.split(':').next()?,
    };
    (!host.is_empty()).then_some(host)
}

/// Turns server-sent events into deltas.
#[derive(Default)]
pub(crate) struct SseParser {
    events: EventStreamParser,
    /// Reused between reads.
    dispatched: Vec<ServerSentEvent>,
    finish: Option<FinishReason>,
    usage: Usage,
    done: bool,
    /// The event stream passed a cap: reported once the deltas before it are delivered.
    closed: Option<LlmError>,
}

impl SseParser {
    pub(crate) fn new(limits: EventStreamLimits) -> Self {
        SseParser {
            events: EventStreamParser::new(limits),
            ..SseParser::default()
        }
    }

    /// Feeds bytes; returns the deltas completed by them. `[DONE]` yields the finish.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<LlmDelta>, LlmError> {
        if let Some(error) = self.closed.take() {
            return Err(error);
        }
        let mut dispatched = std::mem::take(&mut self.dispatched);
        let read = self.events.feed(bytes, &mut dispatched);
        let mut out = Vec::new();
        // Events completed before a cap was passed still count.
        for event in dispatched.drain(..) {
            let data = event.data.trim();
            if data == "[DONE]" {
                out.extend(self.finish_delta()?);
                self.done = true;
                continue;
            }
            if self.done {
                continue;
            }
            self.chunk(data, &mut out)?;
        }
        self.dispatched = dispatched;
        if let Err(e) = read {
            let error = malformed(format!("the stream was closed: {e}"));
            if out.is_empty() {
                return Err(error);
            }
            self.closed = Some(error);
        }
        Ok(out)
    }

    fn chunk(&mut self, data: &str, out: &mut Vec<LlmDelta>) -> Result<(), LlmError> {
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            malformed(format!(
                "a streamed chunk is not valid JSON ({e}): {:?}",
                data.chars().take(80).collect::<String>()
            ))
        })?;
        if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
            return Err(LlmError::new(
                LlmErrorKind::Server,
                format!("the stream reported an error: {message}"),
            ));
        }
        if chunk.get("usage").is_some_and(|u| !u.is_null()) {
            self.usage = usage_of(chunk.get("usage"));
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(text) = choice.pointer("/delta/content").and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push(LlmDelta::Text {
                text: text.to_string(),
            });
        }
        if let Some(calls) = choice
            .pointer("/delta/tool_calls")
            .and_then(Value::as_array)
        {
            for (position, call) in calls.iter().enumerate() {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .map_or(position, |i| i as usize);
                out.push(LlmDelta::ToolCall {
                    index,
                    id: call.get("id").and_then(Value::as_str).map(str::to_string),
                    name: call
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    arguments: call
                        .pointer("/function/arguments")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                });
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(FinishReason::normalize(reason));
        }
        Ok(())
    }

    fn finish_delta(&mut self) -> Result<Option<LlmDelta>, LlmError> {
        if self.done {
            return Ok(None);
        }
        let reason = self
            .finish
            .ok_or_else(|| malformed("the stream ended (`[DONE]`) before the answer finished"))?;
        Ok(Some(LlmDelta::Finish {
            reason,
            usage: self.usage,
        }))
    }

    /// The error that closed the stream, once the deltas before it were taken.
    pub(crate) fn take_closed(&mut self) -> Option<LlmError> {
        self.closed.take()
    }

    /// The connection closed: the finish if the answer had finished, else a cut-stream error.
    pub(crate) fn end(&mut self) -> Result<Option<LlmDelta>, LlmError> {
        if let Some(error) = self.closed.take() {
            return Err(error);
        }
        if self.done {
            return Ok(None);
        }
        if self.finish.is_none() {
            return Err(malformed(
                "the stream was cut before the answer finished (no finish reason, no `[DONE]`)",
            ));
        }
        let delta = self.finish_delta();
        self.done = true;
        delta
    }
}

impl LanguageModel for OpenAiCompatible {
    fn name(&self) -> &str {
        "openai-compatible"
    }

    fn server_address(&self) -> Option<&str> {
        host_of(&self.inner.url)
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'static, Result<LlmResponse, LlmError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let body = inner.body(&request, false);
            let response = inner.send(&body).await?;
            let text = match tokio::time::timeout(inner.retry.timeout, response.text()).await {
                Err(_) => {
                    return Err(LlmError::new(
                        LlmErrorKind::Timeout,
                        format!(
                            "the answer from {} did not arrive within {:?}",
                            inner.url, inner.retry.timeout
                        ),
                    ));
                }
                Ok(Err(e)) => {
                    return Err(malformed(format!(
                        "the answer from {} broke off: {}",
                        inner.url,
                        without_url(&e)
                    )));
                }
                Ok(Ok(text)) => text,
            };
            parse_completion(&text)
        })
    }

    /// `POST {base}/embeddings` with `{"model", "input": [...]}`; the vectors come back in the
    /// order of the inputs (by each item's `index` when the server gives it).
    fn embed(&self, request: EmbeddingRequest) -> BoxFuture<'static, Result<Embeddings, LlmError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let body = json!({"model": request.model, "input": request.inputs}).to_string();
            let url = inner.embeddings_url.clone();
            let response = inner.send_to(&url, body.as_bytes()).await?;
            let text = match tokio::time::timeout(inner.retry.timeout, response.text()).await {
                Err(_) => {
                    return Err(LlmError::new(
                        LlmErrorKind::Timeout,
                        format!(
                            "the embeddings from {url} did not arrive within {:?}",
                            inner.retry.timeout
                        ),
                    ));
                }
                Ok(Err(e)) => {
                    return Err(malformed(format!(
                        "the embeddings from {url} broke off: {}",
                        without_url(&e)
                    )));
                }
                Ok(Ok(text)) => text,
            };
            parse_embeddings(&text, request.inputs.len())
        })
    }

    fn stream(&self, request: LlmRequest) -> BoxStream<'static, Result<LlmDelta, LlmError>> {
        let inner = self.inner.clone();
        enum State {
            Start(Arc<Inner>, Box<LlmRequest>),
            Reading {
                inner: Arc<Inner>,
                body: BoxStream<'static, reqwest::Result<Vec<u8>>>,
                parser: Box<SseParser>,
                queue: VecDeque<LlmDelta>,
            },
            Done,
        }
        let start = State::Start(inner, Box::new(request));
        stream::unfold(start, |state| async move {
            let mut state = state;
            loop {
                match state {
                    State::Done => return None,
                    State::Start(inner, request) => {
                        let body = inner.body(&request, true);
                        match inner.send(&body).await {
                            Err(e) => return Some((Err(e), State::Done)),
                            Ok(response) => {
                                let parser = Box::new(SseParser::new(inner.stream_limits));
                                state = State::Reading {
                                    inner,
                                    body: response
                                        .bytes_stream()
                                        .map(|r| r.map(|b| b.to_vec()))
                                        .boxed(),
                                    parser,
                                    queue: VecDeque::new(),
                                };
                            }
                        }
                    }
                    State::Reading {
                        inner,
                        mut body,
                        mut parser,
                        mut queue,
                    } => {
                        if let Some(delta) = queue.pop_front() {
                            return Some((
                                Ok(delta),
                                State::Reading {
                                    inner,
                                    body,
                                    parser,
                                    queue,
                                },
                            ));
                        }
                        if let Some(error) = parser.take_closed() {
                            return Some((Err(error), State::Done));
                        }
                        if parser.done {
                            // `[DONE]` ends the answer even if the server keeps the connection.
                            return None;
                        }
                        let next = tokio::time::timeout(inner.retry.timeout, body.next()).await;
                        let fed = match next {
                            Err(_) => Err(LlmError::new(
                                LlmErrorKind::Timeout,
                                format!(
                                    "the stream from {} stalled: nothing for {:?}",
                                    inner.url, inner.retry.timeout
                                ),
                            )),
                            Ok(Some(Ok(chunk))) => parser.feed(&chunk),
                            Ok(Some(Err(e))) => Err(malformed(format!(
                                "the stream from {} broke off: {}",
                                inner.url,
                                without_url(&e)
                            ))),
                            Ok(None) => match parser.end() {
                                Ok(Some(finish)) => return Some((Ok(finish), State::Done)),
                                Ok(None) => return None,
                                Err(e) => Err(e),
                            },
                        };
                        match fed {
                            Err(e) => return Some((Err(e), State::Done)),
                            Ok(deltas) => queue.extend(deltas),
                        }
                        state = State::Reading {
                            inner,
                            body,
                            parser,
                            queue,
                        };
                    }
                }
            }
        })
        .boxed()
    }
}
