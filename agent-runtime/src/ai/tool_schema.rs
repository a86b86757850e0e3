//! Tool schemas as providers' validators accept them.
//!
//! An action's schema comes from schemars: it names its dialect (`$schema`) and marks Rust
//! number types with formats of its own (`uint32`, `double`, ...). Strict validators (OpenAI's
//! structured outputs among them) refuse both, so what goes to a provider keeps every
//! constraint but those: the bounds schemars emits with such formats (`minimum: 0`) stay.
//! With `strict`, every property is also listed in `required`, as OpenAI's strict mode demands
//! (`Option` fields stay optional in meaning: their schema already allows `null`).

use serde_json::{Map, Value};

/// The formats JSON Schema (2020-12) defines; any other `format` is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose value is one subschema.
const SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
];
/// Keywords whose value is a list of subschemas.
const SUBSCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas (names are not keywords).
const SUBSCHEMA_MAPS: &[&str] = &["properties", "$defs", "definitions", "patternProperties"];

/// `schema` as it goes to a provider: no `$schema`, only standard `format`s, and with `strict`
/// every property required.
///
/// ```
/// use agent_runtime::ai::provider_schema;
/// use serde_json::json;
/// let schema = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "properties": {
///         "count": {"type": "integer", "format": "uint32", "minimum": 0},
///         "format": {"type": ["string", "null"], "format": "date-time"},
///     },
///     "required": ["count"],
///     "additionalProperties": false,
/// });
/// assert_eq!(
///     provider_schema(&schema, true),
///     json!({
///         "type": "object",
///         "properties": {
///             "count": {"type": "integer", "minimum": 0},
///             "format": {"type": ["string", "null"], "format": "date-time"},
///         },
///         "required": ["count", "format"],
///         "additionalProperties": false,
///     })
/// );
/// ```
pub fn provider_schema(schema: &Value, strict: bool) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
    }
    clean(&mut schema, strict, 0);
    schema
}

fn clean(schema: &mut Value, strict: bool, depth: u32) {
    // Schemas come from the agent's own types, but a hand-written one may nest without end.
    if depth > 128 {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    if strict {
        require_every_property(map);
    }
    for key in SUBSCHEMA {
        if let Some(sub) = map.get_mut(*key) {
            clean(sub, strict, depth + 1);
        }
    }
    for key in SUBSCHEMA_LISTS {
        if let Some(Value::Array(subs)) = map.get_mut(*key) {
            subs.iter_mut().for_each(|s| clean(s, strict, depth + 1));
        }
    }
    for key in SUBSCHEMA_MAPS {
        if let Some(Value::Object(subs)) = map.get_mut(*key) {
            subs.values_mut().for_each(|s| clean(s, strict, depth + 1));
        }
    }
}

fn require_every_property(map: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = map.get("properties") else {
        return;
    };
    let mut required: Vec<Value> = map
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let listed: std::collections::HashSet<String> = required
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    required.extend(
        properties
            .keys()
            .filter(|k| !listed.contains(*k))
            .map(|k| Value::String(k.clone())),
    );
    map.insert("required".into(), Value::Array(required));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::closed_schema;
    use serde_json::json;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Refund {
        order: u64,
        amount: f64,
        small: u8,
        reason: Option<String>,
        lines: Vec<Line>,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Line {
        sku: String,
        quantity: u32,
        gift: Option<bool>,
    }

    /// Every `format` anywhere in `schema`, skipping property names.
    fn formats(schema: &Value, out: &mut Vec<String>) {
        let Value::Object(map) = schema else {
            if let Value::Array(items) = schema {
                items.iter().for_each(|i| formats(i, out));
            }
            return;
        };
        for (key, value) in map {
            if key == "format" {
                out.push(value.to_string());
            } else {
                formats(value, out);
            }
        }
    }

    #[test]
    fn what_schemars_emits_loses_its_dialect_and_rust_formats_but_keeps_bounds() {
        let original = closed_schema::<Refund>();
        let mut found = Vec::new();
        formats(&original, &mut found);
        assert!(
            !found.is_empty(),
            "schemars marks number formats: {original}"
        );
        assert!(original.get("$schema").is_some());

        let sent = provider_schema(&original, false);
        let mut found = Vec::new();
        formats(&sent, &mut found);
        assert_eq!(found, Vec::<String>::new(), "{sent}");
        assert!(sent.get("$schema").is_none());
        assert_eq!(sent["properties"]["small"]["maximum"], 255);
        assert_eq!(sent["required"], original["required"], "not strict");
        assert_eq!(sent["$defs"]["Line"]["additionalProperties"], false);
    }

    #[test]
    fn strict_requires_every_property_at_every_level() {
        let sent = provider_schema(&closed_schema::<Refund>(), true);
        let required: Vec<&str> = sent["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for name in ["order", "amount", "small", "reason", "lines"] {
            assert!(required.contains(&name), "{name} in {required:?}");
        }
        assert_eq!(
            sent["$defs"]["Line"]["required"],
            json!(["sku", "quantity", "gift"])
        );
    }
}
