//! [`NatsTransport`]: signals agents emit, published on NATS: to their recipient's shard on
//! JetStream when addressed, for whoever listens otherwise.

use std::sync::Arc;
use std::time::Duration;

use agent_runtime::Signal;
use agent_runtime::server::{Origin, Transport, TransportError};
use agent_runtime::signal::ContentMode;
use async_nats::jetstream;

use crate::address::recipient;
use crate::client::ClusterClient;
use crate::outbox::Outbox;
use crate::placement::shard_of;
use crate::wire;

/// Publishes the signals agents emit.
///
/// - A signal addressed to an agent ([`address`](crate::address), the `recipient` extension)
///   goes to that agent's shard on JetStream, with its id as `Nats-Msg-Id`, so the node that
///   runs the recipient (this one or another) consumes it like any signal sent with
///   [`ClusterClient::send`]. Inside a [`Cluster`](crate::Cluster) the emitting agent's
///   checkpoint waits until JetStream stored it: the signal whose step emitted it is
///   acknowledged only after that, so a crash makes the step run again and emit again (at least
///   once; the recipient counts a repeated id once).
/// - Any other signal is published on `<prefix>.events.<agent type>` (core NATS, the emitting
///   agent's id in the `Stratagem-Agent` header), at most once, for whoever listens.
///
/// Either way the message is in the CloudEvents NATS binding's
/// [`content_mode`](NatsTransport::content_mode): structured (CloudEvents JSON, the default)
/// or binary (`ce-*` headers, the payload as the body).
///
/// `publish` does not block the agent's task: it hands the message to a spawned task.
#[derive(Debug, Clone)]
pub struct NatsTransport {
    client: async_nats::Client,
    js: jetstream::Context,
    prefix: String,
    shards: u32,
    outbox: Option<Arc<Outbox>>,
    mode: ContentMode,
}

/// How often an addressed signal is offered to JetStream before its emitter's checkpoint fails.
const PUBLISH_ATTEMPTS: u32 = 4;

impl NatsTransport {
    /// A transport over a connected client, for a cluster of 32 shards (the default; see
    /// [`shards`](NatsTransport::shards)).
    pub fn new(client: async_nats::Client, prefix: impl Into<String>) -> Self {
        NatsTransport {
            js: jetstream::new(client.clone()),
            client,
            prefix: prefix.into(),
            shards: 32,
            outbox: None,
            mode: ContentMode::Structured,
        }
    }

    /// A transport agreeing with `client` on the prefix, the number of shards and the content
    /// mode.
    pub fn for_client(client: &ClusterClient) -> Self {
        NatsTransport::new(client.client.clone(), client.prefix())
            .shards(client.shards())
            .content_mode(client.content_mode())
    }

    /// How signals are put in messages (structured by default); receivers read both modes.
    #[must_use]
    pub fn content_mode(mut self, mode: ContentMode) -> Self {
        self.mode = mode;
        self
    }

    /// The number of shards of the cluster addressed signals go to.
    #[must_use]
    pub fn shards(mut self, shards: u32) -> Self {
        self.shards = shards.max(1);
        self
    }

    /// Tracks addressed publishes so checkpoints can wait for them.
    pub(crate) fn with_outbox(mut self, outbox: Arc<Outbox>) -> Self {
        self.outbox = Some(outbox);
        self
    }

    /// The subject the unaddressed signals of agents of `agent_type` are published on.
    pub fn subject(&self, agent_type: &str) -> String {
        format!("{}.events.{agent_type}", self.prefix)
    }
}

impl Transport for NatsTransport {
    fn name(&self) -> &str {
        "nats"
    }

    fn publish(&self, origin: &Origin<'_>, signal: &Signal) -> Result<(), TransportError> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            TransportError::new("the nats transport runs only inside a tokio runtime")
        })?;
        if let Some((agent_type, agent)) = recipient(signal).map_err(TransportError::new)? {
            let subject =
                wire::shard_subject(&self.prefix, agent_type, shard_of(agent, self.shards));
            let message = wire::encode(agent, signal, self.mode)
                .map_err(|e| TransportError::new(format!("cannot encode the signal: {e}")))?;
            let publish = handle.spawn(store_in_jetstream(self.js.clone(), subject, message));
            if let Some(outbox) = &self.outbox {
                outbox.push(origin.id, publish);
            }
            return Ok(());
        }
        let (headers, payload) = wire::message(origin.id, signal, self.mode)
            .map_err(|e| TransportError::new(format!("cannot encode the signal: {e}")))?;
        let (client, subject) = (self.client.clone(), self.subject(origin.agent));
        handle.spawn(async move {
            if let Err(e) = client
                .publish_with_headers(subject, headers, payload.into())
                .await
            {
                tracing::warn!(error = %e, "cannot publish an emitted signal on nats");
            }
        });
        Ok(())
    }
}

/// Publishes until JetStream acknowledges storing the message (a repeat is dropped by its
/// `Nats-Msg-Id`), retrying with backoff a few times.
async fn store_in_jetstream(
    js: jetstream::Context,
    subject: String,
    message: jetstream::message::PublishMessage,
) -> Result<(), String> {
    let mut delay = Duration::from_millis(50);
    let mut attempt = 1;
    loop {
        let stored = match js.send_publish(subject.clone(), message.clone()).await {
            Ok(ack) => ack.await.map(drop).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match stored {
            Ok(()) => return Ok(()),
            Err(e) if attempt >= PUBLISH_ATTEMPTS => {
                return Err(format!(
                    "JetStream did not store the signal for `{subject}` ({e}); is a node serving that agent type running (it creates the stream)?"
                ));
            }
            Err(e) => {
                tracing::debug!(subject, error = %e, attempt, "retrying an addressed signal");
                tokio::time::sleep(delay).await;
                delay *= 2;
                attempt += 1;
            }
        }
    }
}
