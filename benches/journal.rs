//! What the input journal costs and how fast a journal replays.
//!
//! - `journal/cast`: signals per second into a running agent (the `server/cast` setup: a Direct
//!   agent counting, batches of 1,000 closed by one round trip, one thread), with the journal
//!   off, journaling to a `MemoryStore`, and journaling to a `RedbStore` file (fsync per
//!   write transaction; the writer coalesces what queued up). On one thread the writer task
//!   (encoding, storing) and the blocking pool's hand-offs are counted in the agent's time.
//! - `journal/cast_multi_thread`: the same on tokio's default multi-thread runtime (one worker
//!   per core), where the journal's writer can run beside the agent.
//! - `journal/replay`: steps per second replaying a 10,000-step journal offline (every state
//!   hash checked), against `handle_signal` called on the agent directly for the same signals
//!   (the strategy's work alone, no hashing), for scale.
//! - Journal bytes per step: printed, over the same 10,000 steps (default snapshot policy).
//!
//! `cargo bench -p stratagem-benches --bench journal`; results in BENCHMARKS.md. For callgrind,
//! `STRATAGEM_PROFILE=journal/cast/journal_memory:40000` runs only that many casts (`profile.rs`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use stratagem::journal::{Journal, JournalOptions};
use stratagem::prelude::*;
use stratagem::store::{MemoryStore, RedbStore};
use tokio::runtime::Runtime;

#[path = "profile.rs"]
mod profile;
use profile::bench;

/// Counts what it is told.
#[agent(strategy = Direct, actions [count], routes { "bench.count" => count })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Tally {
    n: u64,
}

/// Adds one.
#[action]
fn count(tally: &mut Tally) {
    tally.n += 1;
}

const BATCH: u64 = 1_000;
const REPLAY_STEPS: u64 = 10_000;

/// Casts `iters` signals in batches of [`BATCH`], each closed by one `call`.
async fn cast_batches(server: &AgentServer<Tally>, signal: &Signal, iters: u64) -> Duration {
    let start = Instant::now();
    let mut left = iters;
    while left > 0 {
        let batch = left.min(BATCH);
        for _ in 0..batch {
            server.cast(signal.clone()).unwrap();
        }
        server.call(signal.clone()).await.unwrap();
        left -= batch;
    }
    start.elapsed()
}

fn cast(c: &mut Criterion, group_name: &str, rt: &Runtime, signal: &Signal) {
    let dir = tempfile::tempdir().unwrap();
    let redb = RedbStore::open(dir.path().join("journal.redb")).unwrap();
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Elements(1));
    for (name, options) in [
        ("journal_off", Options::default()),
        (
            "journal_memory",
            Options::default().journal(JournalOptions::new(MemoryStore::new())),
        ),
        (
            "journal_redb",
            Options::default().journal(JournalOptions::new(redb.clone())),
        ),
    ] {
        let server = rt
            .block_on(AgentServer::start(Tally::new(), options))
            .unwrap();
        bench(&mut group, group_name, name, |b| {
            b.iter_custom(|iters| rt.block_on(cast_batches(&server, signal, iters)))
        });
        rt.block_on(server.stop());
    }
    group.finish();
}

/// A journal of [`REPLAY_STEPS`] steps, with its store's bytes per step.
fn recorded(rt: &Runtime, signal: &Signal) -> Journal {
    rt.block_on(async {
        let store = MemoryStore::new();
        let options = Options::default().journal(JournalOptions::new(store.clone()));
        let server = AgentServer::start(Tally::new().with_id("tally"), options)
            .await
            .unwrap();
        cast_batches(&server, signal, REPLAY_STEPS - 1).await;
        server.stop().await;
        Journal::load(&store, "tally").await.unwrap()
    })
}

fn replay(c: &mut Criterion, rt: &Runtime, signal: &Signal) {
    let journal = recorded(rt, signal);
    let steps = journal.steps().count() as u64;
    let step_bytes: u64 = journal
        .steps()
        .map(|s| serde_json::to_vec(s).unwrap().len() as u64)
        .sum();
    println!(
        "journal: {steps} steps kept in {} bytes ({} B per step overall, as stored; {} B per step record as JSON; snapshots and compaction included in the first)",
        journal.bytes(),
        journal.bytes() / steps,
        step_bytes / steps
    );
    let mut group = c.benchmark_group("journal/replay");
    group.throughput(Throughput::Elements(steps));
    bench(&mut group, "journal/replay", "replay_checked", |b| {
        b.iter(|| black_box(journal.replay::<Tally>().unwrap()))
    });
    let signals: Vec<Signal> = (0..steps).map(|_| signal.clone()).collect();
    bench(&mut group, "journal/replay", "handle_signal_only", |b| {
        b.iter(|| {
            let mut agent = Tally::new();
            for signal in &signals {
                black_box(agent.handle_signal(signal));
            }
            agent
        })
    });
    group.finish();
}

fn main() {
    // One thread, as in `benches/server.rs`: the journal's writer task shares it with the agent.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let signal = Signal::new("bench.count", json!(null));
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
        .configure_from_args();
    cast(&mut c, "journal/cast", &rt, &signal);
    replay(&mut c, &rt, &signal);
    // What a user runs by default: tokio's multi-thread runtime, where the writer task can
    // run on another worker than the agent's.
    let multi = Runtime::new().unwrap();
    cast(&mut c, "journal/cast_multi_thread", &multi, &signal);
    c.final_summary();
}
