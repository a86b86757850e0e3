//! A scripted model for tests and offline examples: it answers from a script instead of a
//! network, and drives the real strategies, runner, tools and server.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::Value;

use crate::journal::StateHash;

use super::cassette::{Interaction, RecordedReply, first_difference, replay_deltas};
use super::model::{
    EmbeddingRequest, Embeddings, LanguageModel, LlmDelta, LlmError, LlmErrorKind, LlmRequest,
    LlmResponse, ToolCall, Usage, deltas_of,
};

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Answer(String),
    Calls {
        text: String,
        calls: Vec<(String, Value)>,
    },
    Fail(String),
    /// A cassette's call: the request must equal the recorded one.
    Recorded(Box<Interaction>),
}

#[derive(Debug, Clone, PartialEq)]
struct Turn {
    /// The user prompt the request must end with (set by `user` for the turn after it).
    expect: Option<String>,
    reply: Reply,
}

#[derive(Debug, Default)]
struct Progress {
    next: usize,
    requests: Vec<LlmRequest>,
    /// Recorded turns after `next` already answered (a concurrent request came early).
    taken: BTreeSet<usize>,
}

/// A model that answers from a script.
///
/// The script is a list of turns, one per model call: `user "..."` states the prompt the next
/// request must carry (its last user message); `call tool {json}` answers with a tool call
/// (`also tool {json}` adds another call to the same turn, `say "..."` the text that goes with
/// it); `answer "..."` answers with text; `fail "..."` makes the call fail. Strings are JSON
/// strings, so `\n` works. A request that does not match the script, or one past its end, fails
/// with [`LlmErrorKind::Script`] saying what was expected.
///
/// `when "text" answer "..."` (or `fail "..."`) is a rule instead of a turn: any request whose
/// last user message contains `text` gets that reply, as often as it comes and in whatever
/// order. Rules are checked first (the first matching one wins); they script the concurrent
/// calls of a search, whose arrival order is not fixed.
///
/// ```
/// use agent_runtime::ai::ScriptedModel;
/// let model = ScriptedModel::parse(r#"
///     user "Where is order 42?"
///     say "Let me look it up."
///     call lookup_order {"id": 42}
///     answer "Order 42 shipped yesterday."
/// "#).unwrap();
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ScriptedModel {
    turns: Arc<Vec<Turn>>,
    /// `when` rules: a request whose last user message contains the text gets the reply,
    /// whatever the order of calls (concurrent calls arrive in any order).
    rules: Arc<Vec<(String, Reply)>>,
    progress: Arc<Mutex<Progress>>,
    pending_expect: Option<String>,
    pending_say: Option<String>,
    looping: bool,
    latency: Duration,
    /// Recorded turns by the hash of what is compared of their request, to find the one a
    /// request that came out of order belongs to without scanning.
    recorded: Arc<BTreeMap<StateHash, Vec<usize>>>,
}

/// A script that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("script line {line}: {message}")]
pub struct ScriptError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl ScriptedModel {
    /// An empty script (every call fails as exhausted).
    pub fn new() -> Self {
        ScriptedModel::default()
    }

    /// Reads a script (see the type's documentation).
    pub fn parse(script: &str) -> Result<Self, ScriptError> {
        let mut model = ScriptedModel::new();
        for (i, raw) in script.lines().enumerate() {
            let line = i + 1;
            let text = raw.trim();
            if text.is_empty() || text.starts_with("//") || text.starts_with('#') {
                continue;
            }
            let err = |message: String| ScriptError { line, message };
            let (keyword, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
            let rest = rest.trim();
            model = match keyword {
                "user" => model.user(string(rest).map_err(err)?),
                "say" => model.say(string(rest).map_err(err)?),
                "answer" => model.answer(string(rest).map_err(err)?),
                "fail" => model.fail(string(rest).map_err(err)?),
                "when" => {
                    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<String>();
                    let needle = values.next().and_then(Result::ok).ok_or_else(|| {
                        err("`when` needs a quoted text: `when \"text\" answer \"...\"`"
                            .to_string())
                    })?;
                    let tail = rest[values.byte_offset()..].trim();
                    let (verb, reply) = tail.split_once(char::is_whitespace).unwrap_or((tail, ""));
                    let reply = string(reply.trim()).map_err(err)?;
                    match verb {
                        "answer" => model.when(needle, reply),
                        "fail" => model.when_fail(needle, reply),
                        other => {
                            return Err(err(format!(
                                "`when` takes `answer` or `fail`, found `{other}`"
                            )));
                        }
                    }
                }
                "call" | "also" => {
                    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                    if name.is_empty() {
                        return Err(err(format!("`{keyword}` needs a tool name")));
                    }
                    let args = if args.trim().is_empty() {
                        Value::Object(Default::default())
                    } else {
                        serde_json::from_str(args.trim()).map_err(|e| {
                            err(format!("the arguments of `{name}` are not JSON: {e}"))
                        })?
                    };
                    if keyword == "call" {
                        model.call(name, args)
                    } else {
                        model.also(name, args).map_err(err)?
                    }
                }
                other => {
                    return Err(err(format!(
                        "unknown keyword `{other}`; expected `user`, `say`, `call`, `also`, `answer`, `fail` or `when`"
                    )));
                }
            };
        }
        Ok(model)
    }

    /// A turn played back from a cassette.
    pub(crate) fn recorded(mut self, interaction: Interaction) -> Self {
        let index = self.turns.len();
        Arc::make_mut(&mut self.recorded)
            .entry(compared(&interaction.request))
            .or_default()
            .push(index);
        self.push(Reply::Recorded(Box::new(interaction)))
    }

    fn push(mut self, reply: Reply) -> Self {
        let turn = Turn {
            expect: self.pending_expect.take(),
            reply,
        };
        Arc::make_mut(&mut self.turns).push(turn);
        self
    }

    /// The next request must end with this user prompt.
    #[must_use]
    pub fn user(mut self, prompt: impl Into<String>) -> Self {
        self.pending_expect = Some(prompt.into());
        self
    }

    /// Text that goes with the next `call` turn (the model's reasoning).
    #[must_use]
    pub fn say(mut self, text: impl Into<String>) -> Self {
        self.pending_say = Some(text.into());
        self
    }

    /// A turn that calls `tool` with `args`.
    #[must_use]
    pub fn call(mut self, tool: impl Into<String>, args: Value) -> Self {
        let text = self.pending_say.take().unwrap_or_default();
        self.push(Reply::Calls {
            text,
            calls: vec![(tool.into(), args)],
        })
    }

    /// Adds a call to the previous `call` turn.
    pub fn also(mut self, tool: impl Into<String>, args: Value) -> Result<Self, String> {
        match Arc::make_mut(&mut self.turns).last_mut() {
            Some(Turn {
                reply: Reply::Calls { calls, .. },
                ..
            }) => {
                calls.push((tool.into(), args));
                Ok(self)
            }
            _ => Err("`also` must follow a `call`".to_string()),
        }
    }

    /// A turn that answers with `text`.
    #[must_use]
    pub fn answer(mut self, text: impl Into<String>) -> Self {
        self.pending_say = None;
        self.push(Reply::Answer(text.into()))
    }

    /// A turn that fails with `reason` (a non-retryable provider error).
    #[must_use]
    pub fn fail(self, reason: impl Into<String>) -> Self {
        self.push(Reply::Fail(reason.into()))
    }

    /// A rule: a request whose last user message contains `text` is answered with `answer`
    /// (checked before the turns; not used up).
    #[must_use]
    pub fn when(mut self, text: impl Into<String>, answer: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.rules).push((text.into(), Reply::Answer(answer.into())));
        self
    }

    /// A rule: a request whose last user message contains `text` fails with `reason`.
    #[must_use]
    pub fn when_fail(mut self, text: impl Into<String>, reason: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.rules).push((text.into(), Reply::Fail(reason.into())));
        self
    }

    /// Starts the script over when it runs out (for benchmarks).
    #[must_use]
    pub fn looping(mut self) -> Self {
        self.looping = true;
        self
    }

    /// Waits this long before each answer (tokio time, so paused-clock tests control it).
    #[must_use]
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// How many turns are left.
    pub fn remaining(&self) -> usize {
        let progress = self.lock();
        // Turns taken out of order lie after `next`.
        self.turns
            .len()
            .saturating_sub(progress.next + progress.taken.len())
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.lock().requests.clone()
    }

    /// Panics unless every turn was used: a test that ends early is a failing test.
    #[track_caller]
    pub fn assert_finished(&self) {
        let left = self.remaining();
        assert!(
            left == 0,
            "the scripted model still has {left} unused turn(s) out of {}",
            self.turns.len()
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next_reply(&self, request: &LlmRequest) -> Result<Answer, LlmError> {
        let prompt = request.last_user_message().unwrap_or("");
        if let Some((_, reply)) = self
            .rules
            .iter()
            .find(|(text, _)| prompt.contains(text.as_str()))
        {
            if !self.looping {
                self.lock().requests.push(request.clone());
            }
            return respond(reply, request, 0);
        }
        let mut progress = self.lock();
        if self.looping && progress.next >= self.turns.len() {
            progress.next = 0;
            progress.taken.clear();
        }
        loop {
            let next = progress.next;
            if !progress.taken.remove(&next) {
                break;
            }
            progress.next += 1;
        }
        let index = progress.next;
        if !self.looping {
            progress.requests.push(request.clone());
        }
        let Some(turn) = self.turns.get(index) else {
            return Err(LlmError::new(
                LlmErrorKind::Script,
                format!(
                    "the scripted model has no turn left: all {} turn(s) were used, and another request arrived (last user message: {:?})",
                    self.turns.len(),
                    request.last_user_message().unwrap_or("")
                ),
            ));
        };
        if let Reply::Recorded(interaction) = &turn.reply
            && let Some(difference) = first_difference(&interaction.request, request)
        {
            // A concurrent call may have come before the one recorded first.
            let later = self.recorded.get(&compared(request)).and_then(|turns| {
                turns.iter().copied().find(|&i| {
                    i > index
                        && !progress.taken.contains(&i)
                        && matches!(&self.turns[i].reply, Reply::Recorded(r) if first_difference(&r.request, request).is_none())
                })
            });
            let Some(later) = later else {
                return Err(LlmError::new(
                    LlmErrorKind::Script,
                    format!(
                        "the request does not match the cassette: its call {} {difference}; record the cassette again if the change is intended",
                        index + 1
                    ),
                ));
            };
            progress.taken.insert(later);
            drop(progress);
            return respond(&self.turns[later].reply, request, later);
        }
        if let Some(expected) = &turn.expect {
            let got = request.last_user_message().unwrap_or("");
            if got != expected {
                return Err(LlmError::new(
                    LlmErrorKind::Script,
                    format!(
                        "the scripted model expected the prompt {expected:?} at turn {}, but the request's last user message is {got:?}",
                        index + 1
                    ),
                ));
            }
        }
        progress.next += 1;
        drop(progress);
        respond(&turn.reply, request, index)
    }
}

/// A scripted answer, with the deltas to stream when they were recorded.
struct Answer {
    response: LlmResponse,
    deltas: Option<Vec<LlmDelta>>,
}

/// What a cassette compares of a request, hashed: everything but the model id.
fn compared(request: &LlmRequest) -> StateHash {
    StateHash::of(&(
        &request.messages,
        &request.tools,
        &request.tool_choice,
        request.temperature,
        request.max_tokens,
    ))
}

/// The response to `request` a scripted reply makes, with a usage estimate (4 bytes a token).
fn respond(reply: &Reply, request: &LlmRequest, index: usize) -> Result<Answer, LlmError> {
    let prompt_chars: usize = request.messages.iter().map(|m| m.content.len()).sum();
    let response = match reply {
        Reply::Fail(reason) => return Err(LlmError::new(LlmErrorKind::Other, reason.clone())),
        Reply::Recorded(interaction) => {
            let deltas = replay_deltas(&interaction.reply)?;
            let RecordedReply::Response { response, .. } = &interaction.reply else {
                unreachable!("`replay_deltas` fails for a recorded error");
            };
            return Ok(Answer {
                response: response.clone(),
                deltas: Some(deltas),
            });
        }
        Reply::Answer(text) => LlmResponse::text(text.clone()),
        Reply::Calls { text, calls } => LlmResponse::tool_calls(
            text.clone(),
            calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| ToolCall {
                    id: format!("call_{}_{i}", index + 1),
                    name: name.clone(),
                    arguments: args.clone(),
                })
                .collect(),
        ),
    };
    let completion = (response.text.len() / 4) as u64 + 1;
    let prompt = (prompt_chars / 4) as u64 + 1;
    Ok(Answer {
        response: LlmResponse {
            usage: Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: prompt + completion,
            },
            ..response
        },
        deltas: None,
    })
}

fn string(rest: &str) -> Result<String, String> {
    serde_json::from_str::<String>(rest)
        .map_err(|_| format!("expected a quoted string, found `{rest}`"))
}

impl LanguageModel for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'static, Result<LlmResponse, LlmError>> {
        let reply = self.next_reply(&request).map(|answer| answer.response);
        let latency = self.latency;
        Box::pin(async move {
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            reply
        })
    }

    /// Embeds each input offline: its lowercased words, hashed into [`EMBEDDING_DIMENSIONS`]
    /// buckets (FNV-1a) and normalised. Texts sharing words are close; the same text always
    /// gets the same vector. Usage counts 4 bytes a token, as answers do.
    fn embed(&self, request: EmbeddingRequest) -> BoxFuture<'static, Result<Embeddings, LlmError>> {
        let vectors: Vec<Vec<f32>> = request.inputs.iter().map(|t| hashed_words(t)).collect();
        let tokens = request.inputs.iter().map(|t| t.len() as u64 / 4 + 1).sum();
        let latency = self.latency;
        Box::pin(async move {
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            Ok(Embeddings {
                vectors,
                usage: Usage {
                    prompt_tokens: tokens,
                    completion_tokens: 0,
                    total_tokens: tokens,
                },
            })
        })
    }

    /// Streams the scripted answer in small pieces: text in chunks of a few characters, each
    /// tool call's arguments split in two, as real providers do.
    fn stream(&self, request: LlmRequest) -> BoxStream<'static, Result<LlmDelta, LlmError>> {
        let reply = self.next_reply(&request);
        let latency = self.latency;
        let answer = async move {
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            reply
        };
        stream::once(answer)
            .flat_map(|reply| {
                let deltas: Vec<Result<LlmDelta, LlmError>> = match reply {
                    Err(e) => vec![Err(e)],
                    // A cassette's call streams as it was recorded.
                    Ok(Answer {
                        deltas: Some(deltas),
                        ..
                    }) => deltas.into_iter().map(Ok).collect(),
                    Ok(Answer { response, .. }) => {
                        split(deltas_of(&response)).into_iter().map(Ok).collect()
                    }
                };
                stream::iter(deltas)
            })
            .boxed()
    }
}

/// The length of the scripted model's embeddings.
pub const EMBEDDING_DIMENSIONS: usize = 64;

/// A bag of words as a unit vector: each lowercased word adds 1 to bucket FNV-1a(word) mod
/// [`EMBEDDING_DIMENSIONS`].
fn hashed_words(text: &str) -> Vec<f32> {
    let mut vector = vec![0f32; EMBEDDING_DIMENSIONS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in word.to_lowercase().bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        vector[(hash % EMBEDDING_DIMENSIONS as u64) as usize] += 1.0;
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

fn split(deltas: Vec<LlmDelta>) -> Vec<LlmDelta> {
    let mut out = Vec::new();
    for delta in deltas {
        match delta {
            LlmDelta::Text { text } => {
                let chars: Vec<char> = text.chars().collect();
                for chunk in chars.chunks(8) {
                    out.push(LlmDelta::Text {
                        text: chunk.iter().collect(),
                    });
                }
            }
            LlmDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                let cut = arguments
                    .char_indices()
                    .nth(arguments.chars().count() / 2)
                    .map_or(arguments.len(), |(i, _)| i);
                let (a, b) = arguments.split_at(cut);
                out.push(LlmDelta::ToolCall {
                    index,
                    id,
                    name,
                    arguments: a.to_string(),
                });
                out.push(LlmDelta::ToolCall {
                    index,
                    id: None,
                    name: None,
                    arguments: b.to_string(),
                });
            }
            finish @ LlmDelta::Finish { .. } => out.push(finish),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::model::{ChatMessage, FinishReason, collect_stream};
    use serde_json::json;

    fn request(prompt: &str) -> LlmRequest {
        LlmRequest::new("m", vec![ChatMessage::user(prompt)])
    }

    #[tokio::test]
    async fn follows_the_script_and_then_says_it_is_exhausted() {
        let model = ScriptedModel::parse(
            "user \"hi\"\nsay \"looking\"\ncall a {\"x\": 1}\nalso b\nanswer \"done\\nreally\"",
        )
        .unwrap();
        let first = model.generate(request("hi")).await.unwrap();
        assert_eq!(first.text, "looking");
        assert_eq!(first.tool_calls.len(), 2);
        assert_eq!(first.tool_calls[0].arguments, json!({"x": 1}));
        assert_eq!(first.finish_reason, FinishReason::ToolCalls);
        let second = model.generate(request("hi")).await.unwrap();
        assert_eq!(second.text, "done\nreally");
        model.assert_finished();
        let err = model.generate(request("again")).await.unwrap_err();
        assert_eq!(err.kind, LlmErrorKind::Script);
        assert!(err.message.contains("no turn left"), "{err}");
    }

    #[tokio::test]
    async fn a_mismatched_prompt_fails_clearly() {
        let model = ScriptedModel::new().user("expected").answer("x");
        let err = model.generate(request("something else")).await.unwrap_err();
        assert_eq!(err.kind, LlmErrorKind::Script);
        assert!(err.message.contains("\"expected\""), "{err}");
        assert_eq!(model.remaining(), 1, "a mismatch uses no turn");
    }

    #[tokio::test]
    async fn streams_split_deltas_that_add_up() {
        let model = ScriptedModel::new()
            .say("a fairly long reasoning text")
            .call("lookup", json!({"id": 42, "why": "because"}));
        let mut pieces = 0;
        let response = collect_stream(model.stream(request("q")), |_| pieces += 1)
            .await
            .unwrap();
        assert!(pieces > 4, "{pieces}");
        assert_eq!(response.text, "a fairly long reasoning text");
        assert_eq!(
            response.tool_calls[0].arguments,
            json!({"id": 42, "why": "because"})
        );
    }

    #[tokio::test]
    async fn when_rules_answer_by_prompt_in_any_order() {
        let model = ScriptedModel::parse(
            "when \"second\" answer \"two\"\nwhen \"boom\" fail \"HTTP 500\"\nanswer \"in order\"",
        )
        .unwrap();
        assert_eq!(
            model.generate(request("the second")).await.unwrap().text,
            "two"
        );
        assert_eq!(
            model.generate(request("second again")).await.unwrap().text,
            "two"
        );
        let err = model.generate(request("boom")).await.unwrap_err();
        assert_eq!(err.message, "HTTP 500");
        assert_eq!(
            model.generate(request("other")).await.unwrap().text,
            "in order"
        );
        model.assert_finished();
        assert_eq!(model.requests().len(), 4);
        let err = ScriptedModel::parse("when \"x\" shout \"y\"").unwrap_err();
        assert!(err.message.contains("`answer` or `fail`"), "{err}");
        assert!(ScriptedModel::parse("when x answer \"y\"").is_err());
    }

    #[test]
    fn bad_scripts_name_the_line() {
        let err = ScriptedModel::parse("user \"q\"\ncall t {bad").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("not JSON"), "{err}");
        let err = ScriptedModel::parse("also t {}").unwrap_err();
        assert_eq!(err.line, 1);
        let err = ScriptedModel::parse("shout \"x\"").unwrap_err();
        assert!(err.message.contains("unknown keyword `shout`"), "{err}");
    }
}
