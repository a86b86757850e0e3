//! Retrieval: memories per namespace, recalled by BM25 and added to prompts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::bm25::Bm25Index;
use crate::ai::QUERY;
use crate::directive::Directive;
use crate::error::ActionError;
use crate::plugin::{Flow, Plugin, PluginCall, PluginRoute};
use crate::quote::clip;
use crate::signal::Signal;

/// The signal `retrieval.recall` answers with: data `{"namespace", "query", "memories":
/// [{"id", "text", "score"}]}`.
pub const RECALLED: &str = "retrieval.recalled";

/// Keeps memories per namespace and recalls the best matches of a query by BM25.
///
/// Signals: `retrieval.upsert` (data `{"text", "id"?, "namespace"?}` or `{"memories": [{"text",
/// "id"?}], "namespace"?}`; an existing id is replaced), `retrieval.recall` (`{"query",
/// "top_k"?, "namespace"?}`, answered with `retrieval.recalled`), `retrieval.clear`
/// (`{"namespace"?}`). Unless `enrich` is off or a request says `"disable_retrieval": true`,
/// the prompt of `chat.message`, `ai.query` and `reasoning.*.run` (its `query` or `prompt`)
/// gets the `top_k` best memories of its namespace first, each cut to `max_snippet_chars`.
/// Memories are part of the agent's checkpoint; the index is rebuilt from them after a thaw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Retrieval {
    /// Memories recalled per request (default 3).
    pub top_k: u64,
    /// The longest snippet added to a prompt, in characters (default 500).
    pub max_snippet_chars: u64,
    /// Add memories to request prompts (default true).
    pub enrich: bool,
    /// The namespace of signals that name none (default `"default"`).
    pub namespace: String,
}

impl Default for Retrieval {
    fn default() -> Self {
        Retrieval {
            top_k: 3,
            max_snippet_chars: 500,
            enrich: true,
            namespace: "default".into(),
        }
    }
}

/// One memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Its id (given, or its position).
    pub id: String,
    /// Its text.
    pub text: String,
}

/// The memories of one namespace and their index (rebuilt when missing or stale).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Namespace {
    /// In the order they were added (a replaced memory keeps its place).
    pub memories: Vec<Memory>,
    #[serde(skip)]
    index: Option<Bm25Index>,
}

impl PartialEq for Namespace {
    fn eq(&self, other: &Self) -> bool {
        self.memories == other.memories
    }
}

impl Namespace {
    /// Adds or replaces a memory.
    pub fn upsert(&mut self, id: Option<String>, text: String) {
        let id = id.unwrap_or_else(|| self.memories.len().to_string());
        if let Some(existing) = self.memories.iter_mut().find(|m| m.id == id) {
            existing.text = text;
            self.index = None;
            return;
        }
        if let Some(index) = &mut self.index {
            index.add(&text);
        }
        self.memories.push(Memory { id, text });
    }

    /// The `k` best memories for `query`, with their scores.
    pub fn recall(&mut self, query: &str, k: usize) -> Vec<(&Memory, f64)> {
        let memories = &self.memories;
        let index = self.index.get_or_insert_with(|| {
            let mut index = Bm25Index::new();
            for m in memories {
                index.add(&m.text);
            }
            index
        });
        index
            .search(query, k)
            .into_iter()
            .map(|(doc, score)| (&memories[doc as usize], score))
            .collect()
    }
}

/// Retrieval's state: namespace -> memories.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RetrievalState {
    /// The namespaces.
    pub namespaces: BTreeMap<String, Namespace>,
}

impl Retrieval {
    fn namespace_of(&self, data: &Value) -> String {
        data.get("namespace")
            .and_then(Value::as_str)
            .unwrap_or(&self.namespace)
            .to_string()
    }

    fn upsert(&self, state: &mut RetrievalState, data: &Value) -> Result<usize, ActionError> {
        let read = |item: &Value| -> Result<(Option<String>, String), ActionError> {
            let text = item.get("text").and_then(Value::as_str).ok_or_else(|| {
                ActionError::invalid_params("retrieval.upsert", "each memory needs a `text` string")
            })?;
            let id = item.get("id").and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
            Ok((id, text.to_string()))
        };
        let items = match data.get("memories").and_then(Value::as_array) {
            Some(list) => list.iter().map(read).collect::<Result<Vec<_>, _>>()?,
            None => vec![read(data)?],
        };
        let count = items.len();
        let namespace = state.namespaces.entry(self.namespace_of(data)).or_default();
        for (id, text) in items {
            namespace.upsert(id, text);
        }
        Ok(count)
    }
}

impl Plugin for Retrieval {
    const NAME: &'static str = "Retrieval";
    const STATE_KEY: &'static str = "retrieval";
    type State = RetrievalState;

    fn mount(&self) -> RetrievalState {
        RetrievalState::default()
    }

    fn routes(&self) -> Vec<PluginRoute> {
        vec![
            PluginRoute::new("retrieval.upsert", "upsert"),
            PluginRoute::new("retrieval.recall", "recall"),
            PluginRoute::new("retrieval.clear", "clear"),
        ]
    }

    fn before_route(&self, state: &mut RetrievalState, signal: &mut Signal) -> Flow {
        if !self.enrich || !enriches(&signal.signal_type) {
            return Flow::Continue;
        }
        if signal
            .data
            .get("disable_retrieval")
            .and_then(Value::as_bool)
            == Some(true)
        {
            return Flow::Continue;
        }
        if let Value::String(query) = &signal.data {
            signal.data = json!({"query": query});
        }
        let field = ["query", "prompt"]
            .into_iter()
            .find(|f| signal.data.get(*f).is_some_and(Value::is_string));
        let Some(field) = field else {
            return Flow::Continue;
        };
        let namespace = self.namespace_of(&signal.data);
        let Some(memories) = state.namespaces.get_mut(&namespace) else {
            return Flow::Continue;
        };
        let prompt = signal.data[field].as_str().unwrap_or_default().to_string();
        let top_k = usize::try_from(self.top_k).unwrap_or(usize::MAX);
        let max = usize::try_from(self.max_snippet_chars).unwrap_or(usize::MAX);
        let found = memories.recall(&prompt, top_k);
        if found.is_empty() {
            return Flow::Continue;
        }
        let mut enriched = String::from("Relevant memories:\n");
        for (memory, _) in &found {
            enriched.push_str("- ");
            enriched.extend(memory.text.chars().take(max));
            enriched.push('\n');
        }
        enriched.push('\n');
        enriched.push_str(&prompt);
        signal.data[field] = Value::String(enriched);
        signal.data["retrieved"] = json!(found.iter().map(|(m, _)| &m.id).collect::<Vec<_>>());
        Flow::Continue
    }

    fn run(
        &self,
        state: &mut RetrievalState,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        let data = call.params();
        let namespace = self.namespace_of(data);
        let reply = |kind: &str, body: Value| {
            Ok(vec![Directive::Emit(Signal::with_id(
                format!("{}/{kind}", call.instruction.id),
                kind.to_string(),
                body,
            ))])
        };
        match call.action {
            "upsert" => {
                let count = self.upsert(state, data)?;
                reply(
                    "retrieval.upserted",
                    json!({"namespace": namespace, "count": count}),
                )
            }
            "recall" => {
                let query = data.get("query").and_then(Value::as_str).ok_or_else(|| {
                    ActionError::invalid_params("retrieval.recall", "it needs a `query` string")
                })?;
                let top_k = data
                    .get("top_k")
                    .and_then(Value::as_u64)
                    .unwrap_or(self.top_k);
                let top_k = usize::try_from(top_k).unwrap_or(usize::MAX);
                let memories: Vec<Value> = match state.namespaces.get_mut(&namespace) {
                    Some(ns) => ns
                        .recall(query, top_k)
                        .into_iter()
                        .map(|(m, score)| json!({"id": m.id, "text": m.text, "score": score}))
                        .collect(),
                    None => Vec::new(),
                };
                reply(
                    RECALLED,
                    json!({"namespace": namespace, "query": clip(query), "memories": memories}),
                )
            }
            "clear" => {
                let removed = state
                    .namespaces
                    .remove(&namespace)
                    .map_or(0, |ns| ns.memories.len());
                reply(
                    "retrieval.cleared",
                    json!({"namespace": namespace, "removed": removed}),
                )
            }
            other => Err(ActionError::new(format!(
                "Retrieval has no action `{other}`"
            ))),
        }
    }
}

fn enriches(signal_type: &str) -> bool {
    signal_type == "chat.message"
        || signal_type == QUERY
        || (signal_type.starts_with("reasoning.") && signal_type.ends_with(".run"))
}
