//! Cluster scenarios against a real `nats-server -js` and PostgreSQL started here, with node
//! processes that are killed (`SIGKILL`), paused (`SIGSTOP`) and restarted:
//!
//! (a) 3 nodes, 1,000 agents, 100,000 signals (scaled by `STRATAGEM_CLUSTER_SIGNALS`), one node
//!     killed and another restarted mid-run: every agent counts exactly what it was sent;
//! (b) a node paused while its lease expires cannot write when it resumes;
//! (c) a timer of an agent taken over fires once, on the new owner;
//! (d) PostgreSQL restarted mid-run: nothing lost, nothing counted twice.
//!
//! The binary runs without the test harness: re-executed with `STRATAGEM_TEST_NODE=<name>`, it
//! is a node process that serves `Tally` agents until told `stop` on stdin.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use agent_cluster::{Cluster, ClusterClient, ClusterOptions, PostgresStore};
use agent_runtime::Signal;
use futures::StreamExt;
use serde_json::json;
use support::tally::Tally;
use support::{Nats, Postgres};

/// Lease and ack-wait of the test nodes: short, so failover happens within seconds.
const LEASE_MS: u64 = 2_000;
const ACK_WAIT_MS: u64 = 3_000;

fn main() {
    if let Ok(name) = std::env::var("STRATAGEM_TEST_NODE") {
        return node_main(name);
    }
    let nats = Nats::start();
    let pg = Postgres::start(false);
    let started = Instant::now();
    kill_and_restart(&nats, &pg);
    eprintln!("(a) kill and restart: ok ({:.1?})", started.elapsed());
    let started = Instant::now();
    paused_node_cannot_write(&nats, &pg);
    eprintln!("(b) paused node: ok ({:.1?})", started.elapsed());
    let started = Instant::now();
    timer_fires_once_on_the_new_owner(&nats, &pg);
    eprintln!("(c) timers: ok ({:.1?})", started.elapsed());
    let started = Instant::now();
    postgres_restart(&nats, &pg);
    eprintln!("(d) postgres restart: ok ({:.1?})", started.elapsed());
}

/// Where a scenario's nodes meet: its own database and stream.
#[derive(Clone)]
struct Scenario {
    nats: String,
    postgres: String,
    stream: String,
    shards: u32,
}

impl Scenario {
    fn new(nats: &Nats, pg: &Postgres, name: &str, shards: u32) -> Scenario {
        runtime().block_on(async {
            let (client, connection) = tokio_postgres::connect(&pg.url(), tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            client
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
                .unwrap();
        });
        Scenario {
            nats: nats.url(),
            postgres: format!("postgres://stratagem@127.0.0.1:{}/{name}", pg.port),
            stream: name.to_uppercase(),
            shards,
        }
    }

    fn options(&self) -> ClusterOptions {
        ClusterOptions::new()
            .prefix(format!("test.{}", self.stream.to_lowercase()))
            .stream(self.stream.clone())
            .shards(self.shards)
            .lease_ttl(Duration::from_millis(LEASE_MS))
            .ack_wait(Duration::from_millis(ACK_WAIT_MS))
    }

    fn node(&self, name: &str) -> NodeProcess {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env("STRATAGEM_TEST_NODE", name)
            .env("NODE_NATS", &self.nats)
            .env("NODE_POSTGRES", &self.postgres)
            .env("NODE_STREAM", &self.stream)
            .env("NODE_SHARDS", self.shards.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start a node process");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut node = NodeProcess {
            name: name.to_string(),
            child,
            stdin,
            stdout,
        };
        assert_eq!(node.line(), "ready", "node `{name}` did not start");
        node
    }

    async fn client(&self) -> ClusterClient {
        ClusterClient::connect(&self.nats, &self.options())
            .await
            .unwrap()
    }

    async fn store(&self) -> PostgresStore {
        PostgresStore::connect(&self.postgres).await.unwrap()
    }
}

/// A node process: `stats` and `stop` on its stdin, signals by PID.
struct NodeProcess {
    name: String,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl NodeProcess {
    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim().to_string()
    }

    fn tell(&mut self, command: &str) -> String {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        self.line()
    }

    /// `refused_checkpoints` of its stats.
    fn refused(&mut self) -> u64 {
        let stats: serde_json::Value = serde_json::from_str(&self.tell("stats")).unwrap();
        stats["refused_checkpoints"].as_u64().unwrap()
    }

    /// A graceful stop: agents checkpointed, leases released.
    fn stop(mut self) {
        assert_eq!(
            self.tell("stop"),
            "stopped",
            "node `{}` did not stop",
            self.name
        );
        self.child.wait().unwrap();
    }

    /// `SIGKILL`: nothing is handed back.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cannot send SIG{signal} to node `{}`", self.name);
    }
}

fn node_main(name: String) {
    let var = |key: &str| std::env::var(key).unwrap_or_else(|_| panic!("`{key}` is not set"));
    runtime().block_on(async {
        let options = ClusterOptions::new()
            .node(name.clone())
            .prefix(format!("test.{}", var("NODE_STREAM").to_lowercase()))
            .stream(var("NODE_STREAM"))
            .shards(var("NODE_SHARDS").parse().unwrap())
            .lease_ttl(Duration::from_millis(LEASE_MS))
            .ack_wait(Duration::from_millis(ACK_WAIT_MS));
        let node =
            Cluster::<Tally>::connect_with(&var("NODE_NATS"), &var("NODE_POSTGRES"), options)
                .await
                .unwrap_or_else(|e| panic!("node `{name}` cannot start: {e}"));
        println!("ready");
        let mut lines = std::io::stdin().lock().lines();
        loop {
            let line = tokio::task::block_in_place(|| lines.next());
            match line.and_then(Result::ok).as_deref() {
                Some("stats") => {
                    let s = node.stats();
                    println!(
                        "{}",
                        json!({"applied": s.applied, "duplicates": s.duplicates,
                               "refused_checkpoints": s.refused_checkpoints, "thawed": s.thawed})
                    );
                }
                Some("stop") | None => break,
                Some(other) => panic!("unknown node command `{other}`"),
            }
        }
        node.shutdown().await.unwrap();
        println!("stopped");
    });
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Every agent's `state` field `field`, from its checkpoint.
async fn counts(store: &PostgresStore, field: &str) -> BTreeMap<String, u64> {
    use agent_runtime::store::Store;
    let mut counts = BTreeMap::new();
    for key in store.keys().await.unwrap() {
        if let Some(bytes) = store.load(&key).await.unwrap() {
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            counts.insert(key, value["agent"]["state"][field].as_u64().unwrap_or(0));
        }
    }
    counts
}

/// Waits (up to `limit`) until `done` holds, polling; panics with `what` otherwise.
async fn wait_until<F, Fut>(limit: Duration, what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let started = Instant::now();
    loop {
        match done().await {
            Ok(()) => return,
            Err(state) if started.elapsed() > limit => {
                panic!("{what} did not happen within {limit:?}: {state}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

fn give_up_after(started: Instant, limit: Duration, what: &str, state: &str) {
    assert!(
        started.elapsed() < limit,
        "{what} did not happen within {limit:?}: {state}"
    );
}

fn add() -> Signal {
    Signal::new("tally.add", json!({}))
}

fn kill_and_restart(nats: &Nats, pg: &Postgres) {
    let signals: u64 = std::env::var("STRATAGEM_CLUSTER_SIGNALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let agents: u64 = 1_000.min(signals);
    let per_agent = signals / agents;
    let total = per_agent * agents;
    let scenario = Scenario::new(nats, pg, "kill_restart", 16);
    let n1 = scenario.node("a1");
    let mut n2 = Some(scenario.node("a2"));
    let n3 = scenario.node("a3");
    let rt = runtime();
    let (mut n1, mut restarted) = (Some(n1), None);
    rt.block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        let publisher = tokio::spawn({
            let client = client.clone();
            async move {
                futures::stream::iter(0..total)
                    .map(|i| {
                        let client = client.clone();
                        async move {
                            let agent = format!("a-{}", i % agents);
                            let signal = add();
                            client.send::<Tally>(&agent, &signal).await.unwrap();
                            // Every hundredth signal is published twice: JetStream drops the
                            // second copy by its `Nats-Msg-Id`.
                            if i % 100 == 0 {
                                client.send::<Tally>(&agent, &signal).await.unwrap();
                            }
                        }
                    })
                    .buffer_unordered(256)
                    .collect::<Vec<()>>()
                    .await;
            }
        });
        let started = Instant::now();
        loop {
            let sum: u64 = counts(&store, "count").await.values().sum();
            if sum * 10 >= total * 3
                && let Some(node) = n1.take()
            {
                eprintln!("(a) SIGKILL a1 at {sum} of {total}");
                node.kill();
            }
            if sum * 10 >= total * 6
                && let Some(node) = n2.take()
            {
                eprintln!("(a) restarting a2 at {sum} of {total}");
                node.stop();
                restarted = Some(scenario.node("a2"));
            }
            if sum == total {
                break;
            }
            give_up_after(
                started,
                Duration::from_secs(300),
                "processing every signal",
                &format!("{sum} of {total} counted"),
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        publisher.await.unwrap();
        // Everything acknowledged: the work-queue stream is empty.
        let mut stream = client.ensure_stream("Tally").await.unwrap();
        let started = Instant::now();
        loop {
            let left = stream.info().await.unwrap().state.messages;
            if left == 0 {
                break;
            }
            give_up_after(
                started,
                Duration::from_secs(60),
                "acknowledging every signal",
                &format!("{left} unacknowledged"),
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let counts = counts(&store, "count").await;
        assert_eq!(counts.len() as u64, agents);
        let wrong: Vec<_> = counts.iter().filter(|(_, c)| **c != per_agent).collect();
        assert!(
            wrong.is_empty(),
            "agents that did not count exactly {per_agent}: {wrong:?}"
        );
    });
    assert!(
        n1.is_none() && n2.is_none(),
        "the kill and the restart both happened"
    );
    restarted.unwrap().stop();
    n3.stop();
}

fn paused_node_cannot_write(nats: &Nats, pg: &Postgres) {
    let scenario = Scenario::new(nats, pg, "paused", 4);
    let mut nodes = BTreeMap::from([
        ("b1".to_string(), scenario.node("b1")),
        ("b2".to_string(), scenario.node("b2")),
    ]);
    let rt = runtime();
    rt.block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        for _ in 0..5 {
            client.send::<Tally>("b-x", &add()).await.unwrap();
        }
        wait_until(Duration::from_secs(30), "counting 5", || async {
            let c = counts(&store, "count").await.get("b-x").copied();
            if c == Some(5) {
                Ok(())
            } else {
                Err(format!("{c:?}"))
            }
        })
        .await;
        let (owner, token) = store.holder("b-x").await.unwrap().expect("b-x is leased");
        let mut paused = nodes.remove(&owner).unwrap();
        let (other, _) = nodes.iter().next().unwrap();
        let other = other.clone();
        // The owner takes a slow signal and is paused in the middle of the step, before its
        // checkpoint; its leases expire and the other node takes the agent over.
        client
            .send::<Tally>("b-x", &Signal::new("tally.slow", json!({"delay_ms": 3000})))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1000)).await;
        paused.signal("STOP");
        for _ in 0..2 {
            client.send::<Tally>("b-x", &add()).await.unwrap();
        }
        wait_until(Duration::from_secs(60), "the takeover", || async {
            let c = counts(&store, "count").await.get("b-x").copied();
            let holder = store.holder("b-x").await.unwrap();
            match holder {
                Some((h, t)) if h == other && t > token && c == Some(8) => Ok(()),
                _ => Err(format!("count {c:?}, holder {holder:?}")),
            }
        })
        .await;
        paused.signal("CONT");
        // Resumed, it finishes its step and tries to checkpoint: refused.
        let started = Instant::now();
        while paused.refused() == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the resumed node never tried to write"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(LEASE_MS)).await;
        assert_eq!(counts(&store, "count").await.get("b-x"), Some(&8));
        assert_eq!(
            store.holder("b-x").await.unwrap().map(|(h, _)| h),
            Some(other)
        );
        paused.stop();
    });
    for (_, node) in nodes {
        node.stop();
    }
}

fn timer_fires_once_on_the_new_owner(nats: &Nats, pg: &Postgres) {
    let scenario = Scenario::new(nats, pg, "timers", 4);
    let mut nodes = BTreeMap::from([
        ("c1".to_string(), scenario.node("c1")),
        ("c2".to_string(), scenario.node("c2")),
    ]);
    let rt = runtime();
    rt.block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        client
            .send::<Tally>(
                "c-r",
                &Signal::new("tally.remind", json!({"delay_ms": 4000})),
            )
            .await
            .unwrap();
        // The checkpoint holds the pending timer.
        wait_until(
            Duration::from_secs(30),
            "checkpointing the timer",
            || async {
                use agent_runtime::store::Store;
                let bytes = store.load("c-r").await.unwrap();
                let timers = bytes.map(|b| {
                    serde_json::from_slice::<serde_json::Value>(&b).unwrap()["timers"].clone()
                });
                match timers.as_ref().and_then(|t| t.as_array()).map(Vec::len) {
                    Some(1) => Ok(()),
                    other => Err(format!("{other:?} timers")),
                }
            },
        )
        .await;
        let (owner, _) = store.holder("c-r").await.unwrap().unwrap();
        nodes.remove(&owner).unwrap().kill();
        let (other, _) = nodes.iter().next().unwrap();
        wait_until(Duration::from_secs(60), "the reminder", || async {
            let c = counts(&store, "reminders").await.get("c-r").copied();
            if c == Some(1) {
                Ok(())
            } else {
                Err(format!("{c:?} reminders"))
            }
        })
        .await;
        tokio::time::sleep(Duration::from_millis(LEASE_MS)).await;
        use agent_runtime::store::Store;
        let bytes = store.load("c-r").await.unwrap().unwrap();
        let state =
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()["agent"]["state"].clone();
        assert_eq!(state["reminders"], 1, "{state}");
        assert_eq!(state["reminded_on"], json!([other]), "{state}");
    });
    for (_, node) in nodes {
        node.stop();
    }
}

fn postgres_restart(nats: &Nats, pg: &Postgres) {
    let (agents, per_agent) = (100u64, 50u64);
    let total = agents * per_agent;
    let scenario = Scenario::new(nats, pg, "pg_restart", 8);
    let nodes = [scenario.node("d1"), scenario.node("d2")];
    let rt = runtime();
    rt.block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        let publisher = tokio::spawn({
            let client = client.clone();
            async move {
                for i in 0..total {
                    client
                        .send::<Tally>(&format!("d-{}", i % agents), &add())
                        .await
                        .unwrap();
                }
            }
        });
        let (mut restarted, started) = (false, Instant::now());
        loop {
            let sum: u64 = counts(&store, "count").await.values().sum();
            if sum * 10 >= total * 3 && !restarted {
                eprintln!("(d) restarting postgres at {sum} of {total}");
                pg.stop();
                tokio::time::sleep(Duration::from_millis(1000)).await;
                pg.start_again();
                restarted = true;
            }
            if sum == total {
                break;
            }
            give_up_after(
                started,
                Duration::from_secs(180),
                "processing every signal",
                &format!("{sum} of {total} counted"),
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        publisher.await.unwrap();
        assert!(restarted);
        let counts = counts(&store, "count").await;
        let wrong: Vec<_> = counts.iter().filter(|(_, c)| **c != per_agent).collect();
        assert!(
            wrong.is_empty() && counts.len() as u64 == agents,
            "{wrong:?}"
        );
    });
    for node in nodes {
        node.stop();
    }
}
