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

/// A review whose `Legal` region asks for approval while `Style` keeps going on its own.
#[agent(strategy = Fsm, transitions {
    initial Idle
    interrupt sign_off(Draft) -> Verdict
    Idle -> Review on start
    parallel Review {
        state Legal {
            initial Reading
            Reading on submit do count_submit ask sign_off
            Reading -> Signed on sign_off do apply_verdict
            Reading on both do count_submit ask sign_off
            Signed -> Reading on reopen
        }
        state Style {
            initial Drafting
            Drafting -> Polished on polish
            Drafting -> Polished on both
            Polished -> Drafting on rework
        }
    }
}, routes { "review.start" => start  "review.submit" => submit  "review.polish" => polish })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Paper {
    submits_run: u32,
    verdicts: Vec<bool>,
    unprintable: bool,
}

/// What the reviewer sees; a paper marked unprintable cannot be shown.
#[derive(Serialize)]
struct Draft {
    submits: u32,
}

impl From<&Paper> for Draft {
    fn from(paper: &Paper) -> Self {
        assert!(!paper.unprintable, "the draft cannot be rendered");
        Draft {
            submits: paper.submits_run,
        }
    }
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Verdict {
    approve: bool,
}

#[action]
fn count_submit(paper: &mut Paper) {
    paper.submits_run += 1;
}

#[action]
fn apply_verdict(paper: &mut Paper, verdict: Verdict) {
    paper.verdicts.push(verdict.approve);
}

fn raised(directives: &[Directive]) -> Vec<PendingInterrupt> {
    directives
        .iter()
        .filter_map(|d| match d {
            Directive::Interrupt(signal) => serde_json::from_value(signal.data.clone()).ok(),
            _ => None,
        })
        .collect()
}

#[test]
fn a_row_in_a_parallel_region_parks_its_interrupt_while_the_other_region_runs_on() {
    use PaperState as S;
    let mut paper = Paper::new().with_id("paper-1");
    paper.cmd(PaperEvent::Start).unwrap();
    let asked = raised(&paper.cmd(PaperEvent::Submit).unwrap());
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].id, "paper-1/sign_off/1");
    assert_eq!(asked[0].payload, json!({ "submits": 1 }));
    assert_eq!(paper.fsm_leaves(), [S::Reading, S::Drafting]);

    // The other region is not held up by the pending interrupt.
    paper.cmd(PaperEvent::Polish).unwrap();
    assert_eq!(paper.fsm_leaves(), [S::Reading, S::Polished]);
    // Only `resume` answers it, with the declared type.
    let wrong = paper.cmd(Resume {
        id: asked[0].id.clone(),
        value: json!("yes"),
    });
    assert!(matches!(
        interrupt_error(wrong),
        InterruptError::WrongType { .. }
    ));
    paper
        .cmd(Resume {
            id: asked[0].id.clone(),
            value: json!({ "approve": true }),
        })
        .unwrap();
    assert_eq!(paper.fsm_leaves(), [S::Signed, S::Polished]);
    assert_eq!(paper.state().verdicts, [true]);
    assert_eq!(
        paper.state().submits_run,
        1,
        "the asking row did not run again"
    );
    assert!(paper.strategy_state().interrupts.pending.is_empty());
}

#[test]
fn an_interrupt_whose_payload_fails_undoes_every_region_s_part_of_the_step() {
    use PaperState as S;
    let mut paper = Paper::new().with_id("paper-2");
    paper.cmd(PaperEvent::Start).unwrap();
    paper.state_mut().unprintable = true;
    let before = paper.clone();
    // `both` moves `Style` and asks in `Legal`, in one macrostep.
    assert!(paper.cmd(PaperEvent::Both).is_err());
    assert_eq!(paper.fsm_leaves(), [S::Reading, S::Drafting]);
    assert_eq!(paper.state().submits_run, 0);
    assert_eq!(paper.strategy_state(), before.strategy_state());

    paper.state_mut().unprintable = false;
    let asked = raised(&paper.cmd(PaperEvent::Both).unwrap());
    assert_eq!(asked.len(), 1);
    assert_eq!(paper.fsm_leaves(), [S::Reading, S::Polished]);
    assert_eq!(
        asked[0].id, "paper-2/sign_off/1",
        "the undone raise left no trace"
    );
}

#[tokio::test]
async fn a_region_s_parked_interrupt_survives_hibernate_and_resumes_after_a_thaw() {
    use PaperState as S;
    let store = Arc::new(MemoryStore::new());
    let options = || Options::default().checkpoint_store(store.clone());
    let server = AgentServer::start(Paper::new().with_id("paper-3"), options())
        .await
        .unwrap();
    let mut events = server.subscribe();
    for kind in ["review.start", "review.submit", "review.submit"] {
        server.call(Signal::new(kind, json!({}))).await.unwrap();
    }
    let announced = events.recv().await.unwrap();
    assert_eq!(
        (announced.signal_type.as_str(), announced.id.as_str()),
        (INTERRUPT_SIGNAL, "paper-3/sign_off/1")
    );
    server.handle().hibernate(&*store).await.unwrap();

    let thawed = AgentServer::<Paper>::thaw(&*store, "paper-3", options())
        .await
        .unwrap();
    let pending = thawed.interrupts().await.unwrap();
    let ids: Vec<&str> = pending.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["paper-3/sign_off/1", "paper-3/sign_off/2"]);
    thawed
        .call(Signal::new("review.polish", json!({})))
        .await
        .unwrap();
    thawed
        .resume(&pending[1].id, Verdict { approve: false })
        .await
        .unwrap();
    // The region has left `Reading`: the first interrupt's answer has no row to take it now,
    // so it is refused and stays pending.
    let outcome = thawed
        .resume(&pending[0].id, Verdict { approve: true })
        .await
        .unwrap();
    assert_eq!(outcome.errors().count(), 1);
    let agent = thawed.agent().await.unwrap();
    assert_eq!(agent.fsm_leaves(), [S::Signed, S::Polished]);
    assert_eq!(agent.state().verdicts, [false]);
    assert_eq!(agent.state().submits_run, 2, "nothing ran twice");
    assert_eq!(thawed.interrupts().await.unwrap(), pending[..1]);
    thawed.stop().await;
}
