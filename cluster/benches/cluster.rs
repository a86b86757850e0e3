//! Cluster benchmark against a real `nats-server -js` and PostgreSQL (fsync on) it starts:
//!
//! - throughput of signals through the cluster with 1, 2 and 3 nodes (in this process), next
//!   to raw JetStream publish + pull + ack of the same messages and to the single-node agent
//!   server (in memory, no checkpoints);
//! - failover time: from the expiry of a killed node's lease to the first signal the new
//!   owner processed (both read on PostgreSQL's clock);
//! - checkpoint write latency (one fenced save, sequential).
//!
//! `cargo bench -p agent-cluster --features nats --bench cluster`; `STRATAGEM_BENCH_SIGNALS` sets the number of
//! signals per throughput run (default 10,000, over 1,000 agents).

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use agent_cluster::{Cluster, ClusterClient, PostgresStore, shard_of};
use agent_runtime::server::{AgentServer, Options};
use agent_runtime::{Agent, Signal};
use async_nats::jetstream::{self, AckKind, consumer, stream};
use futures::StreamExt;
use serde_json::json;
use support::cluster::{Scenario, add, counts, node_main, runtime};
use support::tally::Tally;
use support::{Nats, Postgres};

const AGENTS: u64 = 1_000;
const SHARDS: u32 = 16;

fn main() {
    if let Ok(name) = std::env::var("STRATAGEM_TEST_NODE") {
        return node_main(name);
    }
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "the cluster benchmark runs with `cargo bench -p agent-cluster --features nats --bench cluster`"
        );
        return;
    }
    let signals: u64 = std::env::var("STRATAGEM_BENCH_SIGNALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let nats = Nats::start();
    let pg = Postgres::start(true);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.trim());
    let rt = runtime();
    let raw = rt.block_on(raw_jetstream(&nats, signals));
    report("raw JetStream publish + pull + ack", signals, raw, raw);
    let single = rt.block_on(single_node_server(signals));
    report("single-node AgentServer (memory)", signals, single, raw);
    for nodes in 1..=3 {
        let elapsed = rt.block_on(cluster(&nats, &pg, nodes, signals));
        report(&format!("cluster, {nodes} node(s)"), signals, elapsed, raw);
    }
    failover(&nats, &pg);
    rt.block_on(checkpoint_latency(&pg));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.trim());
}

/// The runtime signals are published from, in every throughput run: its own two threads, as
/// a client in another process would have, so the publisher does not queue behind the tasks it
/// feeds (the consumers or the nodes), whichever side is measured.
fn publisher() -> &'static tokio::runtime::Runtime {
    static PUBLISHER: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    PUBLISHER.get_or_init(runtime)
}

fn report(what: &str, signals: u64, elapsed: Duration, raw: Duration) {
    let rate = signals as f64 / elapsed.as_secs_f64();
    let ratio = raw.as_secs_f64() / elapsed.as_secs_f64();
    println!(
        "{what:<40} {signals} signals in {elapsed:>8.2?}: {rate:>9.0}/s ({ratio:.2}x raw JetStream)"
    );
}

fn agent(i: u64) -> String {
    format!("bench-{}", i % AGENTS)
}

async fn publish_all(client: &ClusterClient, signals: u64) {
    futures::stream::iter(0..signals)
        .map(|i| {
            let client = client.clone();
            async move { client.send::<Tally>(&agent(i), &add()).await.unwrap() }
        })
        .buffer_unordered(256)
        .collect::<Vec<()>>()
        .await;
}

/// The same messages (CloudEvents JSON, `Nats-Msg-Id`, one subject per shard) published,
/// pulled by one consumer per shard as a shard pulls them (what is waiting, up to 256, else
/// wait for the next), decoded and acknowledged one by one.
async fn raw_jetstream(nats: &Nats, signals: u64) -> Duration {
    let client = async_nats::connect(nats.url()).await.unwrap();
    let js = jetstream::new(client);
    let stream = js
        .get_or_create_stream(stream::Config {
            name: "RAW".into(),
            subjects: vec!["raw.*".into()],
            retention: stream::RetentionPolicy::WorkQueue,
            ..Default::default()
        })
        .await
        .unwrap();
    let started = Instant::now();
    let mut consumers = Vec::new();
    for shard in 0..SHARDS {
        let expected = (0..signals)
            .filter(|i| shard_of(&agent(*i), SHARDS) == shard)
            .count();
        let consumer: consumer::PullConsumer = stream
            .get_or_create_consumer(
                &format!("raw-{shard}"),
                consumer::pull::Config {
                    durable_name: Some(format!("raw-{shard}")),
                    filter_subject: format!("raw.{shard}"),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        consumers.push(tokio::spawn(async move {
            let mut seen = 0;
            while seen < expected {
                // As a shard does: what is waiting (up to 256) at once, else wait for one.
                let mut batch = consumer.fetch().max_messages(256).messages().await.unwrap();
                let mut got = 0;
                while let Some(message) = batch.next().await {
                    let message = message.unwrap();
                    let _: Signal = serde_json::from_slice(&message.payload).unwrap();
                    message.ack_with(AckKind::Ack).await.unwrap();
                    got += 1;
                }
                if got == 0 {
                    let mut batch = consumer
                        .batch()
                        .max_messages(1)
                        .expires(Duration::from_millis(250))
                        .messages()
                        .await
                        .unwrap();
                    // Given up at twice the expiry, as a shard does.
                    let _ = tokio::time::timeout(Duration::from_millis(500), async {
                        while let Some(message) = batch.next().await {
                            let message = message.unwrap();
                            let _: Signal = serde_json::from_slice(&message.payload).unwrap();
                            message.ack_with(AckKind::Ack).await.unwrap();
                            got += 1;
                        }
                    })
                    .await;
                }
                seen += got;
            }
        }));
    }
    let url = nats.url();
    let published = publisher().spawn(async move {
        // Its own connection, on its own threads, as the cluster's publisher has.
        let js = jetstream::new(async_nats::connect(url).await.unwrap());
        futures::stream::iter(0..signals)
            .map(|i| {
                let js = js.clone();
                async move {
                    let signal = add();
                    let message = jetstream::message::PublishMessage::build()
                        .payload(serde_json::to_vec(&signal).unwrap().into())
                        .message_id(&signal.id)
                        .header("Stratagem-Agent", agent(i).as_str());
                    let subject = format!("raw.{}", shard_of(&agent(i), SHARDS));
                    js.send_publish(subject, message)
                        .await
                        .unwrap()
                        .await
                        .unwrap();
                }
            })
            .buffer_unordered(256)
            .collect::<Vec<()>>()
            .await;
        started.elapsed()
    });
    println!("  (raw: published in {:.2?})", published.await.unwrap());
    for consumer in consumers {
        consumer.await.unwrap();
    }
    started.elapsed()
}

async fn single_node_server(signals: u64) -> Duration {
    let mut servers = Vec::new();
    for i in 0..AGENTS {
        servers.push(
            AgentServer::start(
                Agent::new(Tally::default()).with_id(agent(i)),
                Options::default(),
            )
            .await
            .unwrap(),
        );
    }
    let started = Instant::now();
    for i in 0..signals {
        servers[(i % AGENTS) as usize].cast(add()).unwrap();
    }
    let mut total = 0;
    for server in &servers {
        // A call is answered after everything queued before it.
        server.snapshot().await.unwrap();
        total += server.state().await.unwrap().count;
    }
    assert_eq!(total, signals);
    started.elapsed()
}

async fn cluster(nats: &Nats, pg: &Postgres, nodes: usize, signals: u64) -> Duration {
    let name = format!("bench_{nodes}");
    let scenario = tokio::task::block_in_place(|| Scenario::new(nats, pg, &name, SHARDS));
    let mut members = Vec::new();
    for n in 0..nodes {
        let options = scenario.options().node(format!("{name}-{n}"));
        members.push(
            Cluster::<Tally>::connect_with(&scenario.nats, &scenario.postgres, options)
                .await
                .unwrap(),
        );
    }
    // Let the placement settle (every node sees the others) before timing.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let client = scenario.client().await;
    let started = Instant::now();
    let publisher = publisher().spawn({
        let (url, options) = (scenario.nats.clone(), scenario.options());
        async move {
            let client = ClusterClient::connect(&url, &options).await.unwrap();
            publish_all(&client, signals).await;
            started.elapsed()
        }
    });
    let mut stream = client.ensure_stream("Tally").await.unwrap();
    loop {
        let applied: u64 = members.iter().map(|m| m.stats().applied).sum();
        let left = stream.info().await.unwrap().state.messages;
        if applied >= signals && left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    let (redelivered, duplicates) = members.iter().fold((0, 0), |(r, d), m| {
        (r + m.stats().redelivered, d + m.stats().duplicates)
    });
    println!(
        "  ({nodes} node(s): {redelivered} signals redelivered, {duplicates} recognised as duplicates)"
    );
    println!(
        "  ({nodes} node(s): published in {:.2?})",
        publisher.await.unwrap()
    );
    for member in members {
        member.shutdown().await.unwrap();
    }
    let store = scenario.store().await;
    let total: u64 = counts(&store, "count").await.values().sum();
    assert_eq!(total, signals, "the cluster lost or repeated signals");
    elapsed
}

/// Kills the owner of an agent and measures, on PostgreSQL's clock, from the expiry of its
/// lease to the checkpoint of the first signal the new owner processed.
fn failover(nats: &Nats, pg: &Postgres) {
    let scenario = Scenario::new(nats, pg, "bench_failover", 4);
    let mut nodes = vec![scenario.node("f1"), scenario.node("f2")];
    let rt = runtime();
    let mut samples = Vec::new();
    rt.block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        let (raw, connection) = tokio_postgres::connect(&scenario.postgres, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        for round in 0..3 {
            let id = format!("f-{round}");
            client.send::<Tally>(&id, &add()).await.unwrap();
            while counts(&store, "count").await.get(&id) != Some(&1) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let (owner, _) = store.holder(&id).await.unwrap().unwrap();
            let at = nodes.iter().position(|n| n.name == owner).unwrap();
            nodes.remove(at).kill();
            let row = raw
                .query_one(
                    "SELECT expires_at FROM stratagem_leases WHERE key = $1",
                    &[&id],
                )
                .await
                .unwrap();
            let expired: std::time::SystemTime = row.get(0);
            client.send::<Tally>(&id, &add()).await.unwrap();
            while counts(&store, "count").await.get(&id) != Some(&2) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let row = raw
                .query_one(
                    "SELECT saved_at FROM stratagem_checkpoints WHERE key = $1",
                    &[&id],
                )
                .await
                .unwrap();
            let saved: std::time::SystemTime = row.get(0);
            samples.push(saved.duration_since(expired).unwrap_or_default());
            nodes.push(tokio::task::block_in_place(|| {
                scenario.node(&format!("f{}", round + 3))
            }));
        }
    });
    println!(
        "failover (lease {} ms, renewal every third): lease expiry -> first processed signal {:?}",
        support::cluster::LEASE_MS,
        samples
    );
    for node in nodes {
        node.stop();
    }
}

async fn checkpoint_latency(pg: &Postgres) {
    let store = PostgresStore::connect(&pg.url()).await.unwrap();
    let lease = store
        .claim("latency", "bench", Duration::from_secs(600))
        .await
        .unwrap()
        .unwrap();
    let checkpoint = serde_json::to_vec(&json!({
        "format": "stratagem.checkpoint", "version": 1,
        "agent": {"agent": "Tally", "id": "latency", "state": {"count": 12345, "reminders": 0, "reminded_on": []}, "strategy": null},
        "timers": [], "cron": [], "in_flight": [], "saved_at": "2026-01-01T00:00:00Z"
    }))
    .unwrap();
    let seen: Vec<String> = (0..100).map(|_| uuid::Uuid::now_v7().to_string()).collect();
    let mut samples = Vec::new();
    for _ in 0..1_000 {
        let started = Instant::now();
        store.save_fenced(&lease, &checkpoint, &seen).await.unwrap();
        samples.push(started.elapsed());
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "checkpoint write ({} bytes + 100 ids, fsync on), 1,000 sequential: p50 {:?}, p90 {:?}, p99 {:?}",
        checkpoint.len(),
        at(0.5),
        at(0.9),
        at(0.99)
    );
}
