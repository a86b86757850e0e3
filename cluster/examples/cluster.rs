//! Two cluster nodes, and an agent moving between them.
//!
//! ```sh
//! cargo run -p agent-cluster --features nats --example cluster
//! ```
//!
//! Against your own servers, set `STRATAGEM_NATS_URL` (a `nats-server -js`) and
//! `STRATAGEM_POSTGRES_URL`; without them the example starts a throwaway `nats-server` and
//! PostgreSQL (Debian packages `nats-server` and `postgresql`) in temporary directories.
//!
//! Node `west` starts alone and serves `order-17`. Node `east` joins with the agent's shard
//! pinned to it: `west` checkpoints the agent and releases its lease, `east` thaws it from the
//! checkpoint, and the signals that follow count on from where `west` left off.

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use agent_cluster::{Cluster, ClusterOptions, Placement, shard_of};
use agent_runtime::Signal;
use serde_json::json;
use support::tally::Tally;

const AGENT: &str = "order-17";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Our own servers unless told where real ones are.
    let (mut _nats, mut _pg) = (None, None);
    let nats_url = match std::env::var("STRATAGEM_NATS_URL") {
        Ok(url) => url,
        Err(_) => _nats.insert(support::Nats::start()).url(),
    };
    let postgres_url = match std::env::var("STRATAGEM_POSTGRES_URL") {
        Ok(url) => url,
        Err(_) => _pg.insert(support::Postgres::start(false)).url(),
    };

    let options = ClusterOptions::new()
        .shards(8)
        .lease_ttl(Duration::from_secs(2))
        // `east` gets this agent's shard as soon as it is live.
        .placement(Placement::Explicit(BTreeMap::from([(
            shard_of(AGENT, 8),
            "east".to_string(),
        )])));

    let west =
        Cluster::<Tally>::connect_with(&nats_url, &postgres_url, options.clone().node("west"))
            .await?;
    for _ in 0..3 {
        west.send(AGENT, &Signal::new("tally.add", json!({})))
            .await?;
    }
    let count = wait_for(&west, 3).await;
    println!("`{AGENT}` runs on west: count {count}");

    let east =
        Cluster::<Tally>::connect_with(&nats_url, &postgres_url, options.node("east")).await?;
    // West hands the shard back on its next placement round; east thaws the agent.
    let count = wait_for(&east, 3).await;
    println!(
        "`{AGENT}` moved to east: count {count} (west runs it: {})",
        west.agent(AGENT).is_some()
    );
    for _ in 0..2 {
        east.send(AGENT, &Signal::new("tally.add", json!({})))
            .await?;
    }
    let count = wait_for(&east, 5).await;
    println!("`{AGENT}` on east after two more signals: count {count}");

    west.shutdown().await?;
    east.shutdown().await?;
    Ok(())
}

/// Waits until `node` runs the agent and it has counted `count`.
async fn wait_for(node: &Cluster<Tally>, count: u64) -> u64 {
    let started = std::time::Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "`{AGENT}` did not reach {count} on node `{}` within a minute",
            node.name()
        );
        if let Some(agent) = node.agent(AGENT)
            && let Ok(state) = agent.state().await
            && state.count >= count
        {
            return state.count;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
