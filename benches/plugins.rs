//! The cost of plugins per signal, and Retrieval's recall latency.
//!
//! - `plugins/signal/<none|default_stack>`: `handle_signal` of a request-typed signal
//!   (`chat.simple` with a prompt) on the same Direct agent without plugins and with the stack an
//!   AI agent mounts by default (ModelRouting with two routes, then Policy with its defaults):
//!   pre-routing hooks, routing, a sync action, outbound hooks. The goal is under 2 µs added.
//! - `plugins/recall/<ours|scan>_<n>`: the 3 best of `n` memories (10k and 100k) for a
//!   three-word query: `ours` is Retrieval's BM25 inverted index (`Namespace::recall`), `scan`
//!   a hand-written linear scan scoring each memory by the query words it contains.
//!
//! `cargo bench -p stratagem-benches --bench plugins`; results are in BENCHMARKS.md.

use std::hint::black_box;

use criterion::Criterion;
use stratagem::ai::plugins::{ModelRouting, Namespace, Policy};
use stratagem::plugin::PluginStack;
use stratagem::prelude::*;
use stratagem::{ActionEntry, RouteSpec, RouteTarget};

/// Counts what it is asked.
#[agent(actions [ask], routes { "chat.simple" => ask })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Plain {
    asked: u64,
}

/// Counts what it is asked (for `Stacked`).
#[action]
fn ask(plain: &mut Plain) {
    plain.asked += 1;
}

/// The same agent with the default AI stack, mounted by hand.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Stacked {
    asked: u64,
}

/// Counts what it is asked.
#[action]
fn ask_stacked(stacked: &mut Stacked) {
    stacked.asked += 1;
}

impl AgentSpec for Stacked {
    const NAME: &'static str = "Stacked";
    type Strategy = Direct;
    fn actions() -> &'static [ActionEntry<Self>] {
        static ACTIONS: [ActionEntry<Stacked>; 1] = [<ask_stacked as Action<Stacked>>::ENTRY];
        &ACTIONS
    }
    fn routes() -> &'static [RouteSpec] {
        static ROUTES: [RouteSpec; 1] = [RouteSpec::new(
            "chat.simple",
            RouteTarget::Action(std::borrow::Cow::Borrowed("ask_stacked")),
            0,
        )];
        &ROUTES
    }
    fn plugins() -> &'static PluginStack {
        static PLUGINS: std::sync::OnceLock<PluginStack> = std::sync::OnceLock::new();
        PLUGINS.get_or_init(|| {
            PluginStack::new()
                .with(
                    ModelRouting::default()
                        .route("chat.*", "fast")
                        .route("reasoning.*.run", "capable"),
                )
                .with(Policy::default())
        })
    }
}

fn signal_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("plugins/signal");
    let signal = Signal::new(
        "chat.simple",
        json!({"prompt": "When does the office open on Saturdays?", "request_id": "r1"}),
    );
    let mut plain = Plain::new();
    group.bench_function("none", |b| {
        b.iter(|| black_box(plain.handle_signal(black_box(&signal))))
    });
    let mut stacked = Stacked::new();
    group.bench_function("default_stack", |b| {
        b.iter(|| black_box(stacked.handle_signal(black_box(&signal))))
    });
    group.finish();
}

const WORDS: &[&str] = &[
    "office", "parking", "lunch", "canteen", "wifi", "password", "desk", "floor", "meeting",
    "room", "printer", "badge", "visitor", "yard", "coffee", "kitchen", "train", "station", "bike",
    "shower", "locker", "key", "door", "window", "heating", "light", "fire", "alarm", "exit",
    "stairs", "lift", "garden", "terrace", "holiday", "calendar", "payroll", "invoice", "travel",
    "hotel", "taxi", "laptop", "screen", "keyboard", "mouse", "cable", "phone",
];

/// `n` memories of ten words each, drawn deterministically.
fn memories(n: usize) -> Vec<String> {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|i| {
            let mut text = format!("memory {i}:");
            for _ in 0..10 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push(' ');
                text.push_str(WORDS[(seed % WORDS.len() as u64) as usize]);
            }
            text
        })
        .collect()
}

/// The hand-written baseline: score each memory by how many query words it contains.
fn scan<'a>(texts: &'a [String], query: &[&str], k: usize) -> Vec<(&'a str, usize)> {
    let mut scored: Vec<(&str, usize)> = texts
        .iter()
        .map(|t| (t.as_str(), query.iter().filter(|w| t.contains(*w)).count()))
        .filter(|(_, s)| *s > 0)
        .collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.1));
    scored.truncate(k);
    scored
}

fn recall(c: &mut Criterion) {
    let mut group = c.benchmark_group("plugins/recall");
    group.sample_size(20);
    let query = "parking for a visitor bike";
    let words: Vec<&str> = ["parking", "visitor", "bike"].to_vec();
    // `cargo test` runs each benchmark once, unoptimised: a small namespace keeps it quick.
    let sizes: &[usize] = if std::env::args().any(|a| a == "--bench") {
        &[10_000, 100_000]
    } else {
        &[1_000]
    };
    for &n in sizes {
        let texts = memories(n);
        let mut namespace = Namespace::default();
        for text in &texts {
            namespace.upsert(None, text.clone());
        }
        // Build the index once, as the first recall after a thaw does.
        namespace.recall(query, 3);
        group.bench_function(format!("ours_{}k", n / 1_000), |b| {
            b.iter(|| black_box(namespace.recall(black_box(query), 3).len()))
        });
        group.bench_function(format!("scan_{}k", n / 1_000), |b| {
            b.iter(|| black_box(scan(&texts, black_box(&words), 3).len()))
        });
    }
    group.finish();
}

criterion::criterion_group!(benches, signal_cost, recall);
criterion::criterion_main!(benches);
