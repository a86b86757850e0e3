//! `PostgresStore` against a real PostgreSQL started by the test: the `Store` contract,
//! checksums, leases with fencing tokens, and reconnection after a restart.

mod support;

use std::sync::Arc;
use std::time::Duration;

use agent_cluster::{PostgresStore, Reconnect};
use agent_runtime::store::{Store, StoreError};
use support::Postgres;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

const TTL: Duration = Duration::from_secs(30);

#[test]
fn postgres_store() {
    let pg = Postgres::start(false);
    let rt = runtime();
    rt.block_on(async {
        let store = PostgresStore::connect(&pg.url()).await.unwrap();
        store_contract(&store).await;
        checksum_guards_the_bytes(&store, &pg).await;
        fencing(&store).await;
        fenced_writes_in_one_statement(&store).await;
        claims_and_loads_in_one_statement(&store).await;
        plain_save_cannot_touch_a_leased_key(&store).await;
    });
    // A second connect finds the tables (the migration is idempotent).
    rt.block_on(async {
        let again = PostgresStore::connect(&pg.url()).await.unwrap();
        assert!(
            again
                .keys()
                .await
                .unwrap()
                .contains(&"order-17".to_string())
        );
    });
    rt.block_on(reconnects_after_a_restart(&pg));
}

async fn store_contract(store: &PostgresStore) {
    assert_eq!(store.load("order-17").await.unwrap(), None);
    store.save("order-17", b"{\"a\":1}").await.unwrap();
    store.save("order-17", b"{\"a\":2}").await.unwrap();
    store.save("order-03", b"{}").await.unwrap();
    assert_eq!(
        store.load("order-17").await.unwrap().as_deref(),
        Some(&b"{\"a\":2}"[..])
    );
    assert_eq!(store.keys().await.unwrap(), ["order-03", "order-17"]);
    assert!(store.delete("order-03").await.unwrap());
    assert!(!store.delete("order-03").await.unwrap());
    // Arbitrary bytes round-trip.
    let bytes: Vec<u8> = (0..=255).collect();
    store.save("bytes", &bytes).await.unwrap();
    assert_eq!(store.load("bytes").await.unwrap(), Some(bytes));
}

async fn raw_client(pg: &Postgres) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&pg.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

async fn checksum_guards_the_bytes(store: &PostgresStore, pg: &Postgres) {
    store.save("tampered", b"{\"paid\":false}").await.unwrap();
    let raw = raw_client(pg).await;
    raw.execute(
        "UPDATE stratagem_checkpoints SET checkpoint = '{\"paid\":true}'::bytea WHERE key = 'tampered'",
        &[],
    )
    .await
    .unwrap();
    let err = store.load("tampered").await.unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
}

async fn fencing(store: &PostgresStore) {
    let a = store
        .claim("agent-1", "node-a", TTL)
        .await
        .unwrap()
        .unwrap();
    // Held by a: b cannot claim it.
    assert_eq!(store.claim("agent-1", "node-b", TTL).await.unwrap(), None);
    assert_eq!(
        store.holder("agent-1").await.unwrap(),
        Some(("node-a".to_string(), a.token))
    );
    store.save_fenced(&a, b"v1", &["s1".into()]).await.unwrap();
    let (bytes, seen) = store.load_with_seen("agent-1").await.unwrap().unwrap();
    assert_eq!(
        (bytes.as_slice(), seen.as_slice()),
        (&b"v1"[..], &["s1".to_string()][..])
    );
    // The renewal lists what a holds.
    assert!(
        store
            .renew("node-a", &["agent-1".to_string()], TTL)
            .await
            .unwrap()
            .contains(&a)
    );

    // a's lease expires (a short claim, then time passes); b takes over with a higher token.
    let a = store
        .claim("agent-1", "node-a", Duration::from_millis(200))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        !store
            .renew("node-a", &["agent-1".to_string()], TTL)
            .await
            .unwrap()
            .contains(&a),
        "an expired lease is not revived"
    );
    let b = store
        .claim("agent-1", "node-b", TTL)
        .await
        .unwrap()
        .unwrap();
    assert!(b.token > a.token);
    store.save_fenced(&b, b"v2", &[]).await.unwrap();
    // The stale holder is refused and the newer checkpoint stays.
    let err = store.save_fenced(&a, b"stale", &[]).await.unwrap_err();
    assert!(matches!(err, StoreError::Refused { .. }), "{err}");
    assert!(err.to_string().contains("node-a"), "{err}");
    assert_eq!(
        store.load("agent-1").await.unwrap().as_deref(),
        Some(&b"v2"[..])
    );
    // Through the `Store` trait, as an agent's `checkpoint` would write.
    let stale = store.fenced(a.clone(), Arc::from(Vec::new()));
    assert!(matches!(
        stale.save("agent-1", b"stale").await,
        Err(StoreError::Refused { .. })
    ));
    let fresh = store.fenced(b.clone(), Arc::from(vec!["s9".to_string()]));
    fresh.save("agent-1", b"v3").await.unwrap();
    assert_eq!(
        store.load_with_seen("agent-1").await.unwrap().unwrap().1,
        ["s9"]
    );
    // A released lease is free at once, and its next token is higher still.
    store.release(&b).await.unwrap();
    assert_eq!(store.holder("agent-1").await.unwrap(), None);
    let c = store
        .claim("agent-1", "node-c", TTL)
        .await
        .unwrap()
        .unwrap();
    assert!(c.token > b.token);
    assert!(matches!(
        store.save_fenced(&b, b"late", &[]).await,
        Err(StoreError::Refused { .. })
    ));
}

/// `save_fenced_many` applies each row's fencing on its own: live leases are written (with
/// their ids), a stale or foreign lease is refused, and nothing newer is overwritten.
async fn fenced_writes_in_one_statement(store: &PostgresStore) {
    let live = store.claim("many-1", "node-a", TTL).await.unwrap().unwrap();
    let other = store.claim("many-2", "node-a", TTL).await.unwrap().unwrap();
    let old = store
        .claim("many-3", "node-a", Duration::from_millis(100))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let newer = store.claim("many-3", "node-b", TTL).await.unwrap().unwrap();
    store.save_fenced(&newer, b"b's", &[]).await.unwrap();
    let forged = agent_cluster::Lease {
        owner: "node-z".to_string(),
        ..other.clone()
    };
    let ids = ["s1".to_string(), "s\"2,".to_string()];
    let written = store
        .save_fenced_many(&[
            (&live, b"one", &ids),
            (&old, b"stale", &[]),
            (&forged, b"forged", &[]),
        ])
        .await
        .unwrap();
    assert_eq!(written, [true, false, false]);
    let (bytes, seen) = store.load_with_seen("many-1").await.unwrap().unwrap();
    assert_eq!((bytes.as_slice(), seen.as_slice()), (&b"one"[..], &ids[..]));
    assert_eq!(store.load("many-2").await.unwrap(), None);
    assert_eq!(
        store.load("many-3").await.unwrap().as_deref(),
        Some(&b"b's"[..])
    );
    assert_eq!(
        store.save_fenced_many(&[]).await.unwrap(),
        Vec::<bool>::new()
    );
    for lease in [&live, &other, &newer] {
        store.release(lease).await.unwrap();
    }
}

/// `claim_many` claims what is free (or its own) and leaves what another node holds;
/// `load_many_with_seen` finds what exists.
async fn claims_and_loads_in_one_statement(store: &PostgresStore) {
    let held = store
        .claim("batch-2", "node-b", TTL)
        .await
        .unwrap()
        .unwrap();
    let mine = store
        .claim("batch-3", "node-a", TTL)
        .await
        .unwrap()
        .unwrap();
    let keys = ["batch-1", "batch-2", "batch-3"].map(String::from);
    let leases = store.claim_many(&keys, "node-a", TTL).await.unwrap();
    assert_eq!(leases.len(), 3);
    assert_eq!(leases[0].as_ref().map(|l| l.key.as_str()), Some("batch-1"));
    assert_eq!(leases[1], None, "held by node-b");
    let again = leases[2].as_ref().unwrap();
    assert!(again.token > mine.token, "a re-claim is a new lease");
    let one = leases[0].as_ref().unwrap();
    store
        .save_fenced(one, b"first", &["s1".into()])
        .await
        .unwrap();
    store.save_fenced(&held, b"second", &[]).await.unwrap();
    let found = store.load_many_with_seen(&keys).await.unwrap();
    assert_eq!(found.len(), 2, "batch-3 has no checkpoint");
    assert_eq!(
        found["batch-1"].as_ref().unwrap(),
        &(b"first".to_vec(), vec!["s1".to_string()])
    );
    assert_eq!(found["batch-2"].as_ref().unwrap().0, b"second");
    assert!(
        store
            .claim_many(&[], "node-a", TTL)
            .await
            .unwrap()
            .is_empty()
    );
    for lease in [one, again, &held] {
        store.release(lease).await.unwrap();
    }
}

async fn plain_save_cannot_touch_a_leased_key(store: &PostgresStore) {
    let err = store.save("agent-1", b"unfenced").await.unwrap_err();
    assert!(matches!(err, StoreError::Refused { .. }), "{err}");
    assert_eq!(
        store.load("agent-1").await.unwrap().as_deref(),
        Some(&b"v3"[..])
    );
}

async fn reconnects_after_a_restart(pg: &Postgres) {
    let store = PostgresStore::connect_with(
        &pg.url(),
        Reconnect {
            first: Duration::from_millis(50),
            max: Duration::from_millis(500),
            budget: Duration::from_secs(60),
        },
    )
    .await
    .unwrap();
    store.save("before", b"1").await.unwrap();
    pg.stop();
    // An operation issued while the server is down waits for it and then succeeds.
    let pending = tokio::spawn({
        let store = store.clone();
        async move { store.save("during", b"2").await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    pg.start_again();
    pending.await.unwrap().unwrap();
    assert_eq!(
        store.load("before").await.unwrap().as_deref(),
        Some(&b"1"[..])
    );
    assert_eq!(
        store.load("during").await.unwrap().as_deref(),
        Some(&b"2"[..])
    );

    // With the server gone for longer than the budget, the error says it is unreachable.
    let impatient = PostgresStore::connect_with(
        &pg.url(),
        Reconnect {
            first: Duration::from_millis(20),
            max: Duration::from_millis(50),
            budget: Duration::from_millis(300),
        },
    )
    .await
    .unwrap();
    pg.stop();
    let err = impatient.load("before").await.unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err}");
    assert!(err.to_string().contains("unreachable"), "{err}");
    pg.start_again();
}
