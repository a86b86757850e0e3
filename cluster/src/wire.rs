//! Signals on the wire: CloudEvents 1.0 JSON (structured mode) in the message body, the
//! CloudEvent id as JetStream's `Nats-Msg-Id`, and the addressee in a header.

use agent_runtime::Signal;
use async_nats::HeaderMap;
use async_nats::jetstream::message::PublishMessage;

/// The header naming the agent a signal is for.
pub const AGENT_HEADER: &str = "Stratagem-Agent";

/// The CloudEvents structured-mode media type.
pub const CONTENT_TYPE: &str = "application/cloudevents+json";

/// The subject signals to `agent_type`'s shard `shard` are published on.
pub(crate) fn shard_subject(prefix: &str, agent_type: &str, shard: u32) -> String {
    format!("{prefix}.{agent_type}.{shard}")
}

/// A publish of `signal` to `agent`.
pub(crate) fn encode(agent: &str, signal: &Signal) -> Result<PublishMessage, serde_json::Error> {
    let payload = serde_json::to_vec(signal)?;
    Ok(PublishMessage::build()
        .payload(payload.into())
        .message_id(&signal.id)
        .header(AGENT_HEADER, agent)
        .header("Content-Type", CONTENT_TYPE))
}

/// The addressee and the signal of a message; an error says what is wrong with it.
pub(crate) fn decode(
    headers: Option<&HeaderMap>,
    payload: &[u8],
) -> Result<(String, Signal), String> {
    let agent = headers
        .and_then(|h| h.get(AGENT_HEADER))
        .map(|v| v.as_str().to_string())
        .ok_or_else(|| format!("the message has no `{AGENT_HEADER}` header naming its agent"))?;
    let signal = serde_json::from_slice(payload)
        .map_err(|e| format!("the message body is not a CloudEvents JSON signal: {e}"))?;
    Ok((agent, signal))
}
