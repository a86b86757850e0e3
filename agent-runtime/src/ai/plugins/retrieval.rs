//! Retrieval: memories per namespace, recalled by BM25 and added to prompts.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::bm25::Bm25Index;
use crate::ai::{EMBED_RESPONSE, EmbedCall, EmbedReply, EmbeddingRequest, QUERY, cosine};
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
/// gets the `top_k` best memories of its namespace first, each cut to `max_snippet_chars`
/// (their ids in the data's `retrieved`, the ranking in `retrieval_ranking`). With an
/// `embedding_model` and embedded memories, the hook holds the request ([`Flow::Defer`]),
/// asks for its prompt's embedding, and routes it enriched by cosine similarity when the
/// embedding arrives (by BM25 when that call fails); the held request is in the checkpoint.
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
    /// The model alias that embeds memories and queries; empty (the default) ranks by BM25
    /// alone. With one, `retrieval.upsert` also asks for the new memories' embeddings, and
    /// `retrieval.recall` and the enrichment of requests rank by cosine similarity to the
    /// query's embedding.
    pub embedding_model: String,
}

impl Default for Retrieval {
    fn default() -> Self {
        Retrieval {
            top_k: 3,
            max_snippet_chars: 500,
            enrich: true,
            namespace: "default".into(),
            embedding_model: String::new(),
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
    /// Its embedding, once the embedding model gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
}

/// The memories of one namespace and their index (rebuilt when missing or stale).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Namespace {
    /// In the order they were added (a replaced memory keeps its place).
    pub memories: Vec<Memory>,
    #[serde(skip)]
    index: Option<Bm25Index>,
    #[serde(skip)]
    ids: Option<HashMap<String, usize>>,
}

impl PartialEq for Namespace {
    fn eq(&self, other: &Self) -> bool {
        self.memories == other.memories
    }
}

impl Namespace {
    /// Adds or replaces a memory; returns its id.
    pub fn upsert(&mut self, id: Option<String>, text: String) -> String {
        let id = id.unwrap_or_else(|| self.memories.len().to_string());
        let position = self.positions().get(&id).copied();
        if let Some(position) = position {
            let existing = &mut self.memories[position];
            existing.text = text;
            existing.embedding = None;
            self.index = None;
            return id;
        }
        if let Some(index) = &mut self.index {
            index.add(&text);
        }
        if let Some(ids) = &mut self.ids {
            ids.insert(id.clone(), self.memories.len());
        }
        self.memories.push(Memory {
            id: id.clone(),
            text,
            embedding: None,
        });
        id
    }

    /// Memory id -> its position, built once and kept up to date.
    fn positions(&mut self) -> &HashMap<String, usize> {
        let memories = &self.memories;
        self.ids.get_or_insert_with(|| {
            memories
                .iter()
                .enumerate()
                .map(|(i, m)| (m.id.clone(), i))
                .collect()
        })
    }

    /// Stores the embeddings of the memories `ids` (one vector each, in order); a memory
    /// replaced or removed since is skipped.
    pub fn set_embeddings(&mut self, ids: &[(String, String)], vectors: Vec<Vec<f32>>) {
        for ((id, text), vector) in ids.iter().zip(vectors) {
            let Some(&position) = self.positions().get(id) else {
                continue;
            };
            let memory = &mut self.memories[position];
            if memory.text == *text {
                memory.embedding = Some(vector);
            }
        }
    }

    /// The `k` memories most similar to `query` (cosine of their embeddings; memories without
    /// one are left out), best first.
    pub fn recall_by_embedding(&self, query: &[f32], k: usize) -> Vec<(&Memory, f64)> {
        let mut ranked: Vec<(usize, f64)> = self
            .memories
            .iter()
            .enumerate()
            .filter_map(|(i, m)| m.embedding.as_ref().map(|e| (i, cosine(query, e))))
            .collect();
        let by_score = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if k == 0 {
            return Vec::new();
        }
        if ranked.len() > k {
            ranked.select_nth_unstable_by(k - 1, by_score);
            ranked.truncate(k);
        }
        ranked.sort_by(by_score);
        ranked
            .into_iter()
            .map(|(i, score)| (&self.memories[i], score))
            .collect()
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
    /// Embedding calls in flight, by call id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pending: BTreeMap<String, PendingEmbedding>,
}

/// What an embedding call in flight is for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "for", rename_all = "snake_case")]
pub enum PendingEmbedding {
    /// The memories an upsert added: (id, text), in the order of the call's inputs.
    Upsert {
        /// Their namespace.
        namespace: String,
        /// Each memory's id and text.
        memories: Vec<(String, String)>,
    },
    /// A request held until its prompt's embedding arrives, then enriched and routed.
    Enrich {
        /// The request, as the hooks before Retrieval left it.
        signal: Signal,
        /// The namespace searched.
        namespace: String,
        /// The data field holding the prompt (`query` or `prompt`).
        field: String,
    },
    /// A recall waiting for its query's embedding.
    Recall {
        /// The namespace searched.
        namespace: String,
        /// The query.
        query: String,
        /// How many to return.
        top_k: u64,
        /// The id the answer carries.
        reply_id: String,
    },
}

/// Embeddings for one of Retrieval's calls, as its hook renames `ai.embed.response`.
const EMBED_REPLY: &str = "retrieval.embed.response";

impl Retrieval {
    fn namespace_of(&self, data: &Value) -> String {
        data.get("namespace")
            .and_then(Value::as_str)
            .unwrap_or(&self.namespace)
            .to_string()
    }

    fn upsert(
        &self,
        state: &mut RetrievalState,
        data: &Value,
    ) -> Result<Vec<(String, String)>, ActionError> {
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
        let namespace = state.namespaces.entry(self.namespace_of(data)).or_default();
        Ok(items
            .into_iter()
            .map(|(id, text)| (namespace.upsert(id, text.clone()), text))
            .collect())
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
            PluginRoute::new(EMBED_REPLY, "embedded"),
        ]
    }

    fn before_route(&self, state: &mut RetrievalState, signal: &mut Cow<'_, Signal>) -> Flow {
        if signal.signal_type == EMBED_RESPONSE {
            let call_id = signal.data.get("call_id").and_then(Value::as_str);
            match call_id.and_then(|id| state.pending.get(id)) {
                // The embedding a held request waited for: the request comes back enriched,
                // and the hooks after this one and the routes see it.
                Some(PendingEmbedding::Enrich { .. }) => {
                    let call_id = call_id.unwrap_or_default().to_string();
                    if let Some(PendingEmbedding::Enrich {
                        signal: held,
                        namespace,
                        field,
                    }) = state.pending.remove(&call_id)
                    {
                        let answer = std::mem::replace(signal, Cow::Owned(held));
                        let held = signal.to_mut();
                        self.finish_enrichment(state, held, &namespace, &field, &answer);
                    }
                }
                Some(_) => signal.to_mut().signal_type = EMBED_REPLY.to_string(),
                None => {}
            }
            return Flow::Continue;
        }
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
            let data = json!({"query": query});
            signal.to_mut().data = data;
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
        let embedded = memories.memories.iter().any(|m| m.embedding.is_some());
        if self.embedding_model.is_empty() || !embedded {
            let prompt = signal.data[field].as_str().unwrap_or_default().to_string();
            let found = memories.recall(&prompt, self.top_k());
            if !found.is_empty() {
                self.enrich_with(signal.to_mut(), field, &found, "bm25");
            }
            return Flow::Continue;
        }
        // Ranking by embeddings needs the prompt's: hold the request until it arrives.
        let prompt = signal.data[field].as_str().unwrap_or_default().to_string();
        let call_id = format!("retrieval/{}/enrich", signal.id);
        let embed = Directive::Embed(Box::new(EmbedCall {
            call_id: call_id.clone(),
            request_id: super::request_id(signal.as_ref()),
            request: EmbeddingRequest {
                model: self.embedding_model.clone(),
                inputs: vec![prompt],
            },
        }));
        state.pending.insert(
            call_id,
            PendingEmbedding::Enrich {
                signal: Signal::clone(signal),
                namespace,
                field: field.to_string(),
            },
        );
        Flow::Defer {
            directives: vec![embed],
        }
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
                let added = self.upsert(state, data)?;
                let mut out = reply(
                    "retrieval.upserted",
                    json!({"namespace": namespace, "count": added.len()}),
                )?;
                if !self.embedding_model.is_empty() && !added.is_empty() {
                    let inputs = added.iter().map(|(_, text)| text.clone()).collect();
                    let pending = PendingEmbedding::Upsert {
                        namespace,
                        memories: added,
                    };
                    out.push(self.embed(state, call.instruction.id.clone(), inputs, pending));
                }
                Ok(out)
            }
            "embedded" => self.embedded(state, data),
            "recall" => {
                let query = data.get("query").and_then(Value::as_str).ok_or_else(|| {
                    ActionError::invalid_params("retrieval.recall", "it needs a `query` string")
                })?;
                let top_k = data
                    .get("top_k")
                    .and_then(Value::as_u64)
                    .unwrap_or(self.top_k);
                if !self.embedding_model.is_empty() {
                    let pending = PendingEmbedding::Recall {
                        namespace,
                        query: query.to_string(),
                        top_k,
                        reply_id: format!("{}/{RECALLED}", call.instruction.id),
                    };
                    let inputs = vec![query.to_string()];
                    return Ok(vec![self.embed(
                        state,
                        call.instruction.id.clone(),
                        inputs,
                        pending,
                    )]);
                }
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
                    json!({"namespace": namespace, "query": clip(query), "memories": memories, "ranking": "bm25"}),
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

impl Retrieval {
    fn top_k(&self) -> usize {
        usize::try_from(self.top_k).unwrap_or(usize::MAX)
    }

    /// Puts the memories `found` before the prompt in `field` (each cut to
    /// `max_snippet_chars`), and their ids and the ranking used into `retrieved` and
    /// `retrieval_ranking`.
    fn enrich_with(
        &self,
        signal: &mut Signal,
        field: &str,
        found: &[(&Memory, f64)],
        ranking: &str,
    ) {
        if found.is_empty() {
            return;
        }
        let max = usize::try_from(self.max_snippet_chars).unwrap_or(usize::MAX);
        let prompt = signal.data[field].as_str().unwrap_or_default();
        let mut enriched = String::from("Relevant memories:\n");
        for (memory, _) in found {
            enriched.push_str("- ");
            enriched.extend(memory.text.chars().take(max));
            enriched.push('\n');
        }
        enriched.push('\n');
        enriched.push_str(prompt);
        signal.data[field] = Value::String(enriched);
        signal.data["retrieved"] = json!(found.iter().map(|(m, _)| &m.id).collect::<Vec<_>>());
        signal.data["retrieval_ranking"] = json!(ranking);
    }

    /// Enriches a held request with the memories closest to its prompt's embedding (in
    /// `answer`, an `ai.embed.response`), or by BM25 when the call failed.
    fn finish_enrichment(
        &self,
        state: &mut RetrievalState,
        signal: &mut Signal,
        namespace: &str,
        field: &str,
        answer: &Signal,
    ) {
        let Some(memories) = state.namespaces.get_mut(namespace) else {
            return;
        };
        let vector = serde_json::from_value::<EmbedReply>(answer.data.clone())
            .ok()
            .and_then(|reply| reply.embeddings)
            .and_then(|e| e.vectors.into_iter().next());
        match vector {
            Some(vector) => {
                let found = memories.recall_by_embedding(&vector, self.top_k());
                self.enrich_with(signal, field, &found, "embedding");
            }
            None => {
                tracing::warn!(
                    signal_type = %signal.signal_type,
                    "the prompt was not embedded; its memories are ranked by BM25"
                );
                let prompt = signal.data[field].as_str().unwrap_or_default().to_string();
                let found = memories.recall(&prompt, self.top_k());
                self.enrich_with(signal, field, &found, "bm25");
            }
        }
    }

    /// Asks for embeddings of `inputs`, remembering what for.
    fn embed(
        &self,
        state: &mut RetrievalState,
        id: String,
        inputs: Vec<String>,
        pending: PendingEmbedding,
    ) -> Directive {
        let call_id = format!("retrieval/{id}/1");
        state.pending.insert(call_id.clone(), pending);
        Directive::Embed(Box::new(EmbedCall {
            call_id,
            request_id: id,
            request: EmbeddingRequest {
                model: self.embedding_model.clone(),
                inputs,
            },
        }))
    }

    /// Embeddings arrived: store them (upsert), or rank by them (recall; by BM25 when the
    /// call failed).
    fn embedded(
        &self,
        state: &mut RetrievalState,
        data: &Value,
    ) -> Result<Vec<Directive>, ActionError> {
        let reply: EmbedReply = serde_json::from_value(data.clone())
            .map_err(|e| ActionError::invalid_params(EMBED_REPLY, e.to_string()))?;
        let Some(pending) = state.pending.remove(&reply.call_id) else {
            return Ok(Vec::new());
        };
        let vectors = reply.embeddings.map(|e| e.vectors);
        match pending {
            // The hook brings held requests back itself; their answers never route here.
            PendingEmbedding::Enrich { .. } => Ok(Vec::new()),
            PendingEmbedding::Upsert {
                namespace,
                memories,
            } => {
                match (vectors, state.namespaces.get_mut(&namespace)) {
                    (Some(vectors), Some(ns)) => ns.set_embeddings(&memories, vectors),
                    (None, _) => tracing::warn!(
                        error = ?reply.error,
                        "memories were not embedded; they are recalled by BM25 only"
                    ),
                    _ => {}
                }
                Ok(Vec::new())
            }
            PendingEmbedding::Recall {
                namespace,
                query,
                top_k,
                reply_id,
            } => {
                let k = usize::try_from(top_k).unwrap_or(usize::MAX);
                let query_vector = vectors.and_then(|v| v.into_iter().next());
                let (memories, ranking): (Vec<Value>, &str) = match (
                    state.namespaces.get_mut(&namespace),
                    &query_vector,
                ) {
                    (None, _) => (Vec::new(), "embedding"),
                    (Some(ns), Some(vector)) => (
                        ns.recall_by_embedding(vector, k)
                            .into_iter()
                            .map(|(m, score)| json!({"id": m.id, "text": m.text, "score": score}))
                            .collect(),
                        "embedding",
                    ),
                    (Some(ns), None) => (
                        ns.recall(&query, k)
                            .into_iter()
                            .map(|(m, score)| json!({"id": m.id, "text": m.text, "score": score}))
                            .collect(),
                        "bm25",
                    ),
                };
                let mut body = json!({"namespace": namespace, "query": clip(query), "memories": memories, "ranking": ranking});
                if let Some(error) = reply.error {
                    body["embedding_error"] = json!(error.message);
                }
                Ok(vec![Directive::Emit(Signal::with_id(
                    reply_id, RECALLED, body,
                ))])
            }
        }
    }
}

fn enriches(signal_type: &str) -> bool {
    signal_type == "chat.message"
        || signal_type == QUERY
        || (signal_type.starts_with("reasoning.") && signal_type.ends_with(".run"))
}
