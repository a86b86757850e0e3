//! [`ClusterClient`]: sends signals to agents wherever they run.

use std::time::Duration;

use agent_runtime::interrupt::{RESUME_SIGNAL, Resume};
use agent_runtime::signal::ContentMode;
use agent_runtime::{AgentSpec, Signal};
use async_nats::jetstream::{self, stream};

use crate::error::ClusterError;
use crate::options::ClusterOptions;
use crate::placement::shard_of;
use crate::wire;

/// Publishes signals to clustered agents through JetStream; cheap to clone.
///
/// A signal goes to the subject of its agent's shard with its CloudEvent id as `Nats-Msg-Id`,
/// so JetStream drops a second publish of the same signal within its duplicate window (two
/// minutes), and `send` returns once JetStream has stored it. The message is in the options'
/// [`content_mode`](ClusterOptions::content_mode).
#[derive(Clone)]
pub struct ClusterClient {
    pub(crate) js: jetstream::Context,
    pub(crate) client: async_nats::Client,
    url: String,
    prefix: String,
    stream: String,
    shards: u32,
    content_mode: ContentMode,
}

impl ClusterClient {
    /// Connects to NATS at `url`; `options` must agree with the nodes' on `shards`, `prefix`
    /// and `stream`.
    pub async fn connect(url: &str, options: &ClusterOptions) -> Result<Self, ClusterError> {
        options.validate().map_err(ClusterError::Options)?;
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(5))
            .connect(url)
            .await
            .map_err(|e| {
                ClusterError::nats(
                    url,
                    format!("cannot connect ({e}); is `nats-server -js` running there?"),
                )
            })?;
        Ok(ClusterClient {
            js: jetstream::new(client.clone()),
            client,
            url: url.to_string(),
            prefix: options.prefix.clone(),
            stream: options.stream.clone(),
            shards: options.shards,
            content_mode: options.content_mode,
        })
    }

    /// The stream signals to agents of `agent_type` are kept in.
    pub fn stream_name(&self, agent_type: &str) -> String {
        format!("{}_{agent_type}", self.stream)
    }

    /// Creates the stream of `agent_type` if it does not exist: file storage, work-queue
    /// retention (a signal is deleted once acknowledged), one subject per shard.
    pub async fn ensure_stream(&self, agent_type: &str) -> Result<stream::Stream, ClusterError> {
        self.js
            .get_or_create_stream(stream::Config {
                name: self.stream_name(agent_type),
                subjects: vec![format!("{}.{agent_type}.*", self.prefix)],
                retention: stream::RetentionPolicy::WorkQueue,
                storage: stream::StorageType::File,
                duplicate_window: Duration::from_secs(120),
                ..Default::default()
            })
            .await
            .map_err(|e| ClusterError::nats(&self.url, format!("cannot create the stream: {e}")))
    }

    /// Sends `signal` to the agent `agent_id` of type `S`, returning once JetStream stored it.
    pub async fn send<S: AgentSpec>(
        &self,
        agent_id: &str,
        signal: &Signal,
    ) -> Result<(), ClusterError> {
        self.send_to(S::NAME, agent_id, signal).await
    }

    /// [`send`](ClusterClient::send) by agent type name.
    pub async fn send_to(
        &self,
        agent_type: &str,
        agent_id: &str,
        signal: &Signal,
    ) -> Result<(), ClusterError> {
        let subject =
            wire::shard_subject(&self.prefix, agent_type, shard_of(agent_id, self.shards));
        let message = wire::encode(agent_id, signal, self.content_mode)
            .map_err(|e| ClusterError::nats(&self.url, format!("cannot encode the signal: {e}")))?;
        let fail = |e: &dyn std::fmt::Display| {
            ClusterError::nats(
                &self.url,
                format!(
                    "cannot publish to `{subject}` ({e}); a node serving `{agent_type}` creates its stream, or call `ensure_stream`"
                ),
            )
        };
        let ack = self
            .js
            .send_publish(subject.clone(), message)
            .await
            .map_err(|e| fail(&e))?;
        ack.await.map_err(|e| fail(&e))?;
        Ok(())
    }

    /// Answers the pending interrupt `interrupt_id` of the agent `agent_id` of type `S` with
    /// `value` (see `agent_runtime::interrupt`), wherever the agent runs, returning once
    /// JetStream stored the answer. The answer's id is derived from the interrupt's
    /// (`<interrupt id>/resume`), so a retried `resume` is one answer: JetStream drops the
    /// second publish, and the agent recognises the id after a redelivery or a takeover.
    ///
    /// The agent checks the answer when it takes it: an unknown or already answered id, or a
    /// value that is not the interrupt's resume type, changes nothing and is logged on the
    /// node that runs it. Read the outcome from the agent's state.
    pub async fn resume<S: AgentSpec>(
        &self,
        agent_id: &str,
        interrupt_id: &str,
        value: impl serde::Serialize,
    ) -> Result<(), ClusterError> {
        let value = serde_json::to_value(value).map_err(|e| {
            ClusterError::Message(format!(
                "the answer to interrupt `{interrupt_id}` does not serialize: {e}"
            ))
        })?;
        let answer = Resume {
            id: interrupt_id.to_string(),
            value,
        };
        let data = serde_json::to_value(answer).unwrap_or_default();
        let signal = Signal::with_id(format!("{interrupt_id}/resume"), RESUME_SIGNAL, data);
        self.send::<S>(agent_id, &signal).await
    }

    /// The NATS URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The subject prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The number of shards.
    pub fn shards(&self) -> u32 {
        self.shards
    }

    /// How signals are put in messages.
    pub fn content_mode(&self) -> ContentMode {
        self.content_mode
    }
}

impl std::fmt::Debug for ClusterClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterClient")
            .field("url", &self.url)
            .field("prefix", &self.prefix)
            .field("shards", &self.shards)
            .field("content_mode", &self.content_mode)
            .finish_non_exhaustive()
    }
}
