//! The input journal in PostgreSQL, against a real server started by the test: an agent
//! journals through `PostgresStore`, its run replays offline from the rows, compaction keeps
//! what replay needs (a pending interrupt included), and under a lease only the current
//! holder can append or compact.

mod support;

use std::time::Duration;

use agent_cluster::{Lease, PostgresStore};
use agent_runtime::journal::{Journal, JournalOptions};
use agent_runtime::server::{AgentServer, Options};
use agent_runtime::store::{Store, StoreError};
use agent_runtime::{Agent, Signal};
use serde_json::json;
use support::Postgres;
use support::desk::{Decision, Desk};
use support::tally::Tally;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

const TTL: Duration = Duration::from_secs(30);

#[test]
fn postgres_journal() {
    let pg = Postgres::start(false);
    runtime().block_on(async {
        let store = PostgresStore::connect(&pg.url()).await.unwrap();
        journals_replays_and_compacts(&store).await;
        only_the_lease_holder_appends(&store).await;
        compaction_keeps_a_pending_interrupt(&store).await;
    });
}

/// Runs a `Tally` journaled to `journal`, sends it `adds` signals, and stops it (which writes
/// the last records).
async fn run(id: &str, journal: JournalOptions, adds: u64) {
    let options = Options::default().journal(journal);
    let server = AgentServer::start(Agent::new(Tally::default()).with_id(id), options)
        .await
        .unwrap();
    for _ in 0..adds {
        server
            .cast(Signal::new("tally.add", json!({})))
            .expect("the mailbox takes it");
    }
    server.snapshot().await.unwrap();
    server.stop().await;
}

async fn journals_replays_and_compacts(store: &PostgresStore) {
    let journal = JournalOptions::new(store.clone())
        .snapshot_every(10)
        .keep_snapshots(2);
    run("journaled", journal, 55).await;

    // Offline: only the rows, no server.
    let journal = Journal::load(store, "journaled").await.unwrap();
    let replayed = journal.replay::<Tally>().unwrap();
    assert_eq!(
        replayed.state().count,
        55,
        "every step replays, hash-checked"
    );
    // Compaction dropped the steps before the oldest of the two snapshots kept, and what is
    // left still replays to the same state (above) and reaches back to that snapshot.
    let steps: Vec<u64> = journal.steps().map(|s| s.seq).collect();
    let first = *steps.first().unwrap();
    assert!(
        first > 1 && steps.len() < 56,
        "older steps were compacted away: {steps:?}"
    );
    assert_eq!(
        journal.state_at::<Tally>(first).unwrap().state().count,
        first - 1
    );
    let end = store.journal_end("journaled").await.unwrap().unwrap();
    let rows = store.read_journal("journaled", 0).await.unwrap();
    assert_eq!(rows.last().map(|(at, _)| *at), Some(end));
    assert!(
        rows.windows(2).all(|w| w[0].0 < w[1].0),
        "in position order"
    );

    // A second run of the agent continues after the stored records.
    let journal = JournalOptions::new(store.clone()).snapshot_every(10);
    let server = AgentServer::start(
        replayed.with_id("journaled"),
        Options::default().journal(journal),
    )
    .await
    .unwrap();
    server.cast(Signal::new("tally.add", json!({}))).unwrap();
    server.snapshot().await.unwrap();
    server.stop().await;
    assert!(store.journal_end("journaled").await.unwrap().unwrap() > end);
    let again = Journal::load(store, "journaled").await.unwrap();
    assert_eq!(again.replay::<Tally>().unwrap().state().count, 56);
}

async fn only_the_lease_holder_appends(store: &PostgresStore) {
    let lease = store.claim("leased", "n1", TTL).await.unwrap().unwrap();
    let fenced = store.fenced(lease.clone(), Vec::new().into());
    run("leased", JournalOptions::new(fenced.clone()), 5).await;
    let journal = Journal::load(store, "leased").await.unwrap();
    assert_eq!(journal.replay::<Tally>().unwrap().state().count, 5);

    // Without the lease, the journal of a leased key is out of reach.
    let end = store.journal_end("leased").await.unwrap().unwrap();
    let record = vec![(end + 1, b"{}".to_vec())];
    let refused = store.append_journal("leased", &record).await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::Refused { reason, .. } if reason.contains("append_journal_fenced")),
        "{refused}"
    );
    assert!(matches!(
        store.compact_journal("leased", end).await,
        Err(StoreError::Refused { .. })
    ));
    // Another key through the fenced store: refused too.
    assert!(matches!(
        fenced.append_journal("other", &record).await,
        Err(StoreError::Refused { .. })
    ));

    // n2 takes the agent over: n1, fenced off, can no longer append or compact.
    store.release(&lease).await.unwrap();
    let taken: Lease = store.claim("leased", "n2", TTL).await.unwrap().unwrap();
    assert!(taken.token > lease.token);
    let stale = fenced.append_journal("leased", &record).await.unwrap_err();
    assert!(matches!(stale, StoreError::Refused { .. }), "{stale}");
    assert!(matches!(
        store.compact_journal_fenced(&lease, end).await,
        Err(StoreError::Refused { .. })
    ));
    assert_eq!(store.journal_end("leased").await.unwrap(), Some(end));
    store.append_journal_fenced(&taken, &record).await.unwrap();
    let rows = store.read_journal("leased", end + 1).await.unwrap();
    assert_eq!(rows, record);
    let before = store.read_journal("leased", 0).await.unwrap().len() as u64;
    let removed = store.compact_journal_fenced(&taken, end + 1).await.unwrap();
    assert_eq!(removed, before - 1);
    assert_eq!(store.read_journal("leased", 0).await.unwrap(), record);
}

/// An interrupt raised early stays answerable after the step that raised it was compacted
/// away: the snapshots kept carry it, so the replayed agent is parked on it and `resume` runs
/// the decision once.
async fn compaction_keeps_a_pending_interrupt(store: &PostgresStore) {
    let journal = JournalOptions::new(store.clone())
        .snapshot_every(10)
        .keep_snapshots(2);
    let options = Options::default().journal(journal);
    let desk = Agent::new(Desk::default()).with_id("desk-9");
    let server = AgentServer::start(desk, options.clone()).await.unwrap();
    let request = |item: u32| Signal::new("refund.request", json!({ "item": item }));
    server.call(request(1)).await.unwrap();
    let parked = server.interrupts().await.unwrap()[0].clone();
    // Many answered requests after it: the raising step falls out of the kept window.
    for item in 2..=40 {
        server.call(request(item)).await.unwrap();
        let latest = server
            .interrupts()
            .await
            .unwrap()
            .last()
            .unwrap()
            .id
            .clone();
        let decision = Decision {
            item,
            approve: true,
        };
        server.resume(&latest, decision).await.unwrap();
    }
    server.stop().await;

    let journal = Journal::load(store, "desk-9").await.unwrap();
    let first = journal.steps().next().unwrap().seq;
    assert!(first > 10, "the raising step was compacted away: {first}");
    let replayed = journal.replay::<Desk>().unwrap();
    let server = AgentServer::start(replayed, options).await.unwrap();
    assert_eq!(
        server.interrupts().await.unwrap(),
        std::slice::from_ref(&parked)
    );
    let decision = Decision {
        item: 1,
        approve: false,
    };
    server.resume(&parked.id, decision).await.unwrap();
    let state = server.state().await.unwrap();
    assert_eq!(state.decisions_run, 40);
    assert_eq!(state.decisions.last(), Some(&(1, false)));
    assert!(server.interrupts().await.unwrap().is_empty());
    server.stop().await;
    // And the journal, continued by that run, replays the answer.
    let journal = Journal::load(store, "desk-9").await.unwrap();
    assert_eq!(journal.replay::<Desk>().unwrap().state().decisions_run, 40);
}
