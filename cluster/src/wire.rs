//! Signals on the wire, by the CloudEvents NATS protocol binding: structured mode (CloudEvents
//! JSON in the body, `Content-Type: application/cloudevents+json`) or binary mode (attributes
//! as `ce-*` headers by the same mapping as the HTTP binding, `agent_runtime::signal::Binding`,
//! the payload as the body). Either way the CloudEvent id is JetStream's `Nats-Msg-Id` and the
//! addressee is in a header. A receiver reads both modes: a `content-type` of
//! `application/cloudevents` means structured, anything else binary, as the binding says.

use agent_runtime::Signal;
use agent_runtime::signal::{Binding, ContentMode};
use async_nats::HeaderMap;
use async_nats::jetstream::message::PublishMessage;

use crate::error::ClusterError;

/// The header naming the agent a signal is for.
pub const AGENT_HEADER: &str = "Stratagem-Agent";

/// The CloudEvents structured-mode media type.
pub const CONTENT_TYPE: &str = "application/cloudevents+json";

/// The media types whose `content-type` marks a structured message (matched without case).
const STRUCTURED_PREFIX: &str = "application/cloudevents";

/// The subject signals to `agent_type`'s shard `shard` are published on.
pub(crate) fn shard_subject(prefix: &str, agent_type: &str, shard: u32) -> String {
    format!("{prefix}.{agent_type}.{shard}")
}

/// The headers and body of a message carrying `signal`, naming `agent` (its addressee, or
/// for an unaddressed signal its emitter).
pub(crate) fn message(
    agent: &str,
    signal: &Signal,
    mode: ContentMode,
) -> Result<(HeaderMap, Vec<u8>), serde_json::Error> {
    let mut headers = HeaderMap::new();
    headers.insert(AGENT_HEADER, agent);
    headers.insert("Nats-Msg-Id", signal.id.as_str());
    let body = match mode {
        ContentMode::Structured => {
            headers.insert("Content-Type", CONTENT_TYPE);
            serde_json::to_vec(signal)?
        }
        ContentMode::Binary => {
            let (attributes, body) = Binding::Nats.to_binary(signal);
            for (name, value) in &attributes {
                headers.insert(name.as_str(), value.as_str());
            }
            body
        }
    };
    Ok((headers, body))
}

/// A JetStream publish of `signal` to `agent`.
pub(crate) fn encode(
    agent: &str,
    signal: &Signal,
    mode: ContentMode,
) -> Result<PublishMessage, serde_json::Error> {
    let (headers, body) = message(agent, signal, mode)?;
    Ok(PublishMessage::build()
        .headers(headers)
        .payload(body.into()))
}

/// The content mode a received message is in.
fn mode_of(headers: Option<&HeaderMap>) -> Result<ContentMode, String> {
    let content_type = headers.and_then(|h| {
        h.iter()
            .find(|(name, _)| AsRef::<str>::as_ref(name).eq_ignore_ascii_case("content-type"))
            .and_then(|(_, values)| values.first())
    });
    let Some(content_type) = content_type else {
        return Ok(ContentMode::Binary);
    };
    let essence = content_type.as_str().trim().to_ascii_lowercase();
    if !essence.starts_with(STRUCTURED_PREFIX) {
        return Ok(ContentMode::Binary);
    }
    if essence.starts_with("application/cloudevents-batch") {
        return Err(
            "the NATS binding has no batched mode; publish one CloudEvent per message".to_string(),
        );
    }
    Ok(ContentMode::Structured)
}

/// The addressee and the signal of a message, in either content mode; an error says what is
/// wrong with it.
pub(crate) fn decode(
    headers: Option<&HeaderMap>,
    payload: &[u8],
) -> Result<(String, Signal), String> {
    let agent = headers
        .and_then(|h| h.get(AGENT_HEADER))
        .map(|v| v.as_str().to_string())
        .ok_or_else(|| format!("the message has no `{AGENT_HEADER}` header naming its agent"))?;
    let signal = match mode_of(headers)? {
        ContentMode::Structured => serde_json::from_slice(payload)
            .map_err(|e| format!("the message body is not a CloudEvents JSON signal: {e}"))?,
        ContentMode::Binary => {
            let pairs = headers.into_iter().flat_map(|h| {
                h.iter().flat_map(|(name, values)| {
                    values
                        .iter()
                        .map(move |v| (AsRef::<str>::as_ref(name), v.as_str()))
                })
            });
            Binding::Nats
                .from_binary(pairs, payload)
                .map_err(|e| format!("the message is not a CloudEvent in binary mode: {e}"))?
        }
    };
    Ok((agent, signal))
}

/// Reads a message the cluster published, in either content mode: the agent it names (its
/// addressee, or on `<prefix>.events.<agent type>` the agent that emitted it) and its signal,
/// with every CloudEvents rule checked.
///
/// ```no_run
/// # async fn demo(client: async_nats::Client) -> Result<(), Box<dyn std::error::Error>> {
/// use futures::StreamExt;
/// let mut events = client.subscribe("stratagem.events.Desk").await?;
/// while let Some(message) = events.next().await {
///     let (agent, signal) = agent_cluster::read_message(&message)?;
///     println!("{agent} emitted {}", signal.signal_type);
/// }
/// # Ok(())
/// # }
/// ```
pub fn read_message(message: &async_nats::Message) -> Result<(String, Signal), ClusterError> {
    decode(message.headers.as_ref(), &message.payload).map_err(ClusterError::Message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, *value);
        }
        map
    }

    const BINARY: [(&str, &str); 5] = [
        (AGENT_HEADER, "desk-1"),
        ("ce-specversion", "1.0"),
        ("ce-id", "7"),
        ("ce-source", "/shop"),
        ("ce-type", "order.paid"),
    ];

    #[test]
    fn both_modes_round_trip_with_the_addressee() {
        let signal = Signal::with_id("7", "order.paid", json!({"order": 7}))
            .with_subject("order 7")
            .with_extension("urgent", json!("yes"));
        for mode in [ContentMode::Structured, ContentMode::Binary] {
            let (map, body) = message("desk-1", &signal, mode).unwrap();
            assert_eq!(map.get("Nats-Msg-Id").map(|v| v.as_str()), Some("7"));
            let has_content_type = map.get("Content-Type").is_some();
            assert_eq!(has_content_type, mode == ContentMode::Structured);
            let (agent, back) = decode(Some(&map), &body).unwrap();
            assert_eq!((agent.as_str(), back), ("desk-1", signal.clone()));
        }
    }

    #[test]
    fn the_content_type_chooses_the_mode() {
        // A structured message from another publisher, with parameters and in capitals.
        let map = headers(&[
            (AGENT_HEADER, "desk-1"),
            (
                "content-type",
                "Application/CloudEvents+JSON; charset=utf-8",
            ),
        ]);
        let body = br#"{"specversion":"1.0","id":"1","source":"/s","type":"a.b"}"#;
        assert_eq!(decode(Some(&map), body).unwrap().1.id, "1");
        // No content type: binary, whose JSON body is the data.
        let map = headers(&BINARY);
        let (_, signal) = decode(Some(&map), br#"{"n":1}"#).unwrap();
        assert_eq!(signal.data, json!({"n": 1}));
        // Another content type: binary too, read as `datacontenttype`.
        let mut pairs = BINARY.to_vec();
        pairs.push(("Content-Type", "text/plain"));
        let (_, signal) = decode(Some(&headers(&pairs)), b"hello").unwrap();
        assert_eq!(signal.data, json!("hello"));
    }

    #[test]
    fn what_the_binding_refuses_is_refused() {
        let mut pairs = BINARY.to_vec();
        pairs[1] = ("ce-specversion", "0.3");
        let error = decode(Some(&headers(&pairs)), b"").unwrap_err();
        assert!(error.contains("`specversion`"), "{error}");
        let error = decode(Some(&headers(&BINARY[1..])), b"").unwrap_err();
        assert!(error.contains(AGENT_HEADER), "{error}");
        let map = headers(&[
            (AGENT_HEADER, "desk-1"),
            ("Content-Type", "application/cloudevents-batch+json"),
        ]);
        let error = decode(Some(&map), b"[]").unwrap_err();
        assert!(error.contains("no batched mode"), "{error}");
        let map = headers(&[(AGENT_HEADER, "desk-1"), ("Content-Type", CONTENT_TYPE)]);
        let body = br#"{"specversion":"1.0","id":"","source":"/s","type":"a.b"}"#;
        let error = decode(Some(&map), body).unwrap_err();
        assert!(error.contains("`id`"), "{error}");
        let mut pairs = BINARY.to_vec();
        pairs.push(("ce-Bad.Name", "x"));
        let error = decode(Some(&headers(&pairs)), b"").unwrap_err();
        assert!(error.contains("bad.name"), "{error}");
    }
}
