//! [`NatsTransport`]: signals agents emit, published on NATS for whoever listens.

use agent_runtime::Signal;
use agent_runtime::server::{Origin, Transport, TransportError};

use crate::wire;

/// Publishes every signal an agent emits on `<prefix>.events.<agent type>` (core NATS,
/// CloudEvents JSON, the emitting agent's id in the `Stratagem-Agent` header).
///
/// `publish` must not block the agent's task: it hands the message to the NATS client's
/// buffer from a spawned task. Delivery to listeners is at most once (core NATS); signals
/// that must not be lost are sent to agents through [`ClusterClient`](crate::ClusterClient).
#[derive(Debug, Clone)]
pub struct NatsTransport {
    client: async_nats::Client,
    prefix: String,
}

impl NatsTransport {
    /// A transport over a connected client.
    pub fn new(client: async_nats::Client, prefix: impl Into<String>) -> Self {
        NatsTransport {
            client,
            prefix: prefix.into(),
        }
    }

    /// The subject the signals of agents of `agent_type` are published on.
    pub fn subject(&self, agent_type: &str) -> String {
        format!("{}.events.{agent_type}", self.prefix)
    }
}

impl Transport for NatsTransport {
    fn name(&self) -> &str {
        "nats"
    }

    fn publish(&self, origin: &Origin<'_>, signal: &Signal) -> Result<(), TransportError> {
        let payload = serde_json::to_vec(signal)
            .map_err(|e| TransportError::new(format!("cannot encode the signal: {e}")))?;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(wire::AGENT_HEADER, origin.id);
        headers.insert("Nats-Msg-Id", signal.id.as_str());
        headers.insert("Content-Type", wire::CONTENT_TYPE);
        let (client, subject) = (self.client.clone(), self.subject(origin.agent));
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            TransportError::new("the nats transport runs only inside a tokio runtime")
        })?;
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
