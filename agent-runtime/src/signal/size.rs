//! An upper bound of a signal's size in the CloudEvents JSON format, counted without writing
//! it: a mailbox that refuses signals above a size settles almost every signal with it, and
//! serializes only those that might be too large.

use serde_json::Value;

use super::Signal;

/// The most bytes a JSON string of `len` bytes takes: every byte escaped as `\u00XX`, quoted.
fn text(len: usize) -> usize {
    len.saturating_mul(6).saturating_add(2)
}

/// The most bytes any number takes in JSON (`-1.7976931348623157e308` is 23).
const NUMBER: usize = 24;

/// Attribute names, colons, commas, braces and the time, generously.
const FRAME: usize = 256;

impl Signal {
    /// At least as many bytes as `serde_json::to_vec(self)` writes.
    pub(crate) fn json_size_bound(&self) -> usize {
        let mut bound = FRAME;
        for attribute in [
            &self.spec_version,
            &self.id,
            &self.source,
            &self.signal_type,
        ] {
            bound = bound.saturating_add(text(attribute.len()));
        }
        for attribute in [&self.subject, &self.data_content_type]
            .into_iter()
            .flatten()
        {
            bound = bound.saturating_add(text(attribute.len()));
        }
        if let Some(schema) = self.data_schema() {
            bound = bound.saturating_add(text(schema.len()));
        }
        if let Some(bytes) = self.data_bytes() {
            // Base64: four characters per three bytes, quoted.
            bound = bound.saturating_add(bytes.len().div_ceil(3).saturating_mul(4) + 2);
        }
        bound = bound.saturating_add(value_bound(&self.data));
        for (name, value) in &self.extensions {
            bound = bound
                .saturating_add(text(name.len()) + 2)
                .saturating_add(value_bound(value));
        }
        bound
    }
}

/// The most bytes `value` takes as JSON; a loop over a stack, so no depth overflows it.
fn value_bound(value: &Value) -> usize {
    let mut bound = 0usize;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        bound = bound.saturating_add(match value {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(_) => NUMBER,
            Value::String(s) => text(s.len()),
            Value::Array(items) => {
                pending.extend(items);
                // Brackets and a comma after each item.
                2 + items.len()
            }
            Value::Object(members) => {
                let mut frame = 2usize;
                for (name, item) in members {
                    // Quoted escaped name, colon, comma.
                    frame = frame.saturating_add(text(name.len()) + 2);
                    pending.push(item);
                }
                frame
            }
        });
    }
    bound
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_bound_is_never_below_the_written_size() {
        let deep = (0..300).fold(json!("\u{1}\"\\"), |inner, _| json!({"k\n": [inner]}));
        let signals = [
            Signal::new("t", Value::Null),
            Signal::new(
                "order.paid",
                json!({"amount": -1.7976931348623157e308, "ok": true, "n": null}),
            )
            .with_subject("\u{0}\u{1f}\"\\")
            .with_extension("attempt", json!(u64::MAX))
            .with_data_schema("https://example.com/s.json"),
            Signal::new("blob", Value::Null).with_bytes("application/octet-stream", vec![7; 1000]),
            Signal::new("deep", json!({"x": [1, 2.5, "y"]})),
        ];
        for signal in &signals {
            let written = serde_json::to_vec(signal).unwrap().len();
            assert!(
                signal.json_size_bound() >= written,
                "{} < {written}",
                signal.json_size_bound()
            );
        }
        // A deeply nested payload: the bound still covers what is written.
        let deep = Signal::new("deep", deep);
        let written = serde_json::to_vec(&deep).unwrap().len();
        assert!(deep.json_size_bound() >= written);
    }
}
