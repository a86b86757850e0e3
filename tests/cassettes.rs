//! Model cassettes end to end: a ReAct agent's model traffic recorded in the agent server
//! (streamed, because someone watches), saved to a file, played back offline through the
//! scripted model to the same result; a changed prompt fails loudly, naming the message.

use std::sync::Arc;
use std::time::Duration;

use stratagem::ai::{Cassette, LanguageModel, ModelTable, ScriptedModel};
use stratagem::prelude::*;

/// Files support tickets.
#[agent(strategy = React, model = "fast", tools = [open_ticket], max_iterations = 4)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Desk {
    tickets: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Ticket {
    subject: String,
}

/// Opens a ticket.
#[action]
fn open_ticket(desk: &mut Desk, ticket: Ticket) -> Outcome {
    desk.tickets.push(ticket.subject);
    Outcome::new().reply(json!({"ticket": desk.tickets.len()}))
}

/// Runs one query on a fresh desk with `model`; the final snapshot and the desk.
async fn run(model: Arc<dyn LanguageModel>, query: &str) -> (Snapshot, Desk) {
    let options = Options::default().models(ModelTable::new().alias("fast", model, "gpt-test"));
    let server = AgentServer::start(Desk::new(), options).await.unwrap();
    // A subscriber makes the server stream the answers.
    let _events = server.subscribe();
    let query = json!({"query": query, "request_id": "req-1"});
    server.call(Signal::new("ai.query", query)).await.unwrap();
    let done = server
        .await_completion(Duration::from_secs(5))
        .await
        .unwrap();
    let desk = server.state().await.unwrap();
    server.stop().await;
    (done, desk)
}

#[tokio::test]
async fn a_recorded_run_plays_back_offline_and_a_changed_prompt_fails_loudly() {
    // "Live": in a real project this is `OpenAiCompatible`, recorded once.
    let live = ScriptedModel::new()
        .user("my printer is on fire")
        .say("That needs a ticket.")
        .call("open_ticket", json!({"subject": "printer on fire"}))
        .answer("I opened ticket 1.");
    let recorder = Cassette::record(Arc::new(live.clone()));
    let (recorded, desk) = run(Arc::new(recorder.clone()), "my printer is on fire").await;
    assert_eq!(recorded.status, Status::Success);
    live.assert_finished();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cassettes/printer.json");
    recorder.save(&path).unwrap();
    let cassette = Cassette::load(&path).unwrap();
    assert_eq!(
        cassette.interactions.len(),
        2,
        "a tool round, then the answer"
    );

    let playback = ScriptedModel::from_cassette(&cassette);
    let (replayed, replayed_desk) = run(Arc::new(playback.clone()), "my printer is on fire").await;
    assert_eq!(replayed.result, recorded.result);
    assert_eq!(replayed_desk.tickets, desk.tickets);
    playback.assert_finished();

    let playback = ScriptedModel::from_cassette(&cassette);
    let (changed, _) = run(Arc::new(playback), "my scanner is on fire").await;
    assert_eq!(changed.status, Status::Failure);
    // The request fails with the cassette's explanation, which the agent reports as its result.
    let result = changed.result.unwrap().to_string();
    assert!(
        result.contains("does not match the cassette: its call 1 message")
            && result.contains(
                "(`user`) differs: recorded \\\"my printer is on fire\\\", got \\\"my scanner is on fire\\\""
            ),
        "{result}"
    );
}
