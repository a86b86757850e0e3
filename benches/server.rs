//! The agent server against a hand-written tokio actor doing the same work.
//!
//! - `cast`: signals per second into a running agent, each routed and run through `cmd`. The
//!   baseline is a minimal actor: a task owning the same `Agent`, fed by a bounded tokio mpsc
//!   channel, calling `handle_signal` on each signal. Both sides send in batches of 1,000 and
//!   wait for the batch with one round trip.
//! - `call`: the latency of one signal and its answer (directives and snapshot). The baseline
//!   sends the signal with a oneshot reply over the same kind of channel.
//! - `channel_only`: the same traffic into a task that does nothing with it, for scale: the
//!   difference to `raw_actor` is the agent's own work (routing, `cmd`, the action).
//! - `cast_inspected`: `cast` again, without the live inspector, with one watching the agent,
//!   and with a page streaming every step from it (the `inspector` feature's cost).
//! - Memory per idle agent: RSS growth over 100,000 started, idle agents (`/proc/self/status`,
//!   Linux), measured before the timing benchmarks run. The raw actor's figure is printed
//!   beside it.
//!
//! `cargo bench -p stratagem-benches --bench server`; the results and ratios are in BENCHMARKS.md.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use futures::StreamExt;
use stratagem::inspector::Inspector;
use stratagem::prelude::*;
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, oneshot};

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

enum RawMessage {
    Cast(Signal),
    Call(Signal, oneshot::Sender<(Vec<Directive>, Snapshot)>),
}

/// The channel alone: a task that receives signals and does nothing with them, for scale.
fn empty_actor() -> mpsc::Sender<(Signal, Option<oneshot::Sender<()>>)> {
    let (tx, mut rx) =
        mpsc::channel::<(Signal, Option<oneshot::Sender<()>>)>(Options::DEFAULT_MAILBOX_CAPACITY);
    tokio::spawn(async move {
        while let Some((signal, reply)) = rx.recv().await {
            black_box(signal);
            if let Some(reply) = reply {
                let _ = reply.send(());
            }
        }
    });
    tx
}

async fn empty_call(tx: &mpsc::Sender<(Signal, Option<oneshot::Sender<()>>)>, signal: Signal) {
    let (reply, answer) = oneshot::channel();
    tx.send((signal, Some(reply))).await.unwrap();
    answer.await.unwrap()
}

/// The baseline: the least an actor running this agent must do.
fn raw_actor(mut agent: Agent<Tally>) -> mpsc::Sender<RawMessage> {
    let (tx, mut rx) = mpsc::channel(Options::DEFAULT_MAILBOX_CAPACITY);
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            match message {
                RawMessage::Cast(signal) => {
                    black_box(agent.handle_signal(&signal));
                }
                RawMessage::Call(signal, reply) => {
                    let directives = agent.handle_signal(&signal);
                    let _ = reply.send((directives, agent.snapshot()));
                }
            }
        }
    });
    tx
}

async fn raw_call(tx: &mpsc::Sender<RawMessage>, signal: Signal) -> (Vec<Directive>, Snapshot) {
    let (reply, answer) = oneshot::channel();
    tx.send(RawMessage::Call(signal, reply)).await.unwrap();
    answer.await.unwrap()
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Starts `n` idle agents with `start` and returns them with the RSS growth per agent. The
/// caller keeps them alive, so a later measurement cannot reuse their memory.
fn idle_agents<H, F>(rt: &Runtime, n: usize, start: impl Fn(usize) -> F) -> (Vec<H>, f64)
where
    F: std::future::Future<Output = H>,
{
    rt.block_on(async {
        let before = rss_kib();
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            handles.push(start(i).await);
        }
        // Let every task reach its idle wait.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let growth = rss_kib().saturating_sub(before) * 1024;
        (handles, growth as f64 / n as f64)
    })
}

fn memory(rt: &Runtime, agents: usize) {
    // Warm the allocator and the runtime so the first agents do not pay for them.
    let warm = idle_agents(rt, 1_000, |i| async move {
        AgentServer::start(
            Tally::new().with_id(format!("warm-{i}")),
            Options::default(),
        )
        .await
        .unwrap()
    });
    let raw = idle_agents(rt, agents, |i| async move {
        raw_actor(Tally::new().with_id(format!("raw-{i}")))
    });
    let server = idle_agents(rt, agents, |i| async move {
        AgentServer::start(
            Tally::new().with_id(format!("agent-{i}")),
            Options::default(),
        )
        .await
        .unwrap()
    });
    println!(
        "memory per idle agent ({agents} agents, RSS growth): server {:.0} B, raw actor {:.0} B",
        server.1, raw.1
    );
    rt.block_on(async move {
        for agent in warm.0.iter().chain(&server.0) {
            agent.stop().await;
        }
        drop(raw);
    });
}

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

/// The live inspector's cost: the same casts without an inspector, with one watching the agent
/// (every step observed, serialized, truncated and kept), and with a page reading its live
/// stream (an SSE client reading every byte). All on the one thread, so every cost is counted.
fn inspected(c: &mut Criterion, rt: &Runtime, signal: &Signal) {
    let mut group = c.benchmark_group("server/cast_inspected");
    group.throughput(Throughput::Elements(1));
    for setup in ["without", "watched", "streaming"] {
        let server = rt
            .block_on(AgentServer::start(Tally::new(), Options::default()))
            .unwrap();
        let inspector = (setup != "without").then(|| {
            rt.block_on(Inspector::new().agent(&server).serve("127.0.0.1:0"))
                .unwrap()
        });
        let page = inspector
            .as_ref()
            .filter(|_| setup == "streaming")
            .map(|inspector| {
                let url = format!("http://{}/api/stream", inspector.addr());
                // Connected before the first cast, so it sees every step.
                let response = rt.block_on(reqwest::get(url)).unwrap();
                rt.spawn(async move {
                    let mut body = response.bytes_stream();
                    let mut bytes = 0usize;
                    while let Some(Ok(chunk)) = body.next().await {
                        bytes += chunk.len();
                    }
                    bytes
                })
            });
        group.bench_function(setup, |b| {
            b.iter_custom(|iters| rt.block_on(cast_batches(&server, signal, iters)))
        });
        if let Some(inspector) = inspector {
            rt.block_on(inspector.shutdown());
        }
        if let Some(page) = page {
            let bytes = rt.block_on(page).unwrap();
            println!("the page read {} KiB of events", bytes / 1024);
        }
        rt.block_on(server.stop());
    }
    group.finish();
}

fn benches(c: &mut Criterion, rt: &Runtime) {
    let signal = Signal::new("bench.count", json!(null));

    let mut group = c.benchmark_group("server/cast");
    group.throughput(Throughput::Elements(1));
    group.bench_function("channel_only", |b| {
        let tx = rt.block_on(async { empty_actor() });
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                let mut left = iters;
                while left > 0 {
                    let batch = left.min(BATCH);
                    for _ in 0..batch {
                        tx.send((signal.clone(), None)).await.unwrap();
                    }
                    empty_call(&tx, signal.clone()).await;
                    left -= batch;
                }
                start.elapsed()
            })
        })
    });
    group.bench_function("raw_actor", |b| {
        let tx = rt.block_on(async { raw_actor(Tally::new()) });
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                let mut left = iters;
                while left > 0 {
                    let batch = left.min(BATCH);
                    for _ in 0..batch {
                        tx.send(RawMessage::Cast(signal.clone())).await.unwrap();
                    }
                    raw_call(&tx, signal.clone()).await;
                    left -= batch;
                }
                start.elapsed()
            })
        })
    });
    for (name, options) in [
        ("server", Options::default()),
        (
            "server_without_isolation",
            Options::default().isolate_strategy_panics(false),
        ),
    ] {
        let server = rt
            .block_on(AgentServer::start(Tally::new(), options))
            .unwrap();
        group.bench_function(name, |b| {
            b.iter_custom(|iters| rt.block_on(cast_batches(&server, &signal, iters)))
        });
        rt.block_on(server.stop());
    }
    group.finish();

    inspected(c, rt, &signal);

    let mut group = c.benchmark_group("server/call");
    group.bench_function("channel_only", |b| {
        let tx = rt.block_on(async { empty_actor() });
        b.iter(|| rt.block_on(empty_call(&tx, signal.clone())))
    });
    group.bench_function("raw_actor", |b| {
        let tx = rt.block_on(async { raw_actor(Tally::new()) });
        b.iter(|| rt.block_on(raw_call(&tx, signal.clone())))
    });
    let server = rt
        .block_on(AgentServer::start(Tally::new(), Options::default()))
        .unwrap();
    group.bench_function("server", |b| {
        b.iter(|| rt.block_on(server.call(signal.clone())).unwrap())
    });
    rt.block_on(server.stop());
    group.finish();
}

fn main() {
    // One thread: sender and agent share it, as both baselines do; the numbers then measure
    // work, not cross-core wake-ups on a shared machine.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary as a smoke
    // test, where a thousand agents are enough.
    let benchmarking = std::env::args().any(|a| a == "--bench");
    memory(&rt, if benchmarking { 100_000 } else { 1_000 });
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
        .configure_from_args();
    benches(&mut c, &rt);
    c.final_summary();
}
