//! Typed interrupts in a behaviour tree: an `ask` leaf parks the agent like an async leaf
//! (the tick returns `Running`), raises an interrupt with a deterministic id and its payload,
//! and completes from the typed answer `resume` delivers. The FSM's machinery (ids, pending
//! record, parking, journal) is the one used here.

use std::sync::Arc;

use serde_json::json;
use stratagem::interrupt::{INTERRUPT_SIGNAL, InterruptError, PendingInterrupt, Resume};
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::MemoryStore;
use stratagem::{AgentError, DynAgent};

#[path = "support/shipments.rs"]
mod shipments;
use shipments::{Manifest, Shipment, Verdict};

fn raised(directives: &[Directive]) -> Vec<PendingInterrupt> {
    directives
        .iter()
        .filter_map(|d| match d {
            Directive::Interrupt(signal) => {
                assert_eq!(signal.signal_type, INTERRUPT_SIGNAL);
                let pending: PendingInterrupt =
                    serde_json::from_value(signal.data.clone()).unwrap();
                assert_eq!(signal.id, pending.id, "the signal's id is the interrupt's");
                Some(pending)
            }
            _ => None,
        })
        .collect()
}

fn yes(note: &str) -> serde_json::Value {
    json!({ "approve": true, "note": note })
}

fn interrupt_error(result: Result<Vec<Directive>, AgentError>) -> InterruptError {
    match result {
        Err(AgentError::Interrupt { error }) => error,
        other => panic!("expected an interrupt error, got {other:?}"),
    }
}

#[test]
fn ask_leaves_park_the_tree_and_resume_in_any_order_without_running_anything_twice() {
    let mut agent = Shipment::new().with_id("ship-1");
    let pending = raised(&agent.tick());
    let ids: Vec<&str> = pending.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["ship-1/approval/1", "ship-1/customs/2"]);
    assert_eq!(pending[0].payload, json!({ "crates": 3 }));
    assert_eq!(pending[1].resume_type, "Verdict");
    assert_eq!(agent.interrupts(), pending);
    let snapshot = agent.snapshot();
    assert_eq!(snapshot.status, Status::Running);
    assert_eq!(snapshot.details["interrupts"], json!(ids));
    assert_eq!(
        snapshot.details["running"],
        "sequence > parallel(success = 2, failure = 1) > ask approval > ask customs"
    );

    // Parked: ticks change nothing and raise nothing again.
    for _ in 0..5 {
        assert!(agent.tick().is_empty());
    }
    assert_eq!(agent.interrupts(), pending);

    // The second first: the tree takes it at once, the other still waits.
    agent
        .cmd(Resume {
            id: pending[1].id.clone(),
            value: yes("papers fine"),
        })
        .unwrap();
    assert_eq!(agent.interrupts(), pending[..1]);
    assert_eq!(agent.snapshot().status, Status::Running);
    agent
        .cmd(Resume {
            id: pending[0].id.clone(),
            value: yes("go"),
        })
        .unwrap();
    let state = agent.state();
    assert_eq!(
        state.approvals,
        [
            ("customs".to_string(), "papers fine".to_string()),
            ("manager".to_string(), "go".to_string())
        ]
    );
    assert_eq!(
        (state.packs_run, state.ships_run),
        (1, 1),
        "nothing ran twice"
    );
    assert_eq!(agent.snapshot().status, Status::Success);
    assert!(agent.interrupts().is_empty());
}

#[test]
fn unknown_answered_and_mistyped_answers_are_typed_errors_that_change_nothing() {
    let mut agent = Shipment::new().with_id("ship-2");
    let pending = raised(&agent.tick());
    let before = serde_json::to_value(&agent).unwrap();

    let wrong = interrupt_error(agent.cmd(Resume {
        id: pending[0].id.clone(),
        value: json!("yes"),
    }));
    assert!(
        matches!(&wrong, InterruptError::WrongType { expected, interrupt, .. } if expected == "Verdict" && interrupt == "approval"),
        "{wrong}"
    );
    let unknown = interrupt_error(agent.cmd(Resume {
        id: "ship-2/approval/9".into(),
        value: yes(""),
    }));
    assert!(
        matches!(&unknown, InterruptError::Unknown { pending: ids, .. } if ids.len() == 2),
        "{unknown}"
    );
    assert_eq!(
        serde_json::to_value(&agent).unwrap(),
        before,
        "nothing changed"
    );

    agent
        .cmd(Resume {
            id: pending[0].id.clone(),
            value: yes("ok"),
        })
        .unwrap();
    let again = interrupt_error(agent.cmd(Resume {
        id: pending[0].id.clone(),
        value: yes("ok"),
    }));
    assert!(
        matches!(again, InterruptError::AlreadyAnswered { .. }),
        "{again}"
    );
    assert_eq!(agent.state().approvals.len(), 1);
}

#[test]
fn a_refusal_fails_the_leaf_and_withdraws_the_interrupts_the_tree_no_longer_waits_for() {
    let mut agent = Shipment::new().with_id("ship-3");
    let pending = raised(&agent.tick());
    agent
        .cmd(Resume {
            id: pending[0].id.clone(),
            value: json!({ "approve": false, "note": "too heavy" }),
        })
        .unwrap();
    // The parallel failed and halted the customs leaf: its interrupt is withdrawn.
    assert_eq!(agent.snapshot().status, Status::Failure);
    assert!(agent.interrupts().is_empty());
    let late = interrupt_error(agent.cmd(Resume {
        id: pending[1].id.clone(),
        value: yes("late"),
    }));
    assert!(
        matches!(late, InterruptError::AlreadyAnswered { .. }),
        "{late}"
    );
    assert_eq!(agent.state().ships_run, 0);

    // A restart asks again, with new ids.
    agent.restart().unwrap();
    let again = raised(&agent.tick());
    let ids: Vec<&str> = again.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["ship-3/approval/3", "ship-3/customs/4"]);
    assert_eq!(agent.state().packs_run, 2);
}

#[test]
fn a_parked_tree_survives_a_checkpoint_round_trip() {
    let mut agent = Shipment::new().with_id("ship-4");
    let pending = raised(&agent.tick());
    let json = serde_json::to_value(&agent).unwrap();
    let mut back: Agent<Shipment> = serde_json::from_value(json).unwrap();
    assert_eq!(back.interrupts(), pending);
    for p in pending.iter().rev() {
        back.cmd(Resume {
            id: p.id.clone(),
            value: yes("after thaw"),
        })
        .unwrap();
    }
    assert_eq!(back.snapshot().status, Status::Success);
    assert_eq!((back.state().packs_run, back.state().ships_run), (1, 1));
}

#[path = "support/shuffle.rs"]
mod shuffle;
use shuffle::shuffle;

#[tokio::test(start_paused = true)]
async fn the_server_parks_asks_and_resumes_them_after_hibernate_in_a_random_order() {
    let store = Arc::new(MemoryStore::new());
    let options = || Options::default().checkpoint_store(store.clone());
    let mut answers = Vec::new();
    for n in 0..8 {
        let id = format!("ship-s{n}");
        let server = AgentServer::start(Shipment::new().with_id(&id), options())
            .await
            .unwrap();
        let mut events = server.subscribe();
        // The server ticks a `Running` tree on its own: both asks are announced once parked.
        let mut announced = Vec::new();
        while announced.len() < 2 {
            let signal = events.recv().await.unwrap();
            if signal.signal_type == INTERRUPT_SIGNAL {
                announced.push(signal.id);
            }
        }
        assert_eq!(
            announced,
            [format!("{id}/approval/1"), format!("{id}/customs/2")]
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        server.handle().hibernate(&*store).await.unwrap();
        answers.extend(announced.into_iter().map(|i| (id.clone(), i)));
    }
    shuffle(&mut answers, 0x5eed);
    let mut servers = std::collections::HashMap::new();
    for (agent_id, interrupt) in &answers {
        if !servers.contains_key(agent_id) {
            let thawed = AgentServer::<Shipment>::thaw(&*store, agent_id, options())
                .await
                .unwrap();
            assert_eq!(thawed.interrupts().await.unwrap().len(), 2);
            servers.insert(agent_id.clone(), thawed);
        }
        let server = &servers[agent_id];
        server.resume(interrupt, yes(interrupt)).await.unwrap();
        let refused = server.resume(interrupt, yes("twice")).await.unwrap_err();
        assert!(
            matches!(&refused, ServerError::Interrupt { error, .. } if matches!(**error, InterruptError::AlreadyAnswered { .. })),
            "{refused:?}"
        );
    }
    for (id, server) in servers {
        let agent = server.agent().await.unwrap();
        assert_eq!(agent.snapshot().status, Status::Success, "{id}");
        let state = agent.state();
        assert_eq!(
            (state.packs_run, state.ships_run),
            (1, 1),
            "{id}: nothing ran twice"
        );
        let notes: Vec<&str> = state.approvals.iter().map(|(_, n)| n.as_str()).collect();
        let mut expected: Vec<String> = answers
            .iter()
            .filter(|(a, _)| *a == id)
            .map(|(_, i)| i.clone())
            .collect();
        expected.sort();
        let mut notes: Vec<String> = notes.into_iter().map(str::to_string).collect();
        notes.sort();
        assert_eq!(notes, expected, "{id}: each answer went to its own leaf");
        server.stop().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_journaled_run_with_an_ask_replays_with_equal_hashes() {
    use stratagem::journal::{Journal, JournalOptions};
    let store = MemoryStore::new();
    let options = Options::default().journal(JournalOptions::new(store.clone()));
    let server = AgentServer::start(Shipment::new().with_id("ship-j"), options)
        .await
        .unwrap();
    let mut events = server.subscribe();
    let mut ids = Vec::new();
    while ids.len() < 2 {
        let signal = events.recv().await.unwrap();
        if signal.signal_type == INTERRUPT_SIGNAL {
            ids.push(signal.id);
        }
    }
    server.resume(&ids[1], yes("b")).await.unwrap();
    server.resume(&ids[0], yes("a")).await.unwrap();
    let live = server.agent().await.unwrap();
    assert_eq!(live.snapshot().status, Status::Success);
    server.stop().await;

    let journal = Journal::load(&store, "ship-j").await.unwrap();
    let replayed = journal.replay::<Shipment>().unwrap();
    assert_eq!(
        serde_json::to_value(replayed.state()).unwrap(),
        serde_json::to_value(live.state()).unwrap()
    );
    assert_eq!(replayed.state().packs_run, 1);
}

/// An `ask` under a `timeout` gives up on the person: the leaf is halted and its interrupt
/// withdrawn, so the answer that comes too late is refused.
#[agent(strategy = BehaviorTree, tick = 100ms, tree = {
    selector {
        timeout(1s) { ask approval(Manifest) -> Verdict do record_late }
        action give_up
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Hurried {
    crates: u32,
    gave_up: bool,
}

impl From<&Hurried> for Manifest {
    fn from(hurried: &Hurried) -> Self {
        Manifest {
            crates: hurried.crates,
        }
    }
}

#[action]
fn record_late(_: &mut Hurried, _: Verdict) {}

#[action]
fn give_up(hurried: &mut Hurried) {
    hurried.gave_up = true;
}

#[tokio::test(start_paused = true)]
async fn a_timeout_halts_the_ask_and_withdraws_its_interrupt() {
    let mut agent = Hurried::new().with_id("h-1");
    let pending = raised(&agent.tick());
    assert_eq!(pending.len(), 1);
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    agent.tick();
    assert_eq!(agent.snapshot().status, Status::Success);
    assert!(agent.state().gave_up);
    assert!(agent.interrupts().is_empty());
    let late = interrupt_error(agent.cmd(Resume {
        id: pending[0].id.clone(),
        value: yes("late"),
    }));
    assert!(
        matches!(late, InterruptError::AlreadyAnswered { .. }),
        "{late}"
    );
}
