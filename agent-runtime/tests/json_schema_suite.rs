//! The official JSON Schema Test Suite (draft 2020-12), vendored under
//! `tests/json-schema-test-suite/`, against the tool-argument validator: every case of every
//! group whose schema the validator accepts (only enforced keywords and annotations) must give
//! the suite's answer. Groups whose schema uses a keyword the validator refuses are skipped and
//! counted; the counts are pinned.

use agent_runtime::ai::schema::{unenforced_keywords, validate};
use serde_json::Value;

/// Each file, and how many of its cases run and how many groups are skipped.
const SUITE: &[(&str, &str, usize, usize)] = &[
    // (file, text, cases run, groups skipped)
    (
        "type",
        include_str!("json-schema-test-suite/draft2020-12/type.json"),
        80,
        0,
    ),
    (
        "properties",
        include_str!("json-schema-test-suite/draft2020-12/properties.json"),
        20,
        1,
    ),
    (
        "required",
        include_str!("json-schema-test-suite/draft2020-12/required.json"),
        18,
        0,
    ),
    (
        "additionalProperties",
        include_str!("json-schema-test-suite/draft2020-12/additionalProperties.json"),
        8,
        4,
    ),
    (
        "items",
        include_str!("json-schema-test-suite/draft2020-12/items.json"),
        29,
        0,
    ),
    (
        "prefixItems",
        include_str!("json-schema-test-suite/draft2020-12/prefixItems.json"),
        11,
        0,
    ),
    (
        "minItems",
        include_str!("json-schema-test-suite/draft2020-12/minItems.json"),
        6,
        0,
    ),
    (
        "maxItems",
        include_str!("json-schema-test-suite/draft2020-12/maxItems.json"),
        6,
        0,
    ),
    (
        "uniqueItems",
        include_str!("json-schema-test-suite/draft2020-12/uniqueItems.json"),
        69,
        0,
    ),
    (
        "minLength",
        include_str!("json-schema-test-suite/draft2020-12/minLength.json"),
        7,
        0,
    ),
    (
        "maxLength",
        include_str!("json-schema-test-suite/draft2020-12/maxLength.json"),
        7,
        0,
    ),
    (
        "minimum",
        include_str!("json-schema-test-suite/draft2020-12/minimum.json"),
        11,
        0,
    ),
    (
        "maximum",
        include_str!("json-schema-test-suite/draft2020-12/maximum.json"),
        8,
        0,
    ),
    (
        "exclusiveMinimum",
        include_str!("json-schema-test-suite/draft2020-12/exclusiveMinimum.json"),
        4,
        0,
    ),
    (
        "exclusiveMaximum",
        include_str!("json-schema-test-suite/draft2020-12/exclusiveMaximum.json"),
        4,
        0,
    ),
    (
        "enum",
        include_str!("json-schema-test-suite/draft2020-12/enum.json"),
        51,
        0,
    ),
    (
        "const",
        include_str!("json-schema-test-suite/draft2020-12/const.json"),
        54,
        0,
    ),
    (
        "anyOf",
        include_str!("json-schema-test-suite/draft2020-12/anyOf.json"),
        18,
        0,
    ),
    (
        "oneOf",
        include_str!("json-schema-test-suite/draft2020-12/oneOf.json"),
        27,
        0,
    ),
    (
        "allOf",
        include_str!("json-schema-test-suite/draft2020-12/allOf.json"),
        22,
        1,
    ),
    (
        "ref",
        include_str!("json-schema-test-suite/draft2020-12/ref.json"),
        32,
        23,
    ),
    (
        "defs",
        include_str!("json-schema-test-suite/draft2020-12/defs.json"),
        0,
        1,
    ),
    (
        "boolean_schema",
        include_str!("json-schema-test-suite/draft2020-12/boolean_schema.json"),
        18,
        0,
    ),
];

#[test]
fn every_case_for_every_enforced_keyword_passes() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for (file, text, _, _) in SUITE {
        let groups: Vec<Value> = serde_json::from_str(text).unwrap();
        let (mut ran, mut skipped) = (0, 0);
        for group in &groups {
            let schema = &group["schema"];
            if !unenforced_keywords(schema).is_empty() {
                skipped += 1;
                continue;
            }
            for case in group["tests"].as_array().unwrap() {
                ran += 1;
                let problems = validate(schema, &case["data"]);
                let expected = case["valid"].as_bool().unwrap();
                if problems.is_empty() != expected {
                    failures.push(format!(
                        "{file}.json: {} / {}: expected {}, problems {problems:?}",
                        group["description"],
                        case["description"],
                        if expected { "valid" } else { "invalid" }
                    ));
                }
            }
        }
        counts.push((*file, ran, skipped));
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let pinned: Vec<(&str, usize, usize)> = SUITE.iter().map(|(f, _, r, s)| (*f, *r, *s)).collect();
    assert_eq!(counts, pinned, "cases run and groups skipped per file");
}
