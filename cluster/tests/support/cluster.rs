//! Node processes for the cluster tests and benchmarks: the test binary re-executed with
//! `STRATAGEM_TEST_NODE=<name>` serves `Tally` agents (or `Desk` ones, with `NODE_AGENT=Desk`)
//! until told `stop` on stdin.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use agent_cluster::{Cluster, ClusterClient, ClusterOptions, PostgresStore};
use agent_runtime::{AgentSpec, Signal};
use serde_json::json;

use super::desk::Desk;
use super::tally::Tally;
use super::{Nats, Postgres};

/// Lease and ack-wait of the test nodes: short, so failover happens within seconds.
pub const LEASE_MS: u64 = 2_000;
pub const ACK_WAIT_MS: u64 = 3_000;

/// Where a scenario's nodes meet: its own database and stream.
#[derive(Clone)]
pub struct Scenario {
    pub nats: String,
    pub postgres: String,
    pub stream: String,
    pub shards: u32,
}

impl Scenario {
    pub fn new(nats: &Nats, pg: &Postgres, name: &str, shards: u32) -> Scenario {
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

    pub fn options(&self) -> ClusterOptions {
        ClusterOptions::new()
            .prefix(format!("test.{}", self.stream.to_lowercase()))
            .stream(self.stream.clone())
            .shards(self.shards)
            .lease_ttl(Duration::from_millis(LEASE_MS))
            .ack_wait(Duration::from_millis(ACK_WAIT_MS))
    }

    pub fn node(&self, name: &str) -> NodeProcess {
        self.node_serving(name, "Tally")
    }

    /// A node process serving agents of type `agent` (`Tally` or `Desk`).
    pub fn node_serving(&self, name: &str, agent: &str) -> NodeProcess {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env("STRATAGEM_TEST_NODE", name)
            .env("NODE_AGENT", agent)
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

    /// Node processes by name.
    pub fn nodes(&self, names: &[&str]) -> BTreeMap<String, NodeProcess> {
        names
            .iter()
            .map(|name| (name.to_string(), self.node(name)))
            .collect()
    }

    pub async fn client(&self) -> ClusterClient {
        ClusterClient::connect(&self.nats, &self.options())
            .await
            .unwrap()
    }

    pub async fn store(&self) -> PostgresStore {
        PostgresStore::connect(&self.postgres).await.unwrap()
    }
}

/// A node process: `stats` and `stop` on its stdin, signals by PID.
pub struct NodeProcess {
    pub name: String,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl NodeProcess {
    pub fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim().to_string()
    }

    pub fn tell(&mut self, command: &str) -> String {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        self.line()
    }

    /// `refused_checkpoints` of its stats.
    pub fn refused(&mut self) -> u64 {
        let stats: serde_json::Value = serde_json::from_str(&self.tell("stats")).unwrap();
        stats["refused_checkpoints"].as_u64().unwrap()
    }

    /// A graceful stop: agents checkpointed, leases released.
    pub fn stop(mut self) {
        assert_eq!(
            self.tell("stop"),
            "stopped",
            "node `{}` did not stop",
            self.name
        );
        self.child.wait().unwrap();
    }

    /// `SIGKILL`: nothing is handed back.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cannot send SIG{signal} to node `{}`", self.name);
    }
}

pub fn node_main(name: String) {
    match std::env::var("NODE_AGENT").as_deref() {
        Ok("Desk") => serve::<Desk>(name),
        _ => serve::<Tally>(name),
    }
}

/// A node serving agents of type `S` until told `stop`.
fn serve<S: AgentSpec + Default>(name: String) {
    let var = |key: &str| std::env::var(key).unwrap_or_else(|_| panic!("`{key}` is not set"));
    runtime().block_on(async {
        let options = ClusterOptions::new()
            .node(name.clone())
            .prefix(format!("test.{}", var("NODE_STREAM").to_lowercase()))
            .stream(var("NODE_STREAM"))
            .shards(var("NODE_SHARDS").parse().unwrap())
            .lease_ttl(Duration::from_millis(LEASE_MS))
            .ack_wait(Duration::from_millis(ACK_WAIT_MS));
        let node = Cluster::<S>::connect_with(&var("NODE_NATS"), &var("NODE_POSTGRES"), options)
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

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Every agent's `state` field `field`, from its checkpoint.
pub async fn counts(store: &PostgresStore, field: &str) -> BTreeMap<String, u64> {
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

/// Waits (up to `limit`) until `done` holds, polling, and returns what it found; panics with
/// `what` otherwise.
pub async fn wait_until<T, F, Fut>(limit: Duration, what: &str, mut done: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        match done().await {
            Ok(found) => return found,
            Err(state) if started.elapsed() > limit => {
                panic!("{what} did not happen within {limit:?}: {state}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

pub fn give_up_after(started: Instant, limit: Duration, what: &str, state: &str) {
    assert!(
        started.elapsed() < limit,
        "{what} did not happen within {limit:?}: {state}"
    );
}

pub fn add() -> Signal {
    Signal::new("tally.add", json!({}))
}
