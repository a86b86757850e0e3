//! Cluster scenarios against a real `nats-server -js` and PostgreSQL started here, with node
//! processes that are killed (`SIGKILL`), paused (`SIGSTOP`) and restarted:
//!
//! (a) 3 nodes, 1,000 agents and 30,000 signals (the issue's full 100,000 with
//!     `STRATAGEM_CLUSTER_SIGNALS=100000`, about a minute on a quiet 2-core machine), one node
//!     killed and another restarted mid-run: every agent counts exactly what it was sent;
//! (b) a node paused while its lease expires cannot write when it resumes;
//! (c) a timer of an agent taken over fires once, on the new owner, and a cron job goes on
//!     firing there only, once per occurrence, while the paused old owner's firings are
//!     refused;
//! (d) PostgreSQL restarted mid-run: nothing lost, nothing counted twice;
//! (e) signals agents emit for agents on another node (and on their own) arrive, each once;
//! (f) an agent's input journal, in PostgreSQL, follows it from node to node and replays
//!     offline to its final state;
//! (g) an agent parked on an interrupt survives its node's `SIGKILL`: another node takes it
//!     over, and `resume` through the cluster (sent twice, as a retrying client would)
//!     completes it once, without running what came before the interrupt again.
//!
//! The binary runs without the test harness: re-executed with `STRATAGEM_TEST_NODE=<name>`, it
//! is a node process that serves `Tally` agents until told `stop` on stdin.

mod support;

use std::time::{Duration, Instant};

use agent_cluster::{Cluster, PostgresStore, shard_of};
use agent_runtime::Signal;
use agent_runtime::interrupt::PendingInterrupt;
use agent_runtime::journal::Journal;
use agent_runtime::server::{AgentServer, Options};
use agent_runtime::store::{MemoryStore, Store};
use futures::StreamExt;
use serde_json::json;
use support::cluster::{
    LEASE_MS, NodeProcess, Scenario, add, counts, give_up_after, node_main, runtime, wait_until,
};
use support::desk::{Decision, Desk};
use support::tally::Tally;
use support::{Nats, Postgres};

/// A scenario, run against the servers every scenario shares.
type Run = fn(&Nats, &Postgres);

fn main() {
    if let Ok(name) = std::env::var("STRATAGEM_TEST_NODE") {
        return node_main(name);
    }
    // Like libtest: `cargo test -p agent-cluster --features nats --test failover -- cron` runs
    // the scenarios whose name contains `cron`.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let scenarios: [(&str, Run); 8] = [
        ("(a) kill_and_restart", kill_and_restart),
        ("(b) paused_node_cannot_write", paused_node_cannot_write),
        (
            "(c) timer_fires_once_on_the_new_owner",
            timer_fires_once_on_the_new_owner,
        ),
        (
            "(c) cron_fires_on_the_new_owner_only",
            cron_fires_on_the_new_owner_only,
        ),
        ("(d) postgres_restart", postgres_restart),
        (
            "(e) emitted_signals_reach_other_nodes",
            emitted_signals_reach_other_nodes,
        ),
        (
            "(f) journal_follows_the_agent_across_nodes",
            journal_follows_the_agent_across_nodes,
        ),
        (
            "(g) parked_agent_survives_its_node",
            parked_agent_survives_its_node,
        ),
    ];
    let nats = Nats::start();
    let pg = Postgres::start(false);
    for (name, scenario) in scenarios {
        if filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())) {
            let started = Instant::now();
            scenario(&nats, &pg);
            eprintln!("{name}: ok ({:.1?})", started.elapsed());
        }
    }
}

fn kill_and_restart(nats: &Nats, pg: &Postgres) {
    let signals: u64 = std::env::var("STRATAGEM_CLUSTER_SIGNALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30_000);
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
    let mut nodes = scenario.nodes(&["b1", "b2"]);
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
    nodes.into_values().for_each(NodeProcess::stop);
}

fn timer_fires_once_on_the_new_owner(nats: &Nats, pg: &Postgres) {
    let scenario = Scenario::new(nats, pg, "timers", 4);
    let mut nodes = scenario.nodes(&["c1", "c2"]);
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
    nodes.into_values().for_each(NodeProcess::stop);
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

/// The agent's checkpointed state and its number of cron jobs.
async fn checkpointed(store: &PostgresStore, agent: &str) -> Option<(serde_json::Value, usize)> {
    use agent_runtime::store::Store;
    let bytes = store.load(agent).await.unwrap()?;
    let checkpoint: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let jobs = checkpoint["cron"].as_array().map_or(0, Vec::len);
    Some((checkpoint["agent"]["state"].clone(), jobs))
}

fn ticked_on(state: &serde_json::Value) -> Vec<String> {
    serde_json::from_value(state["ticked_on"].clone()).unwrap()
}

fn cron_fires_on_the_new_owner_only(nats: &Nats, pg: &Postgres) {
    let scenario = Scenario::new(nats, pg, "cron", 4);
    let mut nodes = scenario.nodes(&["c3", "c4"]);
    let rt = runtime();
    rt.block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        let every_second = json!({"expression": "* * * * * *"});
        client
            .send::<Tally>("c-cron", &Signal::new("tally.every", every_second))
            .await
            .unwrap();
        wait_until(Duration::from_secs(30), "two firings", || async {
            match checkpointed(&store, "c-cron").await {
                Some((state, 1)) if ticked_on(&state).len() >= 2 => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
        let (owner, _) = store.holder("c-cron").await.unwrap().unwrap();
        let paused = nodes.remove(&owner).unwrap();
        let (other, _) = nodes.iter().next().unwrap();
        let other = other.clone();
        // From here on, one job firing once a second fires at most once a second, wherever.
        let paused_at = Instant::now();
        let before = ticked_on(&checkpointed(&store, "c-cron").await.unwrap().0);
        paused.signal("STOP");
        let taken_over: Vec<String> = wait_until(
            Duration::from_secs(60),
            "firings on the new owner",
            || async {
                let state = checkpointed(&store, "c-cron").await.map(|(s, _)| s);
                let firings = state.as_ref().map(ticked_on).unwrap_or_default();
                let new = firings.iter().filter(|n| **n == other).count();
                if new >= 2 {
                    Ok(firings)
                } else {
                    Err(format!("{state:?}"))
                }
            },
        )
        .await;
        assert!(
            taken_over.starts_with(&before),
            "the new owner did not go on from the last checkpoint: {before:?}, then {taken_over:?}"
        );
        // Resumed, the old owner's copy may fire before it notices its leases are gone: none
        // of that reaches the checkpoint, whose firings only ever grow. (The node itself may
        // get the agent back afterwards, thawed from the checkpoint, if placement says so.)
        paused.signal("CONT");
        tokio::time::sleep(Duration::from_millis(2 * LEASE_MS)).await;
        let (state, jobs) = checkpointed(&store, "c-cron").await.unwrap();
        let elapsed = paused_at.elapsed().as_secs();
        assert_eq!(jobs, 1, "one cron job, restored once: {state}");
        let firings = ticked_on(&state);
        assert!(
            firings.starts_with(&taken_over),
            "a stale copy overwrote the new owner's firings: {taken_over:?}, then {firings:?}"
        );
        let since = (firings.len() - before.len()) as u64;
        assert!(
            since <= elapsed + 1,
            "{since} firings in {elapsed} s of a once-a-second job: {firings:?}"
        );
        paused.stop();
    });
    nodes.into_values().for_each(NodeProcess::stop);
}

fn emitted_signals_reach_other_nodes(nats: &Nats, pg: &Postgres) {
    let shards = 8;
    let scenario = Scenario::new(nats, pg, "route", shards);
    let nodes = scenario.nodes(&["e1", "e2"]);
    let rt = runtime();
    rt.block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        let shard_key =
            |agent: &str| format!("stratagem/shard/ROUTE_Tally/{}", shard_of(agent, shards));
        // Wait until placement has settled: each node holds shards.
        let mut holders = std::collections::BTreeMap::new();
        wait_until(Duration::from_secs(30), "both nodes holding shards", || {
            let store = &store;
            async move {
                let mut by_node = std::collections::BTreeSet::new();
                for shard in 0..shards {
                    let key = format!("stratagem/shard/ROUTE_Tally/{shard}");
                    match store.holder(&key).await.unwrap() {
                        Some((node, _)) => by_node.insert(node),
                        None => return Err(format!("shard {shard} unheld")),
                    };
                }
                if by_node.len() == 2 {
                    Ok(())
                } else {
                    Err(format!("{by_node:?}"))
                }
            }
        })
        .await;
        tokio::time::sleep(Duration::from_millis(LEASE_MS)).await;
        for i in 0..64 {
            let id = format!("e-{i}");
            let (node, _) = store.holder(&shard_key(&id)).await.unwrap().unwrap();
            holders.entry(node).or_insert_with(Vec::new).push(id);
        }
        let on_e1 = holders["e1"].clone();
        let on_e2 = holders["e2"].clone();
        // Senders on e1; one receiver on e2, one on e1 itself.
        let (senders, remote, local) = (&on_e1[..4], &on_e2[0], &on_e1[4]);
        let per_sender = 25;
        for round in 0..per_sender {
            for sender in senders {
                let to = if round % 2 == 0 { remote } else { local };
                client
                    .send::<Tally>(sender, &Signal::new("tally.forward", json!({"to": to})))
                    .await
                    .unwrap();
            }
        }
        let sent = (senders.len() * per_sender) as u64;
        let remote_expected = senders.len() as u64 * per_sender.div_ceil(2) as u64;
        wait_until(
            Duration::from_secs(60),
            "every forwarded signal counted",
            || async {
                let count = |agent: &str| {
                    let store = &store;
                    let agent = agent.to_string();
                    async move {
                        checkpointed(store, &agent)
                            .await
                            .map_or(0, |(s, _)| s["count"].as_u64().unwrap_or(0))
                    }
                };
                let (r, l) = (count(remote).await, count(local).await);
                if r == remote_expected && l == sent - remote_expected {
                    Ok(())
                } else {
                    Err(format!("remote {r}, local {l}"))
                }
            },
        )
        .await;
        let forwarded = counts(&store, "forwarded").await;
        let total: u64 = senders.iter().map(|s| forwarded[s]).sum();
        assert_eq!(total, sent);
        let holder = |agent: &str| {
            let store = &store;
            let agent = agent.to_string();
            async move { store.holder(&agent).await.unwrap().map(|(h, _)| h) }
        };
        assert_eq!(holder(remote).await.as_deref(), Some("e2"));
        assert_eq!(holder(&senders[0]).await.as_deref(), Some("e1"));
        // Nothing left unacknowledged, nothing counted twice after a while.
        tokio::time::sleep(Duration::from_millis(LEASE_MS)).await;
        let counts = counts(&store, "count").await;
        assert_eq!(counts[remote.as_str()], remote_expected);
        assert_eq!(counts[local.as_str()], sent - remote_expected);
        let mut stream = client.ensure_stream("Tally").await.unwrap();
        assert_eq!(stream.info().await.unwrap().state.messages, 0);
    });
    nodes.into_values().for_each(NodeProcess::stop);
}

fn journal_follows_the_agent_across_nodes(nats: &Nats, pg: &Postgres) {
    let scenario = Scenario::new(nats, pg, "journal", 4);
    runtime().block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        let node = |name: &str| {
            // No compaction here (the store test covers it): both runs stay in the journal.
            let options = scenario.options().node(name).journal(100, 4);
            Cluster::<Tally>::connect_with(&scenario.nats, &scenario.postgres, options)
        };
        let counted = |n: u64| {
            let store = &store;
            move || async move {
                let found = counts(store, "count").await.get("j-1").copied();
                if found == Some(n) {
                    Ok(())
                } else {
                    Err(format!("count {found:?}"))
                }
            }
        };
        // j1 runs the agent, then hands it back on shutdown; j2 takes it over.
        let first = node("j1").await.unwrap();
        for _ in 0..12 {
            client.send::<Tally>("j-1", &add()).await.unwrap();
        }
        wait_until(Duration::from_secs(60), "12 signals counted", counted(12)).await;
        first.shutdown().await.unwrap();
        let second = node("j2").await.unwrap();
        for _ in 0..8 {
            client.send::<Tally>("j-1", &add()).await.unwrap();
        }
        wait_until(Duration::from_secs(60), "20 signals counted", counted(20)).await;
        second.shutdown().await.unwrap();

        // Offline, from PostgreSQL alone: every step replays with its hash checked.
        let journal = Journal::load(&store, "j-1").await.unwrap();
        assert_eq!(journal.replay::<Tally>().unwrap().state().count, 20);
        // Written under both nodes' leases (each append fenced by the writer's token).
        let (raw, connection) = tokio_postgres::connect(&scenario.postgres, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let row = raw
            .query_one(
                "SELECT count(DISTINCT fencing_token) FROM stratagem_journal WHERE key = 'j-1'",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(row.get::<_, i64>(0), 2, "records of both owners' runs");
    });
}

/// The desk `desk-1` as its last checkpoint has it (thawed offline, in memory): its state and
/// its pending interrupts.
async fn desk(store: &PostgresStore) -> Option<(Desk, Vec<PendingInterrupt>)> {
    let bytes = store.load("desk-1").await.unwrap()?;
    let copy = MemoryStore::new();
    copy.save("desk-1", &bytes).await.unwrap();
    let server = AgentServer::<Desk>::thaw(&copy, "desk-1", Options::default())
        .await
        .unwrap();
    let found = (
        server.state().await.unwrap(),
        server.interrupts().await.unwrap(),
    );
    server.stop().await;
    Some(found)
}

fn parked_agent_survives_its_node(nats: &Nats, pg: &Postgres) {
    let scenario = Scenario::new(nats, pg, "parked", 4);
    let mut nodes = vec![
        scenario.node_serving("q1", "Desk"),
        scenario.node_serving("q2", "Desk"),
    ];
    runtime().block_on(async {
        let client = scenario.client().await;
        let store = scenario.store().await;
        let request = |item: u32| Signal::new("refund.request", json!({ "item": item }));
        client.send::<Desk>("desk-1", &request(7)).await.unwrap();
        let (_, pending) = wait_until(Duration::from_secs(60), "the desk parked", || async {
            match desk(&store).await {
                Some((state, pending)) if !pending.is_empty() => Ok((state, pending)),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
        assert_eq!(pending.len(), 1);
        let parked = pending[0].id.clone();

        // Its node dies while it waits; the other takes it over once the leases expire.
        let (owner, _) = store.holder("desk-1").await.unwrap().unwrap();
        let at = nodes.iter().position(|n| n.name == owner).unwrap();
        nodes.remove(at).kill();

        // The answer, through the cluster, twice (a client retrying), then a new request.
        let decision = Decision {
            item: 7,
            approve: true,
        };
        client
            .resume::<Desk>("desk-1", &parked, &decision)
            .await
            .unwrap();
        client
            .resume::<Desk>("desk-1", &parked, &decision)
            .await
            .unwrap();
        client.send::<Desk>("desk-1", &request(8)).await.unwrap();
        let (state, pending) = wait_until(
            Duration::from_secs(60),
            "the answer and the next request taken by the new owner",
            || async {
                match desk(&store).await {
                    Some((state, pending))
                        if state.decisions_run > 0 && state.requested.contains(&8) =>
                    {
                        Ok((state, pending))
                    }
                    other => Err(format!("{other:?}")),
                }
            },
        )
        .await;
        assert_eq!(state.decisions, [(7, true)], "answered once, as sent");
        assert_eq!(state.decisions_run, 1);
        assert_eq!(state.requested, [7, 8]);
        assert_eq!(
            state.requests_run, 2,
            "nothing before the interrupt ran again"
        );
        assert_eq!(pending.len(), 1, "item 8's interrupt waits: {pending:?}");
        assert_ne!(pending[0].id, parked);
        let (now, _) = store.holder("desk-1").await.unwrap().unwrap();
        assert_ne!(now, owner, "the surviving node runs it");
    });
    for node in nodes {
        node.stop();
    }
}
