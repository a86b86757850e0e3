//! Checkpoints across builds: each checkpoint records the fingerprint of the definition it was
//! taken from. Three builds of one `Refund` agent live side by side here (modules `v1`, `v2`,
//! `v3`): 1,000 checkpoints of build 1 all thaw in build 2, which renamed a state and declares
//! the migration, and are refused by build 3, which renamed it without one, with an error
//! naming both fingerprints, through the agent server and the default redb store. Build 4
//! only added a state and is checked against `tests/definition_migration.lock`: the lock
//! accepts build 1's checkpoints unchanged. Statechart configurations (parallel regions,
//! history, timers of a region's state) and agents parked on an interrupt migrate too. (The
//! build-time half, E0113 from the lock file, is in `dsl/tests/builder.rs` and
//! `tests/ui/migrate/`.)

use std::sync::Arc;

use serde_json::json;
use stratagem::AgentSpec;
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::{Checkpoint, CheckpointError, RedbStore, Store};

/// The fingerprint of build 1's definition: `agent Refund`, `strategy Fsm 1`, `field amount:
/// u64`, its three states.
const V1: &str = "6b05ce76790b1b4e";

mod v1 {
    use stratagem::prelude::*;

    #[agent(strategy = Fsm, transitions {
        initial Requested
        terminal Refunded
        Requested -> AwaitingApproval on request
        AwaitingApproval -> Refunded on approve
        AwaitingApproval -> Requested after 30m
    }, routes { "refund.request" => request })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Refund {
        pub amount: u64,
    }
}

mod v2 {
    use stratagem::prelude::*;

    #[agent(strategy = Fsm, transitions {
        initial Requested
        terminal Refunded
        Requested -> PendingApproval on request
        PendingApproval -> Refunded on approve
        PendingApproval -> Requested after 30m
    }, routes { "refund.approve" => approve },
    migrate "6b05ce76790b1b4e" { state PendingApproval was AwaitingApproval })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Refund {
        pub amount: u64,
    }
}

mod v3 {
    use stratagem::prelude::*;

    #[agent(strategy = Fsm, transitions {
        initial Requested
        terminal Refunded
        Requested -> PendingApproval on request
        PendingApproval -> Refunded on approve
    })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Refund {
        pub amount: u64,
    }
}

mod v4 {
    use stratagem::prelude::*;

    // A new state strands nothing: the lock file accepts build 1's fingerprint unchanged.
    #[agent(strategy = Fsm, transitions {
        initial Requested
        terminal Refunded
        Requested -> AwaitingApproval on request
        AwaitingApproval -> Refunded on approve
        AwaitingApproval -> Review on escalate
        Review -> Refunded on approve
    }, routes { "refund.approve" => approve }, lock = "definition_migration.lock")]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Refund {
        pub amount: u64,
    }
}

const AGENTS: u32 = 1_000;

#[tokio::test]
async fn checkpoints_of_an_older_build_thaw_through_its_migration_and_only_through_one() {
    let v1_definition = v1::Refund::DEFINITION.expect("generated agents have a definition");
    assert_eq!(v1_definition.fingerprint, V1);
    let v2_fingerprint = v2::Refund::DEFINITION.unwrap().fingerprint;
    let v3_fingerprint = v3::Refund::DEFINITION.unwrap().fingerprint;
    assert_ne!(v2_fingerprint, V1);
    assert_eq!(
        v2_fingerprint, v3_fingerprint,
        "routes, rows and timers do not change a fingerprint"
    );

    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(RedbStore::open(dir.path().join("agents.redb")).unwrap());
    for i in 0..AGENTS {
        let agent = v1::Refund::new().with_id(format!("refund-{i}"));
        let server = AgentServer::start(agent, Options::default()).await.unwrap();
        if i.is_multiple_of(2) {
            server
                .call(Signal::new("refund.request", json!({})))
                .await
                .unwrap();
        }
        server.hibernate(&*store).await.unwrap();
    }
    let sample = Checkpoint::decode(&store.load("refund-0").await.unwrap().unwrap()).unwrap();
    assert_eq!(
        sample.agent["definition"], V1,
        "the checkpoint names its definition"
    );

    let mut waiting = 0;
    for i in 0..AGENTS {
        let key = format!("refund-{i}");
        let server = AgentServer::<v2::Refund>::thaw(&*store, &key, Options::default())
            .await
            .unwrap_or_else(|e| panic!("`{key}` thaws in build 2: {e}"));
        let agent = server.agent().await.unwrap();
        if i.is_multiple_of(2) {
            assert_eq!(agent.fsm_state(), v2::RefundState::PendingApproval);
            waiting += 1;
        } else {
            assert_eq!(agent.fsm_state(), v2::RefundState::Requested);
        }
        if i == 0 {
            // Its pending timer was migrated too, and the agent goes on in build 2.
            server.checkpoint(&*store).await.unwrap();
            let again = Checkpoint::decode(&store.load(&key).await.unwrap().unwrap()).unwrap();
            assert_eq!(again.agent["definition"], v2_fingerprint);
            assert_eq!(again.timers.len(), 1);
            assert_eq!(again.timers[0].signal.data["state"], "PendingApproval");
            let outcome = server
                .call(Signal::new("refund.approve", json!({})))
                .await
                .unwrap();
            assert_eq!(outcome.errors().count(), 0, "{:?}", outcome.directives);
            assert_eq!(outcome.snapshot.status, Status::Success);
        }
        server.stop().await;
    }
    assert_eq!(waiting, AGENTS / 2, "every checkpoint thawed");

    let error = AgentServer::<v3::Refund>::thaw(&*store, "refund-2", Options::default())
        .await
        .unwrap_err();
    let ServerError::Checkpoint {
        error: CheckpointError::UnknownDefinition {
            found, expected, ..
        },
        ..
    } = &error
    else {
        panic!("expected an unknown definition, got {error:?}");
    };
    assert_eq!((found.as_str(), expected.as_str()), (V1, v3_fingerprint));
    let message = error.to_string();
    assert!(
        message.contains(V1) && message.contains(v3_fingerprint),
        "{message}"
    );
    // Refused, not loaded: the checkpoint is still build 1's.
    let kept = Checkpoint::decode(&store.load("refund-2").await.unwrap().unwrap()).unwrap();
    assert_eq!(kept.agent["definition"], V1);
    assert_eq!(kept.agent["strategy"]["state"], "AwaitingApproval");

    // Build 4 added a state; its lock file says build 1's checkpoints still fit.
    let v4_definition = v4::Refund::DEFINITION.unwrap();
    assert_ne!(v4_definition.fingerprint, V1);
    assert!(
        v4_definition.migration(V1).is_some(),
        "the lock accepts {V1}"
    );
    let server = AgentServer::<v4::Refund>::thaw(&*store, "refund-4", Options::default())
        .await
        .unwrap();
    assert_eq!(
        server.agent().await.unwrap().fsm_state(),
        v4::RefundState::AwaitingApproval
    );
    server.stop().await;
}

/// A statechart's checkpoint holds its whole configuration: the active leaf of each parallel
/// region, the leaves a history remembers, and the timers of active states.
mod chart_v1 {
    use stratagem::prelude::*;

    #[agent(strategy = Fsm, transitions {
        initial Idle
        Idle -> Resume on start
        state Job {
            initial Both
            history deep Resume
            Job -> Idle on pause
            parallel Both {
                state Left {
                    initial Drafting
                    Drafting -> Reviewing on draft
                    Reviewing -> Drafting after 10m
                }
                state Right {
                    initial Waiting
                    Waiting -> Ready on ready
                }
            }
        }
    }, routes { "doc.start" => start  "doc.draft" => draft  "doc.ready" => ready  "doc.pause" => pause })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Doc {
        pub pages: u32,
    }
}

mod chart_v2 {
    use stratagem::prelude::*;

    // `Reviewing` became `InReview`, and `Right` became `Approvals`.
    #[agent(strategy = Fsm, transitions {
        initial Idle
        Idle -> Resume on start
        state Job {
            initial Both
            history deep Resume
            Job -> Idle on pause
            parallel Both {
                state Left {
                    initial Drafting
                    Drafting -> InReview on draft
                    InReview -> Drafting after 10m
                }
                state Approvals {
                    initial Waiting
                    Waiting -> Ready on ready
                }
            }
        }
    }, routes { "doc.start" => start  "doc.draft" => draft  "doc.ready" => ready  "doc.pause" => pause },
    migrate "5515c4ed96206faf" { state InReview was Reviewing  state Approvals was Right })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Doc {
        pub pages: u32,
    }
}

/// The same machine with `Ready` moved out of the `Right` region: the configurations
/// checkpoints hold are not valid in it, so its fingerprint differs.
mod chart_moved {
    use stratagem::prelude::*;

    #[agent(strategy = Fsm, transitions {
        initial Idle
        Idle -> Resume on start
        Ready -> Idle on pause
        state Job {
            initial Both
            history deep Resume
            Job -> Idle on pause
            parallel Both {
                state Left {
                    initial Drafting
                    Drafting -> Reviewing on draft
                    Reviewing -> Drafting after 10m
                }
                state Right {
                    initial Waiting
                    Waiting -> Ready on ready
                }
            }
        }
    })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Doc {
        pub pages: u32,
    }
}

#[tokio::test]
async fn statechart_configurations_history_and_region_timers_migrate() {
    use chart_v2::DocState as S2;
    let v1 = chart_v1::Doc::DEFINITION.unwrap().fingerprint;
    assert_ne!(
        v1,
        chart_moved::Doc::DEFINITION.unwrap().fingerprint,
        "where a state is declared is part of the fingerprint"
    );
    assert_eq!(chart_v2::Doc::DEFINITION.unwrap().migrations[0].from, v1);

    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path().join("agents.redb")).unwrap();
    // `busy` is parked in two regions with a region timer armed; `paused` left `Job` and
    // its history remembers both regions' leaves.
    for (key, signals) in [
        ("busy", &["doc.start", "doc.draft"][..]),
        (
            "paused",
            &["doc.start", "doc.draft", "doc.ready", "doc.pause"][..],
        ),
    ] {
        let server = AgentServer::start(chart_v1::Doc::new().with_id(key), Options::default())
            .await
            .unwrap();
        for signal in signals {
            let outcome = server.call(Signal::new(*signal, json!({}))).await.unwrap();
            assert_eq!(
                outcome.errors().count(),
                0,
                "{signal}: {:?}",
                outcome.directives
            );
        }
        server.hibernate(&store).await.unwrap();
    }
    let busy = Checkpoint::decode(&store.load("busy").await.unwrap().unwrap()).unwrap();
    assert_eq!(
        busy.agent["strategy"]["chart"]["leaves"],
        json!(["Reviewing", "Waiting"])
    );

    let server = AgentServer::<chart_v2::Doc>::thaw(&store, "busy", Options::default())
        .await
        .unwrap();
    let agent = server.agent().await.unwrap();
    assert_eq!(agent.fsm_leaves(), [S2::InReview, S2::Waiting]);
    assert!(agent.in_state(S2::Approvals));
    server.checkpoint(&store).await.unwrap();
    let again = Checkpoint::decode(&store.load("busy").await.unwrap().unwrap()).unwrap();
    assert_eq!(again.agent["strategy"]["chart"]["timers"][0][0], "InReview");
    assert_eq!(
        again.timers.len(),
        1,
        "the region's `after` timer is still pending"
    );
    assert_eq!(again.timers[0].signal.data["state"], "InReview");
    server
        .call(Signal::new("doc.ready", json!({})))
        .await
        .unwrap();
    assert_eq!(
        server.agent().await.unwrap().fsm_leaves(),
        [S2::InReview, S2::Ready]
    );
    server.stop().await;

    // The history migrated with the states it remembers: re-entering restores both regions.
    let server = AgentServer::<chart_v2::Doc>::thaw(&store, "paused", Options::default())
        .await
        .unwrap();
    assert_eq!(server.agent().await.unwrap().fsm_leaves(), [S2::Idle]);
    server
        .call(Signal::new("doc.start", json!({})))
        .await
        .unwrap();
    assert_eq!(
        server.agent().await.unwrap().fsm_leaves(),
        [S2::InReview, S2::Ready]
    );
    server.stop().await;

    // The build that moved a state declares no migration: refused, not loaded.
    let error = AgentServer::<chart_moved::Doc>::thaw(&store, "paused", Options::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            ServerError::Checkpoint {
                error: CheckpointError::UnknownDefinition { .. },
                ..
            }
        ),
        "{error:?}"
    );
}

/// Interrupts: a checkpoint parked on one names the interrupt and the state it waits in.
mod ask_v1 {
    use stratagem::prelude::*;

    #[agent(strategy = Fsm, transitions {
        initial Open
        terminal Done
        interrupt approval(Request) -> Decision
        Open -> Waiting on request ask approval
        Waiting -> Done on approval do decide
    }, routes { "refund.request" => request })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Desk {
        pub approved: Option<bool>,
    }

    #[derive(Debug, Serialize)]
    pub struct Request {}

    impl From<&Desk> for Request {
        fn from(_: &Desk) -> Self {
            Request {}
        }
    }

    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    pub struct Decision {
        pub approve: bool,
    }

    #[action]
    pub fn decide(desk: &mut Desk, decision: Decision) {
        desk.approved = Some(decision.approve);
    }
}

mod ask_v2 {
    use stratagem::prelude::*;

    pub use super::ask_v1::{Decision, Request};

    #[agent(strategy = Fsm, transitions {
        initial Open
        terminal Done
        interrupt approval(Request) -> Decision
        Open -> Parked on request ask approval
        Parked -> Done on approval do decide
    }, migrate "5a1a90c20a56d78b" { state Parked was Waiting })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Desk {
        pub approved: Option<bool>,
    }

    #[action]
    pub fn decide(desk: &mut Desk, decision: Decision) {
        desk.approved = Some(decision.approve);
    }

    impl From<&Desk> for Request {
        fn from(_: &Desk) -> Self {
            Request {}
        }
    }
}

/// The same desk answered with another type: parked agents wait for the old answer.
mod ask_retyped {
    use stratagem::prelude::*;

    pub use super::ask_v1::Request;

    #[agent(strategy = Fsm, transitions {
        initial Open
        terminal Done
        interrupt approval(Request) -> bool
        Open -> Waiting on request ask approval
        Waiting -> Done on approval
    })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Desk {
        pub approved: Option<bool>,
    }

    impl From<&Desk> for Request {
        fn from(_: &Desk) -> Self {
            Request {}
        }
    }
}

#[tokio::test]
async fn an_agent_parked_on_an_interrupt_migrates_and_is_answered_once() {
    let v1 = ask_v1::Desk::DEFINITION.unwrap().fingerprint;
    assert_ne!(
        v1,
        ask_retyped::Desk::DEFINITION.unwrap().fingerprint,
        "an interrupt's resume type is part of the fingerprint"
    );
    assert_eq!(ask_v2::Desk::DEFINITION.unwrap().migrations[0].from, v1);

    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path().join("agents.redb")).unwrap();
    let server = AgentServer::start(ask_v1::Desk::new().with_id("desk"), Options::default())
        .await
        .unwrap();
    server
        .call(Signal::new("refund.request", json!({})))
        .await
        .unwrap();
    let parked = server.interrupts().await.unwrap();
    assert_eq!(parked.len(), 1);
    server.hibernate(&store).await.unwrap();

    let server = AgentServer::<ask_v2::Desk>::thaw(&store, "desk", Options::default())
        .await
        .unwrap();
    assert_eq!(
        server.agent().await.unwrap().fsm_state(),
        ask_v2::DeskState::Parked
    );
    assert_eq!(server.interrupts().await.unwrap(), parked, "still pending");
    let outcome = server
        .resume(&parked[0].id, ask_v1::Decision { approve: true })
        .await
        .unwrap();
    assert_eq!(outcome.snapshot.status, Status::Success);
    assert_eq!(server.agent().await.unwrap().state().approved, Some(true));
    assert!(
        server
            .resume(&parked[0].id, ask_v1::Decision { approve: false })
            .await
            .is_err(),
        "answered once"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_journal_of_another_definition_is_refused_by_replay() {
    use stratagem::journal::{Journal, JournalOptions, ReplayError};
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path().join("agents.redb")).unwrap();
    let options = Options::default().journal(JournalOptions::new(store.clone()));
    let server = AgentServer::start(v1::Refund::new().with_id("journaled"), options)
        .await
        .unwrap();
    server
        .call(Signal::new("refund.request", json!({})))
        .await
        .unwrap();
    server.stop().await;
    let journal = Journal::load(&store, "journaled").await.unwrap();
    assert!(journal.replay::<v1::Refund>().is_ok());
    match journal.replay::<v3::Refund>() {
        Err(ReplayError::Definition {
            error: CheckpointError::UnknownDefinition { found, .. },
            ..
        }) => assert_eq!(found, V1),
        other => panic!("expected an unknown definition, got {other:?}"),
    }
}

mod v5 {
    use stratagem::prelude::*;

    // A field renamed and retyped, a new field: renames and defaults, then a function.
    #[agent(strategy = Fsm, transitions {
        initial Requested
        terminal Refunded
        Requested -> AwaitingApproval on request
        AwaitingApproval -> Refunded on approve
    }, migrate "6b05ce76790b1b4e" { field cents was amount  field note = "none"  with to_cents })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Refund {
        pub cents: u64,
        pub note: String,
    }

    /// Amounts were whole units; this build counts cents.
    pub fn to_cents(agent: &mut serde_json::Value) -> Result<(), String> {
        let cents = &mut agent["state"]["cents"];
        let units = cents.as_u64().ok_or("`cents` is not a number")?;
        *cents = (units * 100).into();
        Ok(())
    }
}

#[tokio::test]
async fn field_renames_defaults_and_a_function_migrate_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path().join("agents.redb")).unwrap();
    let agent = Agent::new(v1::Refund { amount: 12 }).with_id("r");
    let server = AgentServer::start(agent, Options::default()).await.unwrap();
    server.hibernate(&store).await.unwrap();
    let server = AgentServer::<v5::Refund>::thaw(&store, "r", Options::default())
        .await
        .unwrap();
    let state = server.agent().await.unwrap().state().clone();
    assert_eq!((state.cents, state.note.as_str()), (1200, "none"));
    server.stop().await;
}
