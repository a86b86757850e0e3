//! Differential test against the official CloudEvents Rust SDK: on generated events, our JSON
//! reads as the same event in theirs, and theirs reads as the same signal in ours.

use chrono::{DateTime, Utc};
use cloudevents::event::{AttributesReader, Data, ExtensionValue};
use proptest::prelude::*;
use serde_json::{Value, json};
use stratagem::Signal;

/// The payloads both sides agree on: JSON under a JSON media type, text under a text one,
/// bytes under a binary one.
#[derive(Debug, Clone)]
enum Payload {
    None,
    Json(Value),
    Text(String),
    Bytes(Vec<u8>),
}

fn payload() -> impl Strategy<Value = Payload> {
    prop_oneof![
        Just(Payload::None),
        (any::<i32>(), "[a-z ]{0,8}")
            .prop_map(|(n, s)| Payload::Json(json!({"n": n, "s": s, "list": [1, 2]}))),
        "[ -~]{0,16}".prop_map(Payload::Text),
        proptest::collection::vec(any::<u8>(), 0..24).prop_map(Payload::Bytes),
    ]
}

fn extension_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-zA-Z0-9 ._-]{0,10}".prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
    ]
}

prop_compose! {
    fn signal()(
        id in "[a-zA-Z0-9-]{1,12}",
        source in prop_oneof![
            Just("/shop".to_string()),
            Just("urn:shop:orders".to_string()),
            "https://[a-z]{1,8}\\.example/[a-z]{0,6}",
        ],
        signal_type in "[a-z]{1,6}(\\.[a-z]{1,6}){0,2}",
        subject in proptest::option::of("[a-z0-9-]{1,8}"),
        time in proptest::option::of(0i64..4_000_000_000),
        schema in proptest::option::of("https://schemas\\.example/[a-z]{1,8}\\.json"),
        payload in payload(),
        extensions in proptest::collection::btree_map("[a-z][a-z0-9]{0,7}", extension_value(), 0..4),
    ) -> Signal {
        let mut s = Signal::with_id(id, signal_type, Value::Null).with_source(source);
        s.subject = subject;
        s.time = time.map(|t| DateTime::<Utc>::from_timestamp(t, 1_000_000).unwrap());
        if let Some(schema) = schema {
            s = s.with_data_schema(schema);
        }
        match payload {
            Payload::None => s.data_content_type = None,
            Payload::Json(value) => s.data = value,
            Payload::Text(text) => {
                s.data = Value::String(text);
                s.data_content_type = Some("text/plain; charset=utf-8".into());
            }
            Payload::Bytes(bytes) => s = s.with_bytes("application/octet-stream", bytes),
        }
        for (name, value) in extensions {
            let reserved = ["id", "source", "type", "subject", "time", "data", "dataschema"];
            if !reserved.contains(&name.as_str()) {
                s.extensions.insert(name, value);
            }
        }
        s
    }
}

/// The SDK's view of a signal, attribute by attribute.
fn assert_same(ours: &Signal, theirs: &cloudevents::Event) {
    assert_eq!(theirs.specversion().as_str(), ours.spec_version);
    assert_eq!(theirs.id(), ours.id);
    assert_eq!(theirs.source(), &ours.source);
    assert_eq!(theirs.ty(), ours.signal_type);
    assert_eq!(theirs.subject(), ours.subject.as_deref());
    assert_eq!(theirs.time(), ours.time.as_ref());
    assert_eq!(theirs.datacontenttype(), ours.data_content_type.as_deref());
    assert_eq!(theirs.dataschema().map(|u| u.as_str()), ours.data_schema());
    match (theirs.data(), ours.data_bytes(), &ours.data) {
        (None, None, Value::Null) => {}
        (Some(Data::Binary(b)), Some(bytes), Value::Null) => assert_eq!(b, bytes),
        (Some(Data::Json(v)), None, data) => assert_eq!(v, data),
        (Some(Data::String(s)), None, Value::String(text)) => assert_eq!(s, text),
        (theirs, _, _) => panic!("payloads differ: {theirs:?} vs {ours:?}"),
    }
    let their_extensions: std::collections::BTreeMap<String, Value> = theirs
        .iter_extensions()
        .map(|(name, value)| {
            let value = match value {
                ExtensionValue::String(s) => Value::from(s.clone()),
                ExtensionValue::Boolean(b) => Value::from(*b),
                ExtensionValue::Integer(i) => Value::from(*i),
            };
            (name.to_string(), value)
        })
        .collect();
    assert_eq!(their_extensions, ours.extensions);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn our_json_reads_the_same_in_the_sdk_and_back(ours in signal()) {
        ours.validate().unwrap();
        let wire = serde_json::to_value(&ours).unwrap();
        let theirs: cloudevents::Event = serde_json::from_value(wire.clone())
            .unwrap_or_else(|e| panic!("the SDK refused {wire}: {e}"));
        assert_same(&ours, &theirs);
        // Their JSON reads back as our signal.
        let their_wire = serde_json::to_value(&theirs).unwrap();
        let back: Signal = serde_json::from_value(their_wire.clone())
            .unwrap_or_else(|e| panic!("we refused the SDK's {their_wire}: {e}"));
        prop_assert_eq!(&back, &ours);
    }
}

#[test]
fn an_event_built_with_the_sdk_reads_the_same_in_ours() {
    use cloudevents::{EventBuilder, EventBuilderV10};
    let theirs = EventBuilderV10::new()
        .id("a-1")
        .source("https://shop.example/orders")
        .ty("order.paid")
        .subject("o-17")
        .time("2026-01-31T12:00:00Z")
        .extension(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        )
        .extension("attempt", 2i64)
        .data("application/octet-stream", vec![0u8, 1, 2, 250])
        .build()
        .unwrap();
    let ours: Signal = serde_json::from_value(serde_json::to_value(&theirs).unwrap()).unwrap();
    assert_same(&ours, &theirs);
    assert_eq!(ours.data_bytes(), Some(&[0u8, 1, 2, 250][..]));
}
