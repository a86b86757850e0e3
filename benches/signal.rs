//! Decoding a signal from CloudEvents JSON: ours (every CloudEvents rule checked) against the
//! decode it replaced (serde derive with a flattened extension map, no checks) and the official
//! SDK (`cloudevents-sdk`). `cargo bench --bench signal`; results are in BENCHMARKS.md.

use std::collections::BTreeMap;
use std::hint::black_box;

use chrono::{DateTime, Utc};
use criterion::{Criterion, Throughput};
use serde::Deserialize;
use serde_json::Value;
use stratagem::Signal;

/// The previous decode, kept as the baseline: derive, flatten, only `specversion` checked.
#[derive(Deserialize)]
#[allow(dead_code)]
struct Unchecked {
    specversion: String,
    id: String,
    source: String,
    #[serde(rename = "type")]
    signal_type: String,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    time: Option<DateTime<Utc>>,
    #[serde(default)]
    datacontenttype: Option<String>,
    #[serde(default)]
    data: Value,
    #[serde(flatten)]
    extensions: BTreeMap<String, Value>,
}

const EVENT: &str = r#"{"specversion":"1.0","id":"0192e4a8-7c1e-7d3a-9f1a-2b3c4d5e6f70","source":"https://shop.example/orders","type":"order.paid","subject":"order-17","time":"2026-01-31T12:00:00.123Z","datacontenttype":"application/json","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","data":{"order":17,"amount":12.5,"currency":"EUR","lines":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}]}}"#;

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("signal/decode");
    group.throughput(Throughput::Elements(1));
    group.bench_function("stratagem_checked", |b| {
        b.iter(|| serde_json::from_str::<Signal>(black_box(EVENT)).unwrap())
    });
    group.bench_function("previous_unchecked", |b| {
        b.iter(|| serde_json::from_str::<Unchecked>(black_box(EVENT)).unwrap())
    });
    group.bench_function("cloudevents_sdk", |b| {
        b.iter(|| serde_json::from_str::<cloudevents::Event>(black_box(EVENT)).unwrap())
    });
    // The share of the checks in the first figure.
    let parsed: Signal = serde_json::from_str(EVENT).unwrap();
    group.bench_function("validate_only", |b| {
        b.iter(|| black_box(&parsed).validate().unwrap())
    });
    group.finish();
    c.final_summary();
}
