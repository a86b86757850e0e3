//! Checking tool arguments against an action's JSON schema before the action runs, so the model
//! hears exactly what was wrong (a missing field, an unknown one, a wrong type, a string too long).
//!
//! The validator enforces, by the JSON Schema 2020-12 rules, every keyword schemars emits for
//! the Rust types tools take ([`ENFORCED`]):
//!
//! | keyword | emitted by schemars for |
//! |---|---|
//! | `type` (one or a list) | every type; `["T", "null"]` for `Option<T>` |
//! | `properties`, `required`, `additionalProperties` | structs, maps (`additionalProperties: {..}`) |
//! | `items`, `prefixItems`, `minItems`, `maxItems` | `Vec<T>`, arrays `[T; N]`, tuples |
//! | `uniqueItems` | `HashSet`/`BTreeSet` |
//! | `minLength`, `maxLength` | `#[schemars(length(..))]` on strings |
//! | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` | unsigned and small integers, `NonZero*`, `#[schemars(range(..))]` |
//! | `enum`, `const` | unit-variant enums, tagged enums |
//! | `anyOf`, `oneOf`, `allOf` | `Option<Struct>`, enums with data, flattened structs |
//! | `$ref` (a `#` JSON pointer), `$defs`, `definitions` | types used more than once |
//!
//! `format` is an annotation in 2020-12 and not asserted (schemars pairs the integer formats
//! with `minimum`/`maximum`, which are); `title`, `description`, `default`, `examples`,
//! `deprecated`, `readOnly`, `writeOnly`, `$comment` and `$schema` are annotations too
//! ([`ANNOTATIONS`]). Any other keyword (`pattern`, which would need a regex engine in every
//! build; `multipleOf`, `not`, `if`, `patternProperties`, `$id`...) is reported by
//! [`unenforced_keywords`], and an agent offering a tool whose schema has one does not start.
//!
//! Numbers are equal by value (`1` equals `1.0`) in `enum`, `const` and `uniqueItems`; string
//! lengths count Unicode code points. The official JSON Schema Test Suite's cases for these
//! keywords run in `agent-runtime/tests/json_schema_suite.rs`.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::ToolSpec;
use crate::quote::{QuotedJson, clip};

/// The keywords the validator enforces.
pub const ENFORCED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
];

/// Keywords that only describe (JSON Schema annotations): allowed, never asserted.
pub const ANNOTATIONS: &[&str] = &[
    "format",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
];

/// Deeper `$ref` chains than this are reported, not followed (a schema may refer to itself).
const MAX_DEPTH: u32 = 64;

/// Every keyword in `schema` that is neither enforced nor an annotation, as
/// `` `pattern` at `/properties/name` ``; empty when the validator means everything the
/// schema says.
///
/// ```
/// use agent_runtime::ai::schema::unenforced_keywords;
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$"}}});
/// assert_eq!(unenforced_keywords(&schema), ["`pattern` at `/properties/code`"]);
/// ```
pub fn unenforced_keywords(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_schema(schema, schema, &mut String::new(), &mut out, 0);
    out
}

fn walk_schema(root: &Value, schema: &Value, at: &mut String, out: &mut Vec<String>, depth: u32) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        out.push(format!("nesting deeper than {MAX_DEPTH} at `{at}`"));
        return;
    }
    for (key, value) in map {
        let len = at.len();
        match key.as_str() {
            "properties" | "$defs" | "definitions" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    at.push('/');
                    at.push_str(key);
                    at.push('/');
                    at.push_str(&name.replace('~', "~0").replace('/', "~1"));
                    walk_schema(root, sub, at, out, depth + 1);
                    at.truncate(len);
                }
            }
            "prefixItems" | "anyOf" | "oneOf" | "allOf" => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    at.push_str(&format!("/{key}/{i}"));
                    walk_schema(root, sub, at, out, depth + 1);
                    at.truncate(len);
                }
            }
            "items" | "additionalProperties" => {
                at.push('/');
                at.push_str(key);
                walk_schema(root, value, at, out, depth + 1);
                at.truncate(len);
            }
            "$ref" => {
                // Only pointers into the schema itself are followed: no remote documents.
                let reference = value.as_str().unwrap_or_default();
                if resolve(root, reference).is_none() {
                    out.push(format!(
                        "`$ref` to `{}` at `{}`, which is not a `#` pointer into the schema",
                        clip(reference),
                        if at.is_empty() { "/" } else { at.as_str() }
                    ));
                }
            }
            k if ENFORCED.contains(&k) || ANNOTATIONS.contains(&k) => {}
            other => out.push(format!(
                "`{other}` at `{}`",
                if at.is_empty() { "/" } else { at.as_str() }
            )),
        }
    }
}

/// [`unenforced_keywords`] of every tool, as `` tool `lookup`: `pattern` at `/properties/code` ``.
pub fn tool_problems(tools: &[ToolSpec]) -> Vec<String> {
    tools
        .iter()
        .flat_map(|tool| {
            unenforced_keywords(&tool.parameters)
                .into_iter()
                .map(move |problem| format!("tool `{}`: {problem}", tool.name))
        })
        .collect()
}

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
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => value.is_number(),
        other => type_name(value) == other,
    }
}

/// JSON equality, numbers by value (`1` equals `1.0`), as `enum`, `const` and `uniqueItems`
/// compare.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_equal(a, b)))
        }
        _ => a == b,
    }
}

/// `value` as text that is the same for exactly the values [`json_equal`] calls equal: numbers
/// by value (`1` and `1.0` both give `1`), object keys sorted.
fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

// Bounded by the value's nesting, which serde_json caps at 128 when it parses.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => write!(out, "{i}").unwrap_or(()),
            (_, Some(u), _) => write!(out, "{u}").unwrap_or(()),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                write!(out, "{}", f as i64).unwrap_or(())
            }
            (_, _, Some(f)) => write!(out, "{f:e}").unwrap_or(()),
            _ => out.push_str(&n.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                write!(out, "{key:?}:").unwrap_or(());
                write_canonical(&map[key], out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The JSON pointer `reference` (`#`, `#/$defs/Tag`), percent-decoded as a URI fragment.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let path = reference.strip_prefix('#')?;
    let path = percent_decode(path)?;
    if path.is_empty() {
        return Some(root);
    }
    root.pointer(&path)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn number(schema: &Map<String, Value>, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn count(schema: &Map<String, Value>, key: &str) -> Option<usize> {
    // `2.0` is a valid count too.
    number(schema, key).map(|n| n as usize)
}

fn check(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>, depth: u32) {
    // A schema that refers to itself through `$ref` forever is not ours to loop on.
    if depth > MAX_DEPTH {
        out.push(format!(
            "{at}: the schema nests deeper than {MAX_DEPTH} levels here"
        ));
        return;
    }
    let schema = match schema {
        Value::Object(map) => map,
        Value::Bool(false) => {
            out.push(format!("{at}: no value is allowed here"));
            return;
        }
        _ => return,
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
        && !options.iter().any(|o| json_equal(o, value))
    {
        out.push(format!(
            "{at}: {} is not one of {}",
            QuotedJson::new(value),
            QuotedJson::new(schema.get("enum").unwrap_or(&Value::Null))
        ));
    }
    if let Some(expected) = schema.get("const")
        && !json_equal(expected, value)
    {
        out.push(format!(
            "{at}: expected {}, found {}",
            QuotedJson::new(expected),
            QuotedJson::new(value)
        ));
    }
    if let Value::Number(n) = value {
        check_number(schema, n.as_f64().unwrap_or(f64::NAN), value, at, out);
    }
    if let Value::String(text) = value {
        let length = text.chars().count();
        if let Some(min) = count(schema, "minLength")
            && length < min
        {
            out.push(format!(
                "{at}: {length} characters, fewer than the minimum {min}"
            ));
        }
        if let Some(max) = count(schema, "maxLength")
            && length > max
        {
            out.push(format!(
                "{at}: {length} characters, more than the maximum {max}"
            ));
        }
    }
    if let Some(options) = schema.get("anyOf").and_then(Value::as_array) {
        let fits = options
            .iter()
            .any(|option| fits(root, option, value, at, depth));
        if !fits {
            out.push(format!(
                "{at}: {} matches none of the allowed shapes",
                QuotedJson::new(value)
            ));
        }
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = options
            .iter()
            .filter(|option| fits(root, option, value, at, depth))
            .take(2)
            .count();
        match matching {
            0 => out.push(format!(
                "{at}: {} matches none of the allowed shapes",
                QuotedJson::new(value)
            )),
            1 => {}
            _ => out.push(format!(
                "{at}: {} matches more than one of the shapes, where exactly one must match",
                QuotedJson::new(value)
            )),
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for part in all {
            check(root, part, value, at, out, depth + 1);
        }
    }
    match value {
        Value::Object(map) => check_object(root, schema, map, at, out, depth),
        Value::Array(items) => check_array(root, schema, items, at, out, depth),
        _ => {}
    }
}

fn fits(root: &Value, schema: &Value, value: &Value, at: &str, depth: u32) -> bool {
    let mut inner = Vec::new();
    check(root, schema, value, at, &mut inner, depth + 1);
    inner.is_empty()
}

fn check_number(
    schema: &Map<String, Value>,
    n: f64,
    value: &Value,
    at: &str,
    out: &mut Vec<String>,
) {
    if let Some(min) = number(schema, "minimum")
        && n < min
    {
        out.push(format!("{at}: {value} is below the minimum {min}"));
    }
    if let Some(max) = number(schema, "maximum")
        && n > max
    {
        out.push(format!("{at}: {value} is above the maximum {max}"));
    }
    if let Some(min) = number(schema, "exclusiveMinimum")
        && n <= min
    {
        out.push(format!("{at}: {value} must be greater than {min}"));
    }
    if let Some(max) = number(schema, "exclusiveMaximum")
        && n >= max
    {
        out.push(format!("{at}: {value} must be less than {max}"));
    }
}

fn check_array(
    root: &Value,
    schema: &Map<String, Value>,
    items: &[Value],
    at: &str,
    out: &mut Vec<String>,
    depth: u32,
) {
    if let Some(min) = count(schema, "minItems")
        && items.len() < min
    {
        out.push(format!(
            "{at}: {} items, fewer than the minimum {min}",
            items.len()
        ));
    }
    if let Some(max) = count(schema, "maxItems")
        && items.len() > max
    {
        out.push(format!(
            "{at}: {} items, more than the maximum {max}",
            items.len()
        ));
    }
    if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
        // One canonical text per item (numbers by value, keys sorted), so equal items meet
        // in a set: linear, where comparing every pair would be quadratic in the items.
        let mut first: HashMap<String, usize> = HashMap::with_capacity(items.len());
        for (j, item) in items.iter().enumerate() {
            match first.entry(canonical(item)) {
                Entry::Occupied(i) => {
                    out.push(format!(
                        "{at}: items {} and {j} are equal, and items must be unique",
                        i.get()
                    ));
                    break;
                }
                Entry::Vacant(slot) => {
                    slot.insert(j);
                }
            }
        }
    }
    let prefix = schema.get("prefixItems").and_then(Value::as_array);
    let prefix_len = prefix.map_or(0, Vec::len);
    for (i, item) in items.iter().enumerate() {
        let item_schema = match prefix.and_then(|p| p.get(i)) {
            Some(s) => s,
            None => match schema.get("items") {
                Some(s) if i >= prefix_len => s,
                _ => continue,
            },
        };
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
        let path = format!("{at}.{}", clip(key.as_str()));
        match properties.and_then(|p| p.get(key)) {
            Some(field_schema) => check(root, field_schema, field, &path, out, depth + 1),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let known: Vec<String> = properties
                        .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
                        .unwrap_or_default();
                    out.push(format!(
                        "{at}: unknown field `{}`; allowed fields: {}",
                        clip(key.as_str()),
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
    fn keywords_it_does_not_enforce_are_reported_with_their_place() {
        let schema = json!({
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$"}},
            "$defs": {"Tag": {"multipleOf": 2}},
            "items": {"$ref": "https://example.com/remote.json"},
            "anyOf": [{"$ref": "#/$defs/Tag"}, {"$ref": "#/$defs/Missing"}],
            "title": "annotations pass",
        });
        assert_eq!(
            unenforced_keywords(&schema),
            [
                "`multipleOf` at `/$defs/Tag`",
                "`$ref` to `#/$defs/Missing` at `/anyOf/1`, which is not a `#` pointer into the schema",
                "`$ref` to `https://example.com/remote.json` at `/items`, which is not a `#` pointer into the schema",
                "`pattern` at `/properties/code`",
            ]
        );
        assert!(unenforced_keywords(&closed_schema::<Ticket>()).is_empty());
        let tools = [ToolSpec {
            name: "lookup".into(),
            description: String::new(),
            parameters: json!({"properties": {"code": {"pattern": "x"}}}),
        }];
        assert_eq!(
            tool_problems(&tools),
            ["tool `lookup`: `pattern` at `/properties/code`"]
        );
    }

    #[test]
    fn every_enforced_keyword_refuses_and_accepts() {
        let cases = [
            (
                json!({"minLength": 2, "maxLength": 3}),
                json!("ab"),
                json!("a"),
            ),
            (
                json!({"minLength": 2, "maxLength": 3}),
                json!("\u{e9}\u{e9}\u{e9}"),
                json!("abcd"),
            ),
            (json!({"minItems": 1, "maxItems": 2}), json!([1]), json!([])),
            (
                json!({"minItems": 1, "maxItems": 2}),
                json!([1, 2]),
                json!([1, 2, 3]),
            ),
            (
                json!({"uniqueItems": true}),
                json!([1, "1", [1]]),
                json!([{"a": 1, "b": 2}, {"b": 2, "a": 1.0}]),
            ),
            (
                json!({"prefixItems": [{"type": "string"}], "items": false}),
                json!(["a"]),
                json!(["a", 1]),
            ),
            (
                json!({"prefixItems": [{"type": "string"}]}),
                json!(["a", 1]),
                json!([1]),
            ),
            (
                json!({"exclusiveMinimum": 0, "exclusiveMaximum": 2}),
                json!(1),
                json!(0),
            ),
            (
                json!({"exclusiveMinimum": 0, "exclusiveMaximum": 2}),
                json!(1.5),
                json!(2.0),
            ),
            (json!({"minimum": 1, "maximum": 1}), json!(1.0), json!(0.5)),
            (json!({"type": "integer"}), json!(2.0), json!(2.5)),
            (json!({"enum": [1, "a"]}), json!(1.0), json!("b")),
            (
                json!({"const": {"a": [1]}}),
                json!({"a": [1.0]}),
                json!({"a": [2]}),
            ),
            (
                json!({"oneOf": [{"minimum": 1}, {"maximum": 3}]}),
                json!(0),
                json!(2),
            ),
            (
                json!({"allOf": [{"minimum": 1}, {"maximum": 3}]}),
                json!(2),
                json!(4),
            ),
            (
                json!({"anyOf": [{"type": "null"}, {"minimum": 3}]}),
                json!(null),
                json!(2),
            ),
        ];
        for (schema, good, bad) in cases {
            assert!(unenforced_keywords(&schema).is_empty(), "{schema}");
            assert_eq!(
                validate(&schema, &good),
                Vec::<String>::new(),
                "{schema} {good}"
            );
            assert!(
                !validate(&schema, &bad).is_empty(),
                "{schema} accepted {bad}"
            );
        }
    }

    #[test]
    fn problems_quote_user_values_within_bounds() {
        let huge = "x".repeat(1_000_000);
        let problems = validate(&json!({"enum": ["a", "b"]}), &json!(huge));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].len() < 200, "{}", problems[0]);
        assert!(
            problems[0].ends_with(r#"is not one of ["a","b"]"#),
            "{}",
            problems[0]
        );
        assert!(problems[0].contains("… (1 MB)"), "{}", problems[0]);
        let key = "k".repeat(100_000);
        let problems = validate(
            &json!({"type": "object", "additionalProperties": false}),
            &json!({ key: 1 }),
        );
        assert!(problems[0].len() < 200, "{}", problems[0]);
        assert_eq!(
            validate(&json!({"uniqueItems": true}), &json!([1, 2, 1.0])),
            ["$: items 0 and 2 are equal, and items must be unique"]
        );
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
