//! AI tools that need a person's approval (`approve = [refund]`): a ReAct agent parks on the
//! tool call with a typed interrupt showing the tool and its arguments, `resume(id, Approval)`
//! runs it once or tells the model it was refused, on the scripted model, through the server's
//! parking, hibernation and journal (the FSM's interrupt machinery).

use std::sync::Arc;
use std::time::Duration;

use stratagem::ai::{Approval, ModelTable, ScriptedModel, ToolApproval};
use stratagem::interrupt::{INTERRUPT_SIGNAL, InterruptError, PendingInterrupt};
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::MemoryStore;

#[path = "support/refunder.rs"]
mod refunder;
use refunder::{Refunder, script};

fn options(model: &ScriptedModel, store: &Arc<MemoryStore>) -> Options {
    Options::default()
        .models(ModelTable::new().alias("fast", Arc::new(model.clone()), "test-model"))
        .checkpoint_store(store.clone())
}

fn query(n: u32) -> Signal {
    Signal::new(
        "ai.query",
        json!({ "query": format!("refund order {n}"), "request_id": format!("req-{n}") }),
    )
}

/// Waits until the agent announced `count` interrupts; returns them.
async fn announced(
    events: &mut tokio::sync::broadcast::Receiver<Signal>,
    count: usize,
) -> Vec<PendingInterrupt> {
    let mut out = Vec::new();
    while out.len() < count {
        let signal = tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .expect("the interrupts are announced")
            .unwrap();
        if signal.signal_type == INTERRUPT_SIGNAL {
            out.push(serde_json::from_value(signal.data).unwrap());
        }
    }
    out
}

fn refused_as(error: &ServerError) -> &InterruptError {
    match error {
        ServerError::Interrupt { error, .. } => error,
        other => panic!("expected an interrupt error, got {other:?}"),
    }
}

#[path = "support/shuffle.rs"]
mod shuffle;
use shuffle::shuffle;

#[tokio::test]
async fn approvals_across_agents_resume_in_any_order_after_hibernation_and_run_each_tool_once() {
    let store = Arc::new(MemoryStore::new());
    let mut models = Vec::new();
    let mut answers = Vec::new();
    for n in 0..5u32 {
        let model = script(n);
        let id = format!("refunder-{n}");
        let server = AgentServer::start(Refunder::new().with_id(&id), options(&model, &store))
            .await
            .unwrap();
        let mut events = server.subscribe();
        server.call(query(n)).await.unwrap();
        let pending = announced(&mut events, 2).await;
        let ids: Vec<&str> = pending.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, [format!("{id}/refund/1"), format!("{id}/refund/2")]);
        let shown: ToolApproval = serde_json::from_value(pending[1].payload.clone()).unwrap();
        assert_eq!(shown.tool, "refund");
        assert_eq!(shown.arguments, json!({ "order": n, "amount": 6 }));
        assert_eq!(shown.request_id, format!("req-{n}"));
        assert_eq!(pending[0].resume_type, "Approval");
        // Nothing ran yet; the lookup before it ran once.
        let state = server.state().await.unwrap();
        assert_eq!((state.lookups_run, state.refunds.len()), (1, 0));
        server.handle().hibernate(&*store).await.unwrap();
        // Approve the first refund of each agent, refuse the second.
        answers.push((id.clone(), pending[0].id.clone(), Approval::approve()));
        answers.push((
            id.clone(),
            pending[1].id.clone(),
            Approval::refuse("only one refund per order"),
        ));
        models.push((id, model));
    }
    shuffle(&mut answers, 0xa11ce);

    let mut servers = std::collections::HashMap::new();
    for (agent_id, interrupt, approval) in &answers {
        if !servers.contains_key(agent_id) {
            let model = &models.iter().find(|(id, _)| id == agent_id).unwrap().1;
            let thawed = AgentServer::<Refunder>::thaw(&*store, agent_id, options(model, &store))
                .await
                .unwrap();
            assert_eq!(thawed.interrupts().await.unwrap().len(), 2);
            // A value that is not an `Approval` is refused and changes nothing.
            let wrong = thawed.resume(interrupt, json!("yes")).await.unwrap_err();
            assert!(
                matches!(refused_as(&wrong), InterruptError::WrongType { expected, .. } if expected == "Approval"),
                "{wrong:?}"
            );
            servers.insert(agent_id.clone(), thawed);
        }
        let server = &servers[agent_id];
        server.resume(interrupt, approval).await.unwrap();
        let again = server.resume(interrupt, approval).await.unwrap_err();
        assert!(
            matches!(refused_as(&again), InterruptError::AlreadyAnswered { .. }),
            "{again:?}"
        );
    }
    for (id, model) in &models {
        let server = &servers[id];
        let unknown = server
            .resume(&format!("{id}/refund/9"), Approval::approve())
            .await
            .unwrap_err();
        assert!(
            matches!(refused_as(&unknown), InterruptError::Unknown { .. }),
            "{unknown:?}"
        );
        let done = server
            .await_completion(Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(done.status, Status::Success, "{id}");
        assert_eq!(done.result.as_ref().unwrap()["answer"], "done");
        let state = server.state().await.unwrap();
        assert_eq!(
            state.lookups_run, 1,
            "{id}: nothing before the interrupt ran twice"
        );
        assert_eq!(
            state.refunds,
            [5],
            "{id}: the approved refund ran once, the refused never"
        );
        // The model was told of the refusal, note included, as the call's result.
        let last = model.requests().pop().unwrap();
        let told = last.messages.iter().any(|m| {
            m.content
                .contains("a person refused this call: only one refund per order")
        });
        assert!(told, "{id}: {:?}", last.messages);
        model.assert_finished();
        assert!(server.interrupts().await.unwrap().is_empty());
    }
    for (_, server) in servers {
        server.stop().await;
    }
}

#[tokio::test]
async fn a_cancelled_request_withdraws_its_approvals() {
    let store = Arc::new(MemoryStore::new());
    let model = script(1);
    let server = AgentServer::start(Refunder::new().with_id("r-c"), options(&model, &store))
        .await
        .unwrap();
    let mut events = server.subscribe();
    server.call(query(1)).await.unwrap();
    let pending = announced(&mut events, 2).await;
    server
        .call(Signal::new("ai.cancel", json!({})))
        .await
        .unwrap();
    assert!(server.interrupts().await.unwrap().is_empty());
    let late = server
        .resume(&pending[0].id, Approval::approve())
        .await
        .unwrap_err();
    assert!(
        matches!(refused_as(&late), InterruptError::AlreadyAnswered { .. }),
        "{late:?}"
    );
    assert!(server.state().await.unwrap().refunds.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn a_journaled_run_with_an_approval_replays_with_equal_hashes() {
    use stratagem::journal::{Journal, JournalOptions};
    let store = MemoryStore::new();
    let model = script(3);
    let options = Options::default()
        .models(ModelTable::new().alias("fast", Arc::new(model.clone()), "test-model"))
        .journal(JournalOptions::new(store.clone()));
    let server = AgentServer::start(Refunder::new().with_id("r-j"), options)
        .await
        .unwrap();
    let mut events = server.subscribe();
    server.call(query(3)).await.unwrap();
    let pending = announced(&mut events, 2).await;
    server
        .resume(&pending[1].id, Approval::approve())
        .await
        .unwrap();
    server
        .resume(&pending[0].id, Approval::refuse("no"))
        .await
        .unwrap();
    server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    let live = server.agent().await.unwrap();
    server.stop().await;
    assert_eq!(live.state().refunds, [6]);

    // Offline: no model, every step's state hash checked.
    let journal = Journal::load(&store, "r-j").await.unwrap();
    let replayed = journal.replay::<Refunder>().unwrap();
    assert_eq!(replayed.state().refunds, live.state().refunds);
    assert_eq!(replayed.state().lookups_run, 1);
    assert_eq!(replayed.snapshot(), live.snapshot());
}

/// Adaptive that picks ReAct asks for approval the same way.
mod chooser {
    use stratagem::prelude::*;

    #[agent(
        strategy = Adaptive,
        available_strategies = [react],
        default_strategy = react,
        tools = [refund],
        approve = [refund],
    )]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Chooser {
        pub refunds: Vec<u32>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    pub struct Refund {
        amount: u32,
    }

    /// Refunds part of an order.
    #[action]
    pub fn refund(chooser: &mut Chooser, refund: Refund) {
        chooser.refunds.push(refund.amount);
    }
}

#[tokio::test]
async fn adaptive_as_react_asks_too_and_the_in_process_runner_says_it_waits() {
    use chooser::Chooser;
    use stratagem::AgentError;
    use stratagem::DynAgent;
    use stratagem::ai::{AiRunner, AskError};
    use stratagem::interrupt::Resume;

    let model = ScriptedModel::new()
        .user("refund order 2")
        .call("refund", json!({ "amount": 9 }))
        .answer("refunded");
    let runner = AiRunner::new(ModelTable::new().alias("fast", Arc::new(model.clone()), "m"));
    let mut agent = Chooser::new().with_id("chooser-1");
    let error = agent.ask(&runner, "refund order 2").await.unwrap_err();
    assert!(
        matches!(&error, AskError::Refused { message } if message.contains("chooser-1/refund/1")),
        "{error:?}"
    );
    assert!(agent.state().refunds.is_empty());
    let pending = agent.interrupts();
    assert_eq!(pending.len(), 1);

    let wrong = agent.cmd(Resume {
        id: pending[0].id.clone(),
        value: json!({ "approve": "yes" }),
    });
    assert!(
        matches!(
            wrong,
            Err(AgentError::Interrupt {
                error: InterruptError::WrongType { .. }
            })
        ),
        "{wrong:?}"
    );
    let value = serde_json::to_value(Approval::approve()).unwrap();
    let resumed = agent
        .cmd(Resume {
            id: pending[0].id.clone(),
            value,
        })
        .unwrap();
    runner.settle(&mut agent, resumed).await;
    assert_eq!(agent.state().refunds, [9]);
    assert_eq!(agent.snapshot().result.unwrap()["answer"], "refunded");
    model.assert_finished();
}
