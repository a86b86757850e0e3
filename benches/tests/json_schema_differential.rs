//! Differential test against the `jsonschema` crate: on generated schemas (built only from the
//! keywords the tool-argument validator enforces) and generated values, both validators give
//! the same verdict; the schemas schemars derives for tool parameters are checked the same way.

use proptest::prelude::*;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};
use stratagem::action::closed_schema;
use stratagem::ai::schema::{unenforced_keywords, validate};

fn verdicts(schema: &Value, value: &Value) -> (bool, bool) {
    let theirs = jsonschema::draft202012::new(schema)
        .unwrap_or_else(|e| panic!("jsonschema refused {schema}: {e}"))
        .is_valid(value);
    (validate(schema, value).is_empty(), theirs)
}

fn small_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..6).prop_map(Value::from),
        (-6i32..12).prop_map(|n| Value::from(f64::from(n) / 2.0)),
    ]
}

fn leaf_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        small_number(),
        "[ab\u{e9}]{0,4}".prop_map(Value::from),
    ]
}

/// JSON values over a small alphabet, so that generated schemas and values often meet.
fn value() -> impl Strategy<Value = Value> {
    leaf_value().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[abc]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn leaf_schema() -> impl Strategy<Value = Value> {
    let types = prop::sample::select(vec![
        "null", "boolean", "integer", "number", "string", "array", "object",
    ]);
    prop_oneof![
        any::<bool>().prop_map(Value::from),
        types.clone().prop_map(|t| json!({ "type": t })),
        (types.clone(), types)
            .prop_filter("a type list has no repeats", |(a, b)| a != b)
            .prop_map(|(a, b)| json!({ "type": [a, b] })),
        (0u64..4, 0u64..4)
            .prop_map(|(a, b)| json!({"type": "string", "minLength": a, "maxLength": b})),
        (small_number(), small_number()).prop_map(|(a, b)| json!({"minimum": a, "maximum": b})),
        (small_number(), small_number())
            .prop_map(|(a, b)| json!({"exclusiveMinimum": a, "exclusiveMaximum": b})),
        prop::collection::vec(leaf_value(), 1..4).prop_map(|v| json!({ "enum": v })),
        leaf_value().prop_map(|v| json!({ "const": v })),
    ]
}

/// Schemas made only of the keywords the validator enforces, nested a few levels.
fn schema() -> impl Strategy<Value = Value> {
    leaf_schema().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map("[abc]", inner.clone(), 0..3),
                prop::collection::btree_set("[abc]", 0..3),
                prop_oneof![Just(None), Just(Some(json!(false))), inner.clone().prop_map(Some)],
            )
                .prop_map(|(properties, required, additional)| {
                    let mut schema = json!({"type": "object", "properties": properties, "required": required});
                    if let Some(additional) = additional {
                        schema["additionalProperties"] = additional;
                    }
                    schema
                }),
            (inner.clone(), 0u64..3, 0u64..4, any::<bool>()).prop_map(
                |(items, min, max, unique)| json!({"type": "array", "items": items, "minItems": min, "maxItems": max, "uniqueItems": unique})
            ),
            (prop::collection::vec(inner.clone(), 1..3), inner.clone())
                .prop_map(|(prefix, items)| json!({"prefixItems": prefix, "items": items})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|s| json!({ "anyOf": s })),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|s| json!({ "oneOf": s })),
            prop::collection::vec(inner, 1..3).prop_map(|s| json!({ "allOf": s })),
        ]
    })
}

proptest! {
    #[test]
    fn both_validators_agree_on_generated_schemas_and_values(schema in schema(), value in value()) {
        prop_assert!(unenforced_keywords(&schema).is_empty(), "{schema}");
        let (ours, theirs) = verdicts(&schema, &value);
        prop_assert_eq!(ours, theirs, "schema {} value {}: ours {:?}", schema, value, validate(&schema, &value));
    }
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Order {
    #[schemars(length(min = 1, max = 8))]
    sku: String,
    #[schemars(range(min = 1, max = 99))]
    quantity: u8,
    tags: std::collections::BTreeSet<String>,
    position: (f32, f32),
    codes: [u16; 2],
    kind: Kind,
    note: Option<Note>,
    lines: Vec<Line>,
    extra: std::collections::BTreeMap<String, i64>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
enum Kind {
    Retail,
    Wholesale,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Note {
    text: String,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(tag = "type")]
enum Line {
    Item {
        sku: String,
        quantity: std::num::NonZeroU32,
    },
    Discount {
        percent: u8,
    },
}

fn order_value() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just(json!("")),
            Just(json!("A-1")),
            Just(json!("ABCDEFGHI")),
            Just(json!(5))
        ],
        prop_oneof![
            Just(json!(0)),
            Just(json!(1)),
            Just(json!(99)),
            Just(json!(100)),
            Just(json!(2.5))
        ],
        prop_oneof![
            Just(json!([])),
            Just(json!(["a", "b"])),
            Just(json!(["a", "a"]))
        ],
        prop_oneof![
            Just(json!([1.5, 2])),
            Just(json!([1])),
            Just(json!([1, 2, 3]))
        ],
        prop_oneof![
            Just(json!([1, 65535])),
            Just(json!([1, 65536])),
            Just(json!([-1, 0]))
        ],
        prop_oneof![Just(json!("Retail")), Just(json!("Other"))],
        prop_oneof![
            Just(json!(null)),
            Just(json!({"text": "hi"})),
            Just(json!({"text": 1})),
            Just(json!({"text": "hi", "x": 1}))
        ],
        prop_oneof![
            Just(json!([])),
            Just(json!([{"type": "Item", "sku": "a", "quantity": 1}])),
            Just(json!([{"type": "Item", "sku": "a", "quantity": 0}])),
            Just(json!([{"type": "Discount", "percent": 300}])),
            Just(json!([{"type": "Refund"}])),
        ],
        prop_oneof![
            Just(json!({})),
            Just(json!({"k": 1})),
            Just(json!({"k": "v"}))
        ],
        any::<bool>(),
    )
        .prop_map(
            |(sku, quantity, tags, position, codes, kind, note, lines, extra, drop_sku)| {
                let mut value = json!({
                    "sku": sku, "quantity": quantity, "tags": tags, "position": position,
                    "codes": codes, "kind": kind, "note": note, "lines": lines, "extra": extra,
                });
                if drop_sku {
                    value.as_object_mut().map(|m| m.remove("sku"));
                }
                value
            },
        )
}

proptest! {
    #[test]
    fn both_validators_agree_on_a_schemars_tool_schema(value in order_value()) {
        let schema = closed_schema::<Order>();
        prop_assert!(unenforced_keywords(&schema).is_empty(), "{:?}", unenforced_keywords(&schema));
        let (ours, theirs) = verdicts(&schema, &value);
        prop_assert_eq!(ours, theirs, "value {}: ours {:?}", value, validate(&schema, &value));
    }
}
