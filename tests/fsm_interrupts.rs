//! Typed interrupts in an FSM: raising parks a request with a deterministic id, `resume`
//! answers it with the declared type, several pending ones resume in any order, and nothing
//! that ran before the interrupt runs again. The `kill -9` scenario is `interrupt_kill.rs`.

use std::sync::Arc;

use serde_json::json;
use stratagem::AgentError;
use stratagem::interrupt::{INTERRUPT_SIGNAL, InterruptError, PendingInterrupt, Resume};
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::MemoryStore;

#[path = "support/refunds.rs"]
mod refunds;
use refunds::{Decision, Refunds, RefundsEvent};

fn request(agent: &mut Agent<Refunds>, item: u32) -> PendingInterrupt {
    let directives = agent
        .cmd(RefundsEvent::Request.with(json!({ "item": item })))
        .expect("a request is taken");
    let signal = directives
        .iter()
        .find_map(|d| match d {
            Directive::Interrupt(signal) => Some(signal.clone()),
            _ => None,
        })
        .expect("the row raises its interrupt");
    assert_eq!(signal.signal_type, INTERRUPT_SIGNAL);
    let pending: PendingInterrupt = serde_json::from_value(signal.data).unwrap();
    assert_eq!(signal.id, pending.id, "the signal's id is the interrupt's");
    pending
}

fn interrupt_error(result: Result<Vec<Directive>, AgentError>) -> InterruptError {
    match result {
        Err(AgentError::Interrupt { error }) => error,
        other => panic!("expected an interrupt error, got {other:?}"),
    }
}

#[test]
fn pending_interrupts_resume_in_any_order_with_their_own_values() {
    let mut agent = Refunds::new().with_id("desk-1");
    let raised: Vec<PendingInterrupt> = (10..13).map(|item| request(&mut agent, item)).collect();
    let ids: Vec<&str> = raised.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "desk-1/approval/1",
            "desk-1/approval/2",
            "desk-1/approval/3"
        ]
    );
    assert_eq!(raised[1].payload, json!({ "item": 11 }));
    assert_eq!(raised[1].resume_type, "Decision");
    assert_eq!(agent.snapshot().details["interrupts"], json!(ids));

    // Answer the last first, then the first, then the middle one.
    for at in [2, 0, 1] {
        let item = 10 + at as u32;
        let value = Decision {
            item,
            approve: item.is_multiple_of(2),
        };
        let value = serde_json::to_value(value).unwrap();
        agent
            .cmd(Resume {
                id: raised[at].id.clone(),
                value,
            })
            .unwrap();
    }
    let state = agent.state();
    assert_eq!(state.decisions, [(12, true), (10, true), (11, false)]);
    assert_eq!(
        (state.requests_run, state.decisions_run),
        (3, 3),
        "nothing ran twice"
    );
    assert!(agent.strategy_state().interrupts.pending.is_empty());
}

#[test]
fn unknown_answered_and_mistyped_answers_are_typed_errors_that_change_nothing() {
    let mut agent = Refunds::new().with_id("desk-2");
    let first = request(&mut agent, 1);
    let second = request(&mut agent, 2);
    let before = agent.clone();

    let error = interrupt_error(agent.cmd(Resume {
        id: "desk-2/approval/9".into(),
        value: json!({ "item": 1, "approve": true }),
    }));
    assert!(
        matches!(&error, InterruptError::Unknown { pending, .. } if pending == &[first.id.clone(), second.id.clone()]),
        "{error:?}"
    );
    assert!(error.to_string().contains("`desk-2/approval/1`"), "{error}");

    let error = interrupt_error(agent.cmd(Resume {
        id: first.id.clone(),
        value: json!({ "item": "one" }),
    }));
    assert!(matches!(&error, InterruptError::WrongType { expected, .. } if expected == "Decision"));
    assert_eq!(agent.state().decisions_run, before.state().decisions_run);
    assert_eq!(
        agent.strategy_state(),
        before.strategy_state(),
        "still pending"
    );

    agent
        .cmd(Resume {
            id: first.id.clone(),
            value: json!({ "item": 1, "approve": true }),
        })
        .unwrap();
    let error = interrupt_error(agent.cmd(Resume {
        id: first.id.clone(),
        value: json!({ "item": 1, "approve": false }),
    }));
    assert!(
        matches!(error, InterruptError::AlreadyAnswered { .. }),
        "{error:?}"
    );
    assert_eq!(agent.state().decisions, [(1, true)], "answered once");
}

#[test]
fn an_instruction_cannot_answer_an_interrupt_behind_resume_s_back() {
    let mut agent = Refunds::new().with_id("desk-3");
    request(&mut agent, 1);
    let directives = agent.cmd(Instruction::new(
        "approval",
        json!({ "item": 1, "approve": true }),
    ));
    assert!(
        directives
            .iter()
            .any(|d| matches!(d, Directive::Error { .. })),
        "{directives:?}"
    );
    assert!(agent.state().decisions.is_empty());
}

#[tokio::test]
async fn the_server_parks_interrupts_in_its_store_and_resumes_them_after_a_thaw() {
    let store = Arc::new(MemoryStore::new());
    let options = || Options::default().checkpoint_store(store.clone());
    let server = AgentServer::start(Refunds::new().with_id("desk-4"), options())
        .await
        .unwrap();
    let mut events = server.subscribe();
    for item in [7, 8] {
        server
            .call(Signal::new("refund.request", json!({ "item": item })))
            .await
            .unwrap();
    }
    let announced = events.recv().await.unwrap();
    assert_eq!(announced.signal_type, INTERRUPT_SIGNAL);
    assert_eq!(announced.id, "desk-4/approval/1");

    // Parked: the store already holds both interrupts, without an explicit checkpoint.
    server.stop().await;
    let thawed = AgentServer::<Refunds>::thaw(&*store, "desk-4", options())
        .await
        .unwrap();
    let pending = thawed.interrupts().await.unwrap();
    assert_eq!(pending.len(), 2);
    thawed
        .resume(
            &pending[1].id,
            Decision {
                item: 8,
                approve: false,
            },
        )
        .await
        .unwrap();
    let error = thawed
        .resume(
            &pending[1].id,
            Decision {
                item: 8,
                approve: true,
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            ServerError::Interrupt { error, .. } if matches!(**error, InterruptError::AlreadyAnswered { .. })
        ),
        "{error:?}"
    );
    thawed.stop().await;

    // The answer was parked too: thawed again, one interrupt is left and the decision stays.
    let again = AgentServer::<Refunds>::thaw(&*store, "desk-4", options())
        .await
        .unwrap();
    let state = again.state().await.unwrap();
    assert_eq!(state.decisions, [(8, false)]);
    assert_eq!((state.requests_run, state.decisions_run), (2, 1));
    assert_eq!(again.interrupts().await.unwrap(), pending[..1]);
}

/// Journal compaction drops old steps, never what a pending interrupt needs: every snapshot
/// holds the pending interrupts, so after the step that raised one is compacted away the
/// journal still replays to it, forks with it pending, and replays its answer.
#[tokio::test]
async fn compaction_keeps_what_a_pending_interrupt_needs() {
    use stratagem::journal::{Journal, JournalOptions};
    let store = MemoryStore::new();
    let journal = JournalOptions::new(store.clone())
        .snapshot_every(10)
        .keep_snapshots(2);
    let options = Options::default().journal(journal);
    let server = AgentServer::start(Refunds::new().with_id("desk-9"), options.clone())
        .await
        .unwrap();
    server
        .call(Signal::new("refund.request", json!({ "item": 1 })))
        .await
        .unwrap();
    let parked = server.interrupts().await.unwrap()[0].clone();
    // Many answered requests after it: the raising step falls out of the kept window.
    for item in 2..=60 {
        server
            .call(Signal::new("refund.request", json!({ "item": item })))
            .await
            .unwrap();
        let pending = server.interrupts().await.unwrap();
        let latest = pending.last().unwrap().id.clone();
        server
            .resume(
                &latest,
                Decision {
                    item,
                    approve: true,
                },
            )
            .await
            .unwrap();
    }
    server.stop().await;

    let journal = Journal::load(&store, "desk-9").await.unwrap();
    let first = journal
        .steps()
        .next()
        .expect("steps after the kept snapshots")
        .seq;
    assert!(
        first > 10,
        "the raising step was compacted away (first held: {first})"
    );
    let last = journal.steps().last().unwrap().seq;
    let replayed = journal.replay::<Refunds>().unwrap();
    assert_eq!(
        replayed.snapshot().details["interrupts"],
        json!([parked.id]),
        "the replay still has the interrupt pending"
    );

    // A fork at the last step is parked on it, and answering it runs the decision once.
    let fork = journal.fork_at::<Refunds>(last, "desk-9-fork").unwrap();
    let fork = AgentServer::start(fork, Options::default()).await.unwrap();
    assert_eq!(
        fork.interrupts().await.unwrap(),
        std::slice::from_ref(&parked)
    );
    let before = fork.agent().await.unwrap().state().decisions_run;
    fork.resume(
        &parked.id,
        Decision {
            item: 1,
            approve: false,
        },
    )
    .await
    .unwrap();
    let state = fork.agent().await.unwrap().state().clone();
    assert_eq!(state.decisions_run, before + 1);
    assert_eq!(state.decisions.last(), Some(&(1, false)));
    assert!(fork.interrupts().await.unwrap().is_empty());
    fork.stop().await;

    // The live agent answers it too, and the journal replays that answer exactly.
    let server = AgentServer::start(replayed.clone(), options).await.unwrap();
    server
        .resume(
            &parked.id,
            Decision {
                item: 1,
                approve: true,
            },
        )
        .await
        .unwrap();
    let live = server.agent().await.unwrap();
    server.stop().await;
    let journal = Journal::load(&store, "desk-9").await.unwrap();
    let again = journal.replay::<Refunds>().unwrap();
    assert_eq!(again.state().decisions, live.state().decisions);
    assert_eq!(again.state().decisions.last(), Some(&(1, true)));
}
