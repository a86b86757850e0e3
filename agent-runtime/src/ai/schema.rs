//! Checking tool arguments against an action's JSON schema before the action runs, so the model
//! hears exactly what was wrong (a missing field, an unknown one, a wrong type).
//!
//! This covers the subset of JSON Schema that schemars generates for Rust types: `type`
//! (including type lists), `properties`, `required`, `additionalProperties`, `items`, `enum`,
//! `const`, `$ref` into `$defs`/`definitions`, `anyOf`/`oneOf`/`allOf`, and integer bounds
//! via `minimum`/`maximum`. Unknown keywords are ignored; the action's own deserialization
//! still checks what this does not.

use serde_json::{Map, Value};

/// Checks `value` against `schema`; returns every problem found, with its JSON path.
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    check(schema, schema, value, "$", &mut problems, 0);
    problems
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => value.is_number(),
        other => type_name(value) == other,
    }
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let path = reference.strip_prefix("#")?;
    if path.is_empty() {
        return Some(root);
    }
    root.pointer(path)
}

fn check(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>, depth: u32) {
    // A schema that refers to itself through `$ref` forever is not ours to loop on.
    if depth > 64 {
        return;
    }
    let Some(schema) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            out.push(format!("{at}: no value is allowed here"));
        }
        return;
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        match resolve(root, reference) {
            Some(target) => check(root, target, value, at, out, depth + 1),
            None => out.push(format!(
                "{at}: the schema refers to `{reference}`, which it lacks"
            )),
        }
    }
    if let Some(ty) = schema.get("type") {
        let ok = match ty {
            Value::String(t) => has_type(value, t),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| has_type(value, t)),
            _ => true,
        };
        if !ok {
            out.push(format!(
                "{at}: expected {}, found {}",
                describe(ty),
                type_name(value)
            ));
            return;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        out.push(format!(
            "{at}: {value} is not one of {}",
            Value::Array(options.clone())
        ));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        out.push(format!("{at}: expected {expected}, found {value}"));
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && n < min
    {
        out.push(format!("{at}: {n} is below the minimum {min}"));
    }
    if let (Some(max), Some(n)) = (
        schema.get("maximum").and_then(Value::as_f64),
        value.as_f64(),
    ) && n > max
    {
        out.push(format!("{at}: {n} is above the maximum {max}"));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let fits = options.iter().any(|option| {
                let mut inner = Vec::new();
                check(root, option, value, at, &mut inner, depth + 1);
                inner.is_empty()
            });
            if !fits {
                out.push(format!("{at}: {value} matches none of the allowed shapes"));
            }
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for part in all {
            check(root, part, value, at, out, depth + 1);
        }
    }
    if let Value::Object(map) = value {
        check_object(root, schema, map, at, out, depth);
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(
                root,
                item_schema,
                item,
                &format!("{at}[{i}]"),
                out,
                depth + 1,
            );
        }
    }
}

fn check_object(
    root: &Value,
    schema: &Map<String, Value>,
    map: &Map<String, Value>,
    at: &str,
    out: &mut Vec<String>,
    depth: u32,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                out.push(format!("{at}: missing required field `{name}`"));
            }
        }
    }
    for (key, field) in map {
        let path = format!("{at}.{key}");
        match properties.and_then(|p| p.get(key)) {
            Some(field_schema) => check(root, field_schema, field, &path, out, depth + 1),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let known: Vec<String> = properties
                        .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
                        .unwrap_or_default();
                    out.push(format!(
                        "{at}: unknown field `{key}`; allowed fields: {}",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ));
                }
                Some(extra @ Value::Object(_)) => check(root, extra, field, &path, out, depth + 1),
                _ => {}
            },
        }
    }
}

fn describe(ty: &Value) -> String {
    match ty {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::closed_schema;
    use schemars::JsonSchema;
    use serde_json::json;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Ticket {
        subject: String,
        priority: Option<u8>,
        tags: Vec<Tag>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Tag {
        Billing,
        Shipping,
    }

    #[test]
    fn accepts_what_fits_and_names_every_problem() {
        let schema = closed_schema::<Ticket>();
        assert!(validate(&schema, &json!({"subject": "late", "tags": ["Billing"]})).is_empty());
        assert!(
            validate(
                &schema,
                &json!({"subject": "late", "priority": 2, "tags": []})
            )
            .is_empty()
        );
        let problems = validate(
            &schema,
            &json!({"priority": "high", "tags": ["Refund"], "colour": "red"}),
        );
        let text = problems.join("\n");
        assert!(text.contains("missing required field `subject`"), "{text}");
        assert!(text.contains("$.priority"), "{text}");
        assert!(text.contains("$.tags[0]"), "{text}");
        assert!(text.contains("unknown field `colour`"), "{text}");
        assert_eq!(problems.len(), 4, "{text}");
    }

    #[test]
    fn a_non_object_is_a_type_error() {
        let schema = closed_schema::<Ticket>();
        assert_eq!(
            validate(&schema, &json!("subject=late")),
            ["$: expected object, found string"]
        );
    }
}
