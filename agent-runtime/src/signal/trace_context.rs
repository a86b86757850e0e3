//! W3C trace context in signals: the CloudEvents distributed tracing extension (`traceparent`,
//! `tracestate`), so that one trace spans the services a signal crosses.
//!
//! Following the W3C rules, a `traceparent` that does not parse is ignored (the trace starts
//! over), never a reason to refuse the signal.

use serde_json::Value;

use super::Signal;

/// The extension holding the W3C `traceparent` header value.
pub const TRACEPARENT: &str = "traceparent";
/// The extension holding the W3C `tracestate` header value.
pub const TRACESTATE: &str = "tracestate";

/// The longest `tracestate` kept (W3C: 32 members; 512 characters is what a vendor must at
/// least propagate).
const MAX_TRACESTATE: usize = 512;

/// A signal's W3C trace context.
///
/// ```
/// use agent_runtime::Signal;
/// use agent_runtime::signal::TraceContext;
/// use serde_json::json;
///
/// let incoming = Signal::new("order.paid", json!({}))
///     .with_extension("traceparent", json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
/// let context = TraceContext::of(&incoming).unwrap();
/// assert_eq!(context.trace_id(), "0af7651916cd43dd8448eb211c80319c");
/// assert!(context.sampled());
/// let reply = context.apply(Signal::new("order.shipped", json!({})));
/// assert_eq!(reply.extensions["traceparent"], incoming.extensions["traceparent"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

impl TraceContext {
    /// The context `traceparent` (and `tracestate`) describe, or `None` when `traceparent`
    /// does not follow the W3C format: `version-traceid-parentid-flags` in lowercase hex, ids
    /// not all zeros, version not `ff`.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        valid_traceparent(traceparent).then(|| TraceContext {
            traceparent: traceparent.to_string(),
            tracestate: tracestate
                .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE && s.is_ascii())
                .map(str::to_string),
        })
    }

    /// The context a signal carries in its `traceparent` and `tracestate` extensions.
    pub fn of(signal: &Signal) -> Option<Self> {
        let parent = signal.extensions.get(TRACEPARENT)?.as_str()?;
        let state = signal.extensions.get(TRACESTATE).and_then(Value::as_str);
        TraceContext::parse(parent, state)
    }

    /// `signal` carrying this context, unless it carries a valid one of its own.
    #[must_use]
    pub fn apply(&self, mut signal: Signal) -> Signal {
        self.apply_to(&mut signal);
        signal
    }

    /// Sets this context on `signal`, unless it carries a valid one of its own.
    pub fn apply_to(&self, signal: &mut Signal) {
        if TraceContext::of(signal).is_some() {
            return;
        }
        signal.extensions.insert(
            TRACEPARENT.to_string(),
            Value::from(self.traceparent.as_str()),
        );
        match &self.tracestate {
            Some(state) => {
                signal
                    .extensions
                    .insert(TRACESTATE.to_string(), Value::from(state.as_str()));
            }
            None => {
                signal.extensions.remove(TRACESTATE);
            }
        }
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, when there is one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id: 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The id of the span that sent the signal: 16 lowercase hex digits.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the sender recorded its span (the `sampled` flag).
    pub fn sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent[53..55], 16).is_ok_and(|flags| flags & 1 == 1)
    }
}

fn valid_traceparent(value: &str) -> bool {
    let hex = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    let b = value.as_bytes();
    if b.len() < 55 || !b.is_ascii() {
        return false;
    }
    let (version, trace_id, parent_id, flags) =
        (&value[0..2], &value[3..35], &value[36..52], &value[53..55]);
    let dashes = b[2] == b'-' && b[35] == b'-' && b[52] == b'-';
    let fields = hex(version) && hex(trace_id) && hex(parent_id) && hex(flags);
    // Version 00 is exactly 55 characters; a later version may append `-...` fields.
    let length = match version {
        "00" => b.len() == 55,
        "ff" => false,
        _ => b.len() == 55 || b[55] == b'-',
    };
    dashes && fields && length && nonzero(trace_id) && nonzero(parent_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_w3c_traceparent_parses_and_anything_else_is_ignored() {
        let context = TraceContext::parse(PARENT, Some("congo=t61rcWkgMzE")).unwrap();
        assert_eq!(context.trace_id(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(context.parent_id(), "b7ad6b7169203331");
        assert!(context.sampled());
        assert_eq!(context.tracestate(), Some("congo=t61rcWkgMzE"));
        assert!(
            TraceContext::parse(
                "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00-extra",
                None
            )
            .is_some_and(|c| !c.sampled()),
            "a later version may add fields"
        );
        for bad in [
            "00-abc",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad}");
        }
    }

    #[test]
    fn applying_keeps_a_signals_own_valid_context() {
        let context = TraceContext::parse(PARENT, None).unwrap();
        let bare =
            context.apply(Signal::new("a.b", json!({})).with_extension(TRACESTATE, json!("x=1")));
        assert_eq!(bare.extensions[TRACEPARENT], PARENT);
        assert!(
            !bare.extensions.contains_key(TRACESTATE),
            "a stale tracestate goes"
        );
        let own = "00-11111111111111111111111111111111-2222222222222222-00";
        let kept =
            context.apply(Signal::new("a.b", json!({})).with_extension(TRACEPARENT, json!(own)));
        assert_eq!(kept.extensions[TRACEPARENT], own);
        let broken =
            context.apply(Signal::new("a.b", json!({})).with_extension(TRACEPARENT, json!("00-x")));
        assert_eq!(broken.extensions[TRACEPARENT], PARENT);
    }
}
