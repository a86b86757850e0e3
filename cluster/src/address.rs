//! Signals addressed to an agent: what one clustered agent emits for another, wherever the
//! other runs.

use agent_runtime::{AgentSpec, Signal};
use serde_json::Value;

/// The CloudEvents extension attribute naming the agent an emitted signal is for, as
/// `<agent type>/<agent id>`.
///
/// A node's transport sends a signal carrying it to the recipient's shard on JetStream, like a
/// `ClusterClient::send`: durably, with its id as
/// `Nats-Msg-Id`, to whichever node runs the recipient.
pub const RECIPIENT: &str = "recipient";

/// `signal`, addressed to the agent `agent_id` of type `S` (see [`RECIPIENT`]).
///
/// ```
/// use agent_runtime::Signal;
/// use serde_json::json;
/// # #[agent_macros::agent(strategy = Direct, crate = agent_runtime)]
/// # #[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
/// # struct Order {}
/// let signal = agent_cluster::address::<Order>(Signal::new("order.paid", json!({})), "order-17");
/// assert_eq!(signal.extensions["recipient"], "Order/order-17");
/// assert_eq!(agent_cluster::recipient(&signal), Ok(Some(("Order", "order-17"))));
/// ```
pub fn address<S: AgentSpec>(signal: Signal, agent_id: &str) -> Signal {
    address_to(signal, S::NAME, agent_id)
}

/// [`address`] by agent type name.
pub fn address_to(signal: Signal, agent_type: &str, agent_id: &str) -> Signal {
    signal.with_extension(RECIPIENT, Value::String(format!("{agent_type}/{agent_id}")))
}

/// The agent type and id `signal` is addressed to, if it is; an error says what is wrong with
/// its [`RECIPIENT`] attribute.
pub fn recipient(signal: &Signal) -> Result<Option<(&str, &str)>, String> {
    let Some(value) = signal.extensions.get(RECIPIENT) else {
        return Ok(None);
    };
    let parsed = value.as_str().and_then(|v| v.split_once('/'));
    match parsed {
        Some((agent_type, id)) if is_token(agent_type) && !id.is_empty() => {
            Ok(Some((agent_type, id)))
        }
        _ => Err(format!(
            "the `{RECIPIENT}` extension is {value}; write `<agent type>/<agent id>`, e.g. `Order/order-17` (`agent_cluster::address` does)"
        )),
    }
}

/// Whether `s` can be one token of a NATS subject (agent type names are Rust identifiers).
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_back_what_it_writes_and_explains_the_rest() {
        let signal = address_to(Signal::new("a", json!({})), "Order", "eu/17");
        assert_eq!(recipient(&signal), Ok(Some(("Order", "eu/17"))));
        assert_eq!(recipient(&Signal::new("a", json!({}))), Ok(None));
        for bad in [json!("Order"), json!("/17"), json!("Or.der/17"), json!(3)] {
            let signal = Signal::new("a", json!({})).with_extension(RECIPIENT, bad.clone());
            let error = recipient(&signal).unwrap_err();
            assert!(
                error.contains("`<agent type>/<agent id>`"),
                "{bad}: {error}"
            );
        }
    }
}
