//! Model cassettes: a run's model traffic (each request, and its answer with the streamed
//! deltas and tool calls, or its error) recorded once from a real provider and played back
//! through the [`ScriptedModel`] in tests and examples, offline. A request that differs from the
//! recording (a changed prompt, tool schema or history) fails loudly, naming the first
//! differing message.
//!
//! Like VCR and its ports (vcr-rs, pytest-recording), but at the model layer, not HTTP: a
//! cassette works for every provider and compares what the agent asked, not headers.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use super::model::{
    DeltaAccumulator, LanguageModel, LlmDelta, LlmError, LlmRequest, LlmResponse, deltas_of,
};
use super::scripted::ScriptedModel;

/// What a cassette file says it is.
const FORMAT: &str = "stratagem.cassette";
const VERSION: u32 = 1;

/// A recording of model calls, in the order they were made.
///
/// ```
/// use std::sync::Arc;
/// use agent_runtime::ai::{Cassette, ChatMessage, LanguageModel, LlmRequest, ScriptedModel};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // Record (here from a scripted model; in practice from `OpenAiCompatible`).
/// let live = ScriptedModel::new().answer("Order 42 shipped yesterday.");
/// let recorder = Cassette::record(Arc::new(live));
/// let ask = |prompt: &str| LlmRequest::new("m", vec![ChatMessage::user(prompt)]);
/// recorder.generate(ask("Where is order 42?")).await?;
/// let cassette = recorder.cassette(); // or `recorder.save("tests/cassettes/orders.json")`
///
/// // Play back: the same request gets the recorded answer, offline.
/// let model = ScriptedModel::from_cassette(&cassette);
/// assert_eq!(model.generate(ask("Where is order 42?")).await?.text, "Order 42 shipped yesterday.");
///
/// // A changed prompt fails loudly, naming the message.
/// let model = ScriptedModel::from_cassette(&cassette);
/// let err = model.generate(ask("Where is order 43?")).await.unwrap_err();
/// assert!(err.message.contains("message 1 (`user`)"), "{err}");
/// # Ok::<_, agent_runtime::ai::LlmError>(()) }).unwrap();
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cassette {
    /// The calls, in the order they were made.
    pub interactions: Vec<Interaction>,
}

/// One recorded model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interaction {
    /// The request, as the provider got it (the model id resolved).
    pub request: LlmRequest,
    /// What came back.
    #[serde(flatten)]
    pub reply: RecordedReply,
}

/// What a recorded call returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedReply {
    /// An answer: the response and, when it was streamed, its deltas as they came.
    Response {
        /// The whole answer, tool calls included.
        response: LlmResponse,
        /// The streamed pieces (empty when the call was not streamed).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        deltas: Vec<LlmDelta>,
    },
    /// A failure.
    Error {
        /// The error the provider returned.
        error: LlmError,
    },
}

/// The file of a cassette, with its format and version.
#[derive(Serialize, Deserialize)]
struct File<C> {
    format: String,
    version: u32,
    #[serde(flatten)]
    cassette: C,
}

/// A cassette file that could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cassette `{path}`: {message}")]
pub struct CassetteError {
    /// The file.
    pub path: String,
    /// What went wrong, with a hint.
    pub message: String,
}

impl Cassette {
    /// A recorder in front of `model`: it answers as `model` does and records every call.
    pub fn record(model: Arc<dyn LanguageModel>) -> CassetteRecorder {
        CassetteRecorder {
            inner: model,
            calls: Arc::default(),
        }
    }

    /// The cassette as JSON (`{"format": "stratagem.cassette", "version": 1, "interactions"}`).
    pub fn to_json(&self) -> String {
        let file = File {
            format: FORMAT.to_string(),
            version: VERSION,
            cassette: self,
        };
        serde_json::to_string_pretty(&file).expect("a cassette always serializes")
    }

    /// Reads a cassette from its JSON.
    pub fn from_json(json: &str) -> Result<Cassette, String> {
        let file: File<Cassette> = serde_json::from_str(json).map_err(|e| {
            format!("not a cassette: {e}; a cassette is what `Cassette::save` writes")
        })?;
        if file.format != FORMAT {
            return Err(format!("the format is `{}`, not `{FORMAT}`", file.format));
        }
        if file.version != VERSION {
            return Err(format!(
                "version {} is not supported (this build reads version {VERSION}); record it again",
                file.version
            ));
        }
        Ok(file.cassette)
    }

    /// Reads the cassette at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Cassette, CassetteError> {
        let path = path.as_ref();
        let fail = |message: String| CassetteError {
            path: path.display().to_string(),
            message,
        };
        let json = std::fs::read_to_string(path).map_err(|e| {
            fail(format!(
                "cannot read it: {e}; record it first (`Cassette::record`, then `save`)"
            ))
        })?;
        Cassette::from_json(&json).map_err(fail)
    }

    /// Writes the cassette to `path`, creating missing directories.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CassetteError> {
        let path = path.as_ref();
        let fail = |message: String| CassetteError {
            path: path.display().to_string(),
            message,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create it: {e}")))?;
        }
        std::fs::write(path, self.to_json()).map_err(|e| fail(format!("cannot write it: {e}")))
    }
}

/// A model that answers as the model it wraps and records every call into a [`Cassette`]
/// (in the order the calls were made, whatever order they finish in).
#[derive(Clone)]
pub struct CassetteRecorder {
    inner: Arc<dyn LanguageModel>,
    calls: Arc<Mutex<Vec<Option<Interaction>>>>,
}

impl fmt::Debug for CassetteRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CassetteRecorder")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl CassetteRecorder {
    /// What was recorded so far (calls still running are left out).
    pub fn cassette(&self) -> Cassette {
        let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        Cassette {
            interactions: calls.iter().flatten().cloned().collect(),
        }
    }

    /// Writes what was recorded so far to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CassetteError> {
        self.cassette().save(path)
    }

    /// Reserves the next slot, so the cassette keeps the order calls were made in.
    fn slot(&self) -> Slot {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.push(None);
        Slot {
            calls: self.calls.clone(),
            index: calls.len() - 1,
        }
    }
}

struct Slot {
    calls: Arc<Mutex<Vec<Option<Interaction>>>>,
    index: usize,
}

impl Slot {
    fn fill(self, request: LlmRequest, reply: RecordedReply) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls[self.index] = Some(Interaction { request, reply });
    }
}

fn recorded(result: &Result<LlmResponse, LlmError>, deltas: Vec<LlmDelta>) -> RecordedReply {
    match result {
        Ok(response) => RecordedReply::Response {
            response: response.clone(),
            deltas,
        },
        Err(error) => RecordedReply::Error {
            error: error.clone(),
        },
    }
}

impl LanguageModel for CassetteRecorder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn server_address(&self) -> Option<&str> {
        self.inner.server_address()
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'static, Result<LlmResponse, LlmError>> {
        let slot = self.slot();
        let answer = self.inner.generate(request.clone());
        Box::pin(async move {
            let result = answer.await;
            slot.fill(request, recorded(&result, Vec::new()));
            result
        })
    }

    fn stream(&self, request: LlmRequest) -> BoxStream<'static, Result<LlmDelta, LlmError>> {
        let tape = Arc::new(Mutex::new(Tape {
            slot: Some(self.slot()),
            request: request.clone(),
            deltas: Vec::new(),
            sum: DeltaAccumulator::new(),
        }));
        let end = tape.clone();
        let pieces = self.inner.stream(request).map(move |item| {
            let mut tape = tape.lock().unwrap_or_else(|p| p.into_inner());
            match &item {
                Ok(delta) => {
                    tape.sum.push(delta);
                    tape.deltas.push(delta.clone());
                    // Recorded at the finish: a consumer may stop reading right after it.
                    if matches!(delta, LlmDelta::Finish { .. }) {
                        tape.close(None);
                    }
                }
                Err(error) => tape.close(Some(error.clone())),
            }
            Some(item)
        });
        // A stream that ends without a finish is recorded as what the accumulator makes of it.
        let closing = futures::stream::once(async move {
            end.lock().unwrap_or_else(|p| p.into_inner()).close(None);
            None
        });
        pieces
            .chain(closing)
            .filter_map(futures::future::ready)
            .boxed()
    }
}

/// A streamed call being recorded.
struct Tape {
    slot: Option<Slot>,
    request: LlmRequest,
    deltas: Vec<LlmDelta>,
    sum: DeltaAccumulator,
}

impl Tape {
    /// Records the call once: with `error`, or with what the deltas add up to.
    fn close(&mut self, error: Option<LlmError>) {
        let Some(slot) = self.slot.take() else {
            return;
        };
        let reply = match error {
            Some(error) => RecordedReply::Error { error },
            None => {
                let sum = std::mem::take(&mut self.sum).finish();
                recorded(&sum, std::mem::take(&mut self.deltas))
            }
        };
        slot.fill(self.request.clone(), reply);
    }
}

/// Where a request differs from the recorded one, in words; `None` when they are the same.
pub(crate) fn first_difference(recorded: &LlmRequest, got: &LlmRequest) -> Option<String> {
    for (i, (a, b)) in recorded.messages.iter().zip(&got.messages).enumerate() {
        if a != b {
            let role = serde_json::to_value(a.role).unwrap_or_default();
            let role = role.as_str().unwrap_or("?");
            let what = if a.role != b.role {
                format!(
                    "the role is `{}`",
                    serde_json::to_value(b.role)
                        .unwrap_or_default()
                        .as_str()
                        .unwrap_or("?")
                )
            } else if a.content != b.content {
                format!("recorded {:?}, got {:?}", a.content, b.content)
            } else if a.tool_calls != b.tool_calls {
                "its tool calls differ".to_string()
            } else {
                "its tool call id differs".to_string()
            };
            return Some(format!("message {} (`{role}`) differs: {what}", i + 1));
        }
    }
    if recorded.messages.len() != got.messages.len() {
        return Some(format!(
            "the recording has {} message(s), the request {}",
            recorded.messages.len(),
            got.messages.len()
        ));
    }
    if recorded.tools != got.tools {
        let names = |r: &LlmRequest| r.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        let (a, b) = (names(recorded), names(got));
        if a != b {
            return Some(format!("the tools differ: recorded {a:?}, got {b:?}"));
        }
        let changed = recorded
            .tools
            .iter()
            .zip(got.tools.iter())
            .find(|(x, y)| x != y)
            .map_or_else(String::new, |(x, _)| x.name.clone());
        return Some(format!("the schema of tool `{changed}` differs"));
    }
    if recorded.tool_choice != got.tool_choice {
        return Some("the tool choice differs".to_string());
    }
    if recorded.temperature != got.temperature || recorded.max_tokens != got.max_tokens {
        return Some("the sampling options (temperature, max tokens) differ".to_string());
    }
    None
}

impl ScriptedModel {
    /// A scripted model that plays `cassette` back: each request must equal the recorded one
    /// (its messages, tools, tool choice and sampling options; the model id is not compared),
    /// and gets the recorded answer, streamed as the recorded deltas. Requests may arrive in
    /// another order than recorded (concurrent calls): one equal to a later unused recording
    /// takes it. A request equal to none fails with [`LlmErrorKind::Script`](super::LlmErrorKind::Script),
    /// naming the first differing message of the next recording.
    pub fn from_cassette(cassette: &Cassette) -> ScriptedModel {
        cassette
            .interactions
            .iter()
            .fold(ScriptedModel::new(), |model, interaction| {
                model.recorded(interaction.clone())
            })
    }
}

/// The deltas a recorded reply streams: the recorded ones, or the response's when the call was
/// not streamed.
pub(crate) fn replay_deltas(reply: &RecordedReply) -> Result<Vec<LlmDelta>, LlmError> {
    match reply {
        RecordedReply::Response { response, deltas } if deltas.is_empty() => {
            Ok(deltas_of(response))
        }
        RecordedReply::Response { deltas, .. } => Ok(deltas.clone()),
        RecordedReply::Error { error } => Err(error.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::LlmErrorKind;
    use crate::ai::model::{ChatMessage, collect_stream};
    use serde_json::json;

    fn ask(messages: Vec<ChatMessage>) -> LlmRequest {
        LlmRequest::new("m", messages)
    }

    fn live() -> ScriptedModel {
        ScriptedModel::new()
            .say("Looking it up.")
            .call("lookup", json!({"id": 42}))
            .answer("Shipped.")
    }

    async fn record() -> (Cassette, Vec<LlmRequest>) {
        let recorder = Cassette::record(Arc::new(live()));
        let first = ask(vec![ChatMessage::user("where is 42?")]);
        let mut pieces = 0;
        let answer = collect_stream(recorder.stream(first.clone()), |_| pieces += 1)
            .await
            .unwrap();
        assert!(pieces > 3, "streamed in pieces");
        let mut history = first.messages.clone();
        history.push(ChatMessage::assistant(answer.text, answer.tool_calls));
        history.push(ChatMessage::tool("call_1_0", "{\"status\":\"shipped\"}"));
        let second = ask(history);
        recorder.generate(second.clone()).await.unwrap();
        (recorder.cassette(), vec![first, second])
    }

    #[tokio::test]
    async fn a_recording_plays_back_the_same_answers_and_deltas() {
        let (cassette, requests) = record().await;
        assert_eq!(cassette.interactions.len(), 2);
        let RecordedReply::Response { deltas, response } = &cassette.interactions[0].reply else {
            panic!("recorded an answer");
        };
        assert_eq!(response.tool_calls[0].name, "lookup");
        let back = Cassette::from_json(&cassette.to_json()).unwrap();
        assert_eq!(back, cassette);

        let model = ScriptedModel::from_cassette(&back);
        let mut played = Vec::new();
        collect_stream(model.stream(requests[0].clone()), |d| {
            played.push(d.clone())
        })
        .await
        .unwrap();
        assert_eq!(&played, deltas, "the recorded deltas, in their pieces");
        let last = model.generate(requests[1].clone()).await.unwrap();
        assert_eq!(last.text, "Shipped.");
        model.assert_finished();
    }

    #[tokio::test]
    async fn a_changed_history_or_tool_fails_naming_what_differs() {
        let (cassette, requests) = record().await;
        let model = ScriptedModel::from_cassette(&cassette);
        model.generate(requests[0].clone()).await.unwrap();
        let mut changed = requests[1].clone();
        changed.messages[2].content = "{\"status\":\"lost\"}".to_string();
        let err = model.generate(changed).await.unwrap_err();
        assert_eq!(err.kind, LlmErrorKind::Script);
        assert_eq!(
            err.message,
            "the request does not match the cassette: its call 2 message 3 (`tool`) differs: recorded \"{\\\"status\\\":\\\"shipped\\\"}\", got \"{\\\"status\\\":\\\"lost\\\"}\"; record the cassette again if the change is intended"
        );

        let model = ScriptedModel::from_cassette(&cassette);
        let mut with_tool = requests[0].clone();
        with_tool.tools = Arc::from(vec![crate::ai::ToolSpec {
            name: "refund".to_string(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }]);
        let err = model.generate(with_tool).await.unwrap_err();
        assert!(
            err.message
                .contains("the tools differ: recorded [], got [\"refund\"]"),
            "{err}"
        );
        let err = model.generate(ask(vec![])).await.unwrap_err();
        assert!(
            err.message
                .contains("the recording has 1 message(s), the request 0"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn concurrent_calls_may_come_in_another_order() {
        let recorder =
            Cassette::record(Arc::new(ScriptedModel::new().when("a", "A").when("b", "B")));
        let (a, b) = (
            ask(vec![ChatMessage::user("a")]),
            ask(vec![ChatMessage::user("b")]),
        );
        recorder.generate(a.clone()).await.unwrap();
        recorder.generate(b.clone()).await.unwrap();
        let model = ScriptedModel::from_cassette(&recorder.cassette());
        assert_eq!(model.generate(b).await.unwrap().text, "B");
        assert_eq!(model.generate(a).await.unwrap().text, "A");
        model.assert_finished();
    }

    #[test]
    fn files_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/run.json");
        Cassette::default().save(&path).unwrap();
        assert_eq!(Cassette::load(&path).unwrap(), Cassette::default());
        let missing = Cassette::load(dir.path().join("none.json")).unwrap_err();
        assert!(missing.message.contains("record it first"), "{missing}");
        let json = r#"{"format": "stratagem.cassette", "version": 9, "interactions": []}"#;
        assert!(Cassette::from_json(json).unwrap_err().contains("version 9"));
        assert!(
            Cassette::from_json("[]")
                .unwrap_err()
                .starts_with("not a cassette")
        );
    }
}
