//! Every CloudEvents rule, accepted and refused, on every way in.

use super::*;
use serde_json::json;
#[test]
fn serializes_as_cloudevents_json() {
    let s = Signal::with_id("42", "order.pay", json!({"amount": 1}))
        .with_source("/shop")
        .with_extension("traceparent", json!("00-abc"));
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        json!({
            "specversion": "1.0",
            "id": "42",
            "source": "/shop",
            "type": "order.pay",
            "datacontenttype": "application/json",
            "data": {"amount": 1},
            "traceparent": "00-abc",
        })
    );
}

#[test]
fn reads_minimal_cloudevents() {
    let s: Signal = serde_json::from_value(json!({
        "specversion": "1.0", "id": "1", "source": "/x", "type": "a.b"
    }))
    .unwrap();
    assert_eq!(s.signal_type(), "a.b");
    assert_eq!(s.data, Value::Null);
    assert!(s.extensions.is_empty());
}

#[test]
fn rejects_other_spec_versions() {
    for version in ["0.3", "1.1", "1", "1.0.2", " 1.0"] {
        let err = serde_json::from_value::<Signal>(json!({
            "specversion": version, "id": "1", "source": "/x", "type": "a"
        }))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid CloudEvents attribute `specversion`: unsupported version {version:?}; expected `1.0`"
            )
        );
    }
}

fn base() -> Value {
    json!({"specversion": "1.0", "id": "1", "source": "/shop", "type": "order.pay"})
}

fn with(attribute: &str, value: Value) -> Value {
    let mut event = base();
    event[attribute] = value;
    event
}

/// Refused by serde, by `from_json` and by `validate` (for what a `Signal` can hold), naming
/// `attribute`.
#[track_caller]
fn refused(event: Value, attribute: &str, reason: &str) {
    let err = Signal::from_json(event.clone()).unwrap_err();
    assert_eq!(err.attribute, attribute, "{event}: {err}");
    assert!(err.reason.contains(reason), "{event}: {err}");
    let via_serde = serde_json::from_value::<Signal>(event.clone()).unwrap_err();
    assert_eq!(via_serde.to_string(), err.to_string());
    let via_str = serde_json::from_str::<Signal>(&event.to_string()).unwrap_err();
    assert!(
        via_str.to_string().starts_with(&err.to_string()),
        "{via_str}"
    );
}

#[track_caller]
fn accepted(event: Value) -> Signal {
    let signal = Signal::from_json(event.clone()).unwrap_or_else(|e| panic!("{event}: {e}"));
    signal.validate().unwrap();
    let back: Signal = serde_json::from_value(serde_json::to_value(&signal).unwrap()).unwrap();
    assert_eq!(back, signal, "round trip");
    signal
}

#[test]
fn required_attributes_are_non_empty_strings() {
    for attribute in ["specversion", "id", "source", "type"] {
        let mut event = base();
        event.as_object_mut().unwrap().remove(attribute);
        refused(event, attribute, "is required");
        refused(with(attribute, Value::Null), attribute, "is required");
        refused(
            with(attribute, json!(7)),
            attribute,
            "must be a string, not a number",
        );
    }
    for attribute in ["id", "source", "type"] {
        refused(with(attribute, json!("")), attribute, "must not be empty");
    }
    assert_eq!(
        Signal::from_json(json!("x")).unwrap_err().reason,
        "a CloudEvent in JSON is an object"
    );
}

#[test]
fn source_is_a_uri_reference() {
    for good in [
        "/shop",
        "shop",
        "urn:shop:orders",
        "https://shop.example/orders?x=1#frag",
        "//shop.example:8080",
        "http://[::1]:80/a",
        "mailto:ops@shop.example",
        "a%20b",
        "../up",
    ] {
        accepted(with("source", json!(good)));
    }
    for (bad, why) in [
        ("/shop orders", "not allowed in a URI reference"),
        ("a%2", "hex digits"),
        ("a%zz", "hex digits"),
        ("1http://x", "is not a URI scheme"),
        ("x#a#b", "more than one `#`"),
        ("/a[1]", "IP address"),
        ("/é", "not allowed"),
        ("a\"b", "not allowed"),
    ] {
        refused(with("source", json!(bad)), "source", why);
    }
}

#[test]
fn subject_is_non_empty_when_present() {
    assert_eq!(
        accepted(with("subject", json!("o-1"))).subject.as_deref(),
        Some("o-1")
    );
    assert_eq!(accepted(with("subject", Value::Null)).subject, None);
    refused(with("subject", json!("")), "subject", "must not be empty");
    refused(with("subject", json!(false)), "subject", "must be a string");
}

#[test]
fn time_is_rfc_3339() {
    let s = accepted(with("time", json!("2026-01-31T12:00:00.5+01:00")));
    assert_eq!(
        serde_json::to_value(&s).unwrap()["time"],
        "2026-01-31T11:00:00.500Z"
    );
    accepted(with("time", json!("2026-01-31T12:00:00Z")));
    for bad in [
        "2026-01-31",
        "2026-01-31 12:00:00",
        "yesterday",
        "2026-01-31T12:00:00",
    ] {
        refused(with("time", json!(bad)), "time", "RFC 3339");
    }
}

#[test]
fn datacontenttype_is_a_media_type() {
    for good in [
        "application/json",
        "text/plain; charset=utf-8",
        "application/cloudevents+json",
        "text/plain;charset=\"utf-8\";format=flowed",
        "multipart/mixed; boundary=\"a; b\"",
        "application/vnd.api+json",
    ] {
        accepted(with("datacontenttype", json!(good)));
    }
    for bad in [
        "json",
        "application/",
        "/json",
        "text/plain; charset",
        "text/plain; charset=",
        "text/plain; charset=\"utf-8",
        "text plain/x",
        "text/plain; a=b c",
        "application/json;",
        "text/plain; charset=utf-8;",
    ] {
        refused(
            with("datacontenttype", json!(bad)),
            "datacontenttype",
            "not a media type",
        );
    }
}

#[test]
fn dataschema_is_a_typed_absolute_uri() {
    let s = accepted(with("dataschema", json!("https://shop.example/order.json")));
    assert_eq!(s.data_schema(), Some("https://shop.example/order.json"));
    assert!(s.extensions.is_empty(), "not an extension");
    let s = accepted(with("dataschema", Value::Null));
    assert_eq!(s.data_schema(), None);
    assert!(
        s.extensions.is_empty(),
        "a null dataschema is absent, not a null extension"
    );
    refused(
        with("dataschema", json!("/order.json")),
        "dataschema",
        "absolute URI",
    );
    refused(
        with("dataschema", json!("")),
        "dataschema",
        "must not be empty",
    );
    refused(
        with("dataschema", json!(1)),
        "dataschema",
        "must be a string",
    );
}

#[test]
fn extension_names_and_values() {
    let s = accepted(with("traceparent", json!("00-abc")));
    assert_eq!(s.extensions["traceparent"], "00-abc");
    accepted(with("n1", json!(2147483647)));
    accepted(with("n1", json!(-2147483648)));
    accepted(with("flag", json!(true)));
    for bad in ["Trace", "trace.id", "trace_id", "tråce", "a-b"] {
        refused(
            with(bad, json!("x")),
            bad,
            "lowercase ASCII letters and digits",
        );
    }
    refused(with("n1", json!(2147483648_i64)), "n1", "integer between");
    refused(with("n1", json!(1.5)), "n1", "integer");
    refused(
        with("obj", json!({"a": 1})),
        "obj",
        "not an array or object",
    );
    refused(with("arr", json!([1])), "arr", "not an array or object");
    assert!(
        accepted(with("gone", Value::Null)).extensions.is_empty(),
        "null is absent"
    );
    // The builder's way in is checked at the door: `validate`.
    for reserved in ["data", "data_base64", "dataschema", "id"] {
        let err = Signal::with_id("1", "a", Value::Null)
            .with_extension(reserved, json!("x"))
            .validate()
            .unwrap_err();
        assert_eq!(err.attribute, reserved);
    }
    let err = Signal::with_id("1", "a", Value::Null)
        .with_extension("x", Value::Null)
        .validate()
        .unwrap_err();
    assert!(err.reason.contains("cannot be null"), "{err}");
}

#[test]
fn payloads_are_json_text_or_bytes() {
    let s = accepted(with("data", json!({"a": 1})));
    assert_eq!(s.data, json!({"a": 1}));
    let mut text = with("data", json!("<a/>"));
    text["datacontenttype"] = json!("application/xml");
    assert_eq!(accepted(text).data, "<a/>");
    let mut bytes = with("data_base64", json!("AAEC/w=="));
    bytes["datacontenttype"] = json!("application/octet-stream");
    let s = accepted(bytes);
    assert_eq!(s.data_bytes(), Some(&[0, 1, 2, 255][..]));
    assert_eq!(s.data, Value::Null);
    let built = Signal::with_id("1", "a", Value::Null).with_bytes("image/png", vec![137, 80]);
    let wire = serde_json::to_value(&built).unwrap();
    assert_eq!(wire["data_base64"], "iVA=");
    assert_eq!(wire["datacontenttype"], "image/png");
    assert!(wire.get("data").is_none());
    assert_eq!(serde_json::from_value::<Signal>(wire).unwrap(), built);
    // Both at once, or bad base64, are refused.
    let mut both = with("data", json!(1));
    both["data_base64"] = json!("AA==");
    refused(both, "data_base64", "not both");
    refused(
        with("data_base64", json!("AA=")),
        "data_base64",
        "multiple of 4",
    );
    refused(
        with("data_base64", json!("A*==")),
        "data_base64",
        "not base64",
    );
    refused(
        with("data_base64", json!(12)),
        "data_base64",
        "must be a string",
    );
    let mut held = Signal::with_id("1", "a", Value::Null).with_bytes("image/png", vec![1]);
    held.data = json!(1);
    assert_eq!(held.validate().unwrap_err().attribute, "data_base64");
}

#[test]
fn builders_make_valid_signals() {
    Signal::new("order.pay", json!({"a": 1}))
        .validate()
        .unwrap();
    Signal::with_id("7", "a.b", Value::Null)
        .with_source("urn:shop")
        .with_subject("s")
        .with_data_schema("https://shop.example/s.json")
        .with_extension("traceparent", json!("00-x"))
        .validate()
        .unwrap();
    let err = Signal::new("", Value::Null).validate().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid CloudEvents attribute `type`: must not be empty"
    );
    assert_eq!(
        Signal::new("a", Value::Null)
            .with_source("a b")
            .validate()
            .unwrap_err()
            .attribute,
        "source"
    );
}

#[test]
fn the_constants_validation_skips_pass_the_full_rules() {
    // `Signal::validate` trusts these two without parsing them: they must be valid.
    rules::check_uri_reference("source", DEFAULT_SOURCE).unwrap();
    rules::check_media_type("datacontenttype", JSON_MEDIA_TYPE).unwrap();
    // Anything else is still parsed.
    let mut signal = Signal::with_id("1", "t", Value::Null);
    signal.source = "/stratagem x".to_string();
    assert_eq!(signal.validate().unwrap_err().attribute, "source");
    signal.source = DEFAULT_SOURCE.to_string();
    signal.data_content_type = Some("application/json;".to_string());
    assert_eq!(signal.validate().unwrap_err().attribute, "datacontenttype");
}
