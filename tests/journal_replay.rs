//! Durable runs: every input of a journaled agent is recorded, and the run replays offline to
//! exactly the same states. 1,000 server runs (FSM agents with timers, behaviour trees reading
//! the clock, ReAct agents on the scripted model) get random signals and timers; each journal
//! (and Direct agents with async actions) then replays with every step's hash equal and no model
//! call, and forks of them diverge. Also: time travel and forking,
//! a divergence naming its step and the differing fields, a run continued across a thaw, and
//! bytes per step staying flat over a long run.
//!
//! `STRATAGEM_JOURNAL_RUNS` changes the number of runs (1,000 by default).

use std::sync::Arc;
use std::time::Duration;

use stratagem::ai::{ModelTable, ScriptedModel};
use stratagem::journal::{Input, Journal, JournalOptions, ReplayError};
use stratagem::prelude::*;
use stratagem::server::AgentRef;
use stratagem::store::{MemoryStore, RedbStore, Store};

/// A gate that closes itself 20 ms after it opened.
#[agent(
    strategy = Fsm,
    transitions {
        initial Closed
        Closed -> Open   on open  do count_opening
        Open   -> Closed on close
        Open   -> Closed after 20ms do auto_close
    },
    routes { "gate.open" => open  "gate.close" => close },
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Gate {
    openings: u32,
    auto_closed: u32,
}

#[action]
fn count_opening(gate: &mut Gate) {
    gate.openings += 1;
}

#[action]
fn auto_close(gate: &mut Gate) {
    gate.auto_closed += 1;
}

/// A guard that walks, waits on the clock, and takes notes it is sent.
#[agent(
    strategy = BehaviorTree,
    tree = Round,
    tick = 10ms,
    actions [note],
    routes { "guard.note" => note },
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Guard {
    steps: u32,
    notes: Vec<String>,
}

bt! {
    for Guard
    behavior Round {
        repeat(3) { sequence { action walk  wait(15ms) } }
    }
}

#[action]
fn walk(guard: &mut Guard) {
    guard.steps += 1;
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Note {
    text: String,
}

#[action]
fn note(guard: &mut Guard, params: Note) {
    guard.notes.push(params.text);
}

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

/// A clerk whose filing is async work: its outcome comes back as a completion.
#[agent(strategy = Direct, actions [file], routes { "clerk.file" => file })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {
    filed: u32,
}

/// Files one form, taking 5 ms.
#[action]
async fn file(clerk: &Clerk) -> Outcome {
    tokio::time::sleep(Duration::from_millis(5)).await;
    Outcome::new().set(json!({"filed": clerk.filed + 1}))
}

/// xorshift64*: reproducible randomness without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn runs() -> usize {
    std::env::var("STRATAGEM_JOURNAL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

/// Lets the agent's task handle what is due without moving the clock.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

/// Casts `count` random signals of `types`, with random pauses that let timers fire.
async fn drive(agent: &AgentRef, rng: &mut Rng, types: &[&str], count: u64) {
    for i in 0..count {
        let kind = types[rng.below(types.len() as u64) as usize];
        agent
            .cast(Signal::new(kind, json!({"text": format!("note {i}")})))
            .unwrap();
        settle().await;
        tokio::time::advance(Duration::from_millis(rng.below(30))).await;
        settle().await;
    }
}

fn script() -> ScriptedModel {
    ScriptedModel::new()
        .call("open_ticket", json!({"subject": "printer on fire"}))
        .answer("Ticket opened.")
        .looping()
}

#[tokio::test(start_paused = true)]
async fn a_thousand_recorded_runs_replay_offline_with_every_hash_equal() {
    let store = MemoryStore::new();
    let model = script();
    let options = Options::default()
        .models(ModelTable::new().alias("fast", Arc::new(model.clone()), "scripted"))
        .journal(JournalOptions::new(store.clone()));
    let mut rng = Rng(0x5eed_cafe);
    let mut kinds = Vec::new();
    for run in 0..runs() {
        let id = format!("run-{run}");
        let kind = run % 4;
        let agent = match kind {
            0 => {
                let server = AgentServer::start(Gate::new().with_id(&id), options.clone()).await;
                server.unwrap().handle().clone()
            }
            1 => {
                let server = AgentServer::start(Guard::new().with_id(&id), options.clone()).await;
                server.unwrap().handle().clone()
            }
            3 => {
                let server = AgentServer::start(Clerk::new().with_id(&id), options.clone()).await;
                server.unwrap().handle().clone()
            }
            _ => {
                let server = AgentServer::start(Desk::new().with_id(&id), options.clone()).await;
                server.unwrap().handle().clone()
            }
        };
        let count = 1 + rng.below(6);
        match kind {
            0 => drive(&agent, &mut rng, &["gate.open", "gate.close"], count).await,
            1 => drive(&agent, &mut rng, &["guard.note"], count).await,
            3 => drive(&agent, &mut rng, &["clerk.file"], count).await,
            _ => {
                let query =
                    json!({"query": "my printer is on fire", "request_id": format!("req-{run}")});
                agent.cast(Signal::new("ai.query", query)).unwrap();
                agent
                    .await_completion(Duration::from_secs(5))
                    .await
                    .unwrap();
            }
        }
        tokio::time::advance(Duration::from_millis(rng.below(50))).await;
        settle().await;
        agent.stop().await;
        kinds.push((id, kind));
    }

    let calls_before = model.requests().len();
    let (mut steps, mut timers, mut ticks, mut replies, mut completions) = (0, 0, 0, 0, 0);
    for (id, kind) in &kinds {
        let journal = Journal::load(&store, id).await.unwrap();
        for step in journal.steps() {
            match &step.input {
                Input::Signal { origin, signal } if origin == "timer" => {
                    // Drawn inside the step that armed the timer: (agent, step, index).
                    assert!(signal.id.starts_with(&format!("{id}/")), "{}", signal.id);
                    timers += 1;
                }
                Input::Signal { origin, .. } if origin == "llm" => replies += 1,
                Input::Tick => ticks += 1,
                Input::Completion { .. } => completions += 1,
                _ => {}
            }
        }
        // `replay` checks the state hash after every step.
        let replayed = match kind {
            0 => journal.replay::<Gate>().map(|a| a.id().to_string()),
            1 => journal.replay::<Guard>().map(|a| a.id().to_string()),
            3 => journal.replay::<Clerk>().map(|a| a.id().to_string()),
            _ => journal.replay::<Desk>().map(|a| a.id().to_string()),
        };
        assert_eq!(replayed.unwrap_or_else(|e| panic!("{id}: {e}")), *id);
        steps += journal.steps().count();
    }
    // `Journal::replay` takes no model table, transport or clock: it cannot reach a provider.
    // The counter proves the ReAct replays did not go around that either.
    assert_eq!(
        model.requests().len(),
        calls_before,
        "a replay calls no model"
    );

    // Every tenth tree run is forked halfway and takes notes of its own: the fork starts from
    // the original's state at that step, journals under its own id, replays to its live state,
    // and ends where the original never was; the original's journal is left as it was.
    let mut forks = 0;
    for (id, _) in kinds.iter().filter(|(_, kind)| *kind == 1).step_by(10) {
        let journal = Journal::load(&store, id).await.unwrap();
        let notes = fork_and_diverge(&journal, &store, &options, &mut rng).await;
        let original = journal.replay::<Guard>().unwrap();
        assert!(
            notes
                .iter()
                .any(|note| !original.state().notes.contains(note)),
            "{id}: the fork diverged"
        );
        let again = Journal::load(&store, id).await.unwrap();
        assert_eq!(
            again.steps().count(),
            journal.steps().count(),
            "{id} is unchanged"
        );
        forks += 1;
    }
    assert!(forks > 0 || runs() < 10, "{forks} forks");
    let runs = kinds.len();
    assert!(steps > 3 * runs, "{steps} steps in {runs} runs");
    if runs >= 30 {
        assert!(
            timers > 0 && ticks > 0 && replies > 0 && completions > 0,
            "{timers} timers, {ticks} ticks, {replies} replies, {completions} completions"
        );
    }
}

/// Forks a guard's `journal` halfway, sends the fork notes of its own, and checks it: it starts
/// in the original's state at that step and its own journal replays to its live state. The
/// fork's notes at the end.
async fn fork_and_diverge(
    journal: &Journal,
    store: &MemoryStore,
    options: &Options,
    rng: &mut Rng,
) -> Vec<String> {
    let held = journal.steps().count();
    let at = journal.steps().nth(held / 2).unwrap().seq;
    let fork_id = format!("{}-fork", journal.key());
    let fork = journal.fork_at::<Guard>(at, &fork_id).unwrap();
    let original = journal.state_at::<Guard>(at).unwrap();
    assert_eq!(fork.state().notes, original.state().notes);
    assert_eq!(fork.id(), fork_id);
    let server = AgentServer::start(fork, options.clone()).await.unwrap();
    for i in 0..1 + rng.below(4) {
        let note = json!({"text": format!("fork note {i}")});
        server.cast(Signal::new("guard.note", note)).unwrap();
        settle().await;
        tokio::time::advance(Duration::from_millis(rng.below(30))).await;
    }
    settle().await;
    let live = server.agent().await.unwrap();
    server.stop().await;

    let forked = Journal::load(store, &fork_id).await.unwrap();
    let replayed = forked.replay::<Guard>().unwrap();
    assert_eq!(
        serde_json::to_value(&replayed).unwrap(),
        serde_json::to_value(&live).unwrap(),
        "{fork_id} replays to its live state"
    );
    replayed.state().notes.clone()
}

#[tokio::test(start_paused = true)]
async fn the_final_state_replays_to_what_the_live_agent_has() {
    let store = MemoryStore::new();
    let options = Options::default().journal(JournalOptions::new(store.clone()));
    let server = AgentServer::start(Guard::new().with_id("guard"), options)
        .await
        .unwrap();
    drive(server.handle(), &mut Rng(7), &["guard.note"], 5).await;
    tokio::time::advance(Duration::from_millis(200)).await;
    settle().await;
    let live = server.agent().await.unwrap();
    server.stop().await;
    let journal = Journal::load(&store, "guard").await.unwrap();
    let replayed = journal.replay::<Guard>().unwrap();
    assert_eq!(
        replayed.state().steps,
        3,
        "the tree walked its three rounds"
    );
    assert_eq!(
        serde_json::to_value(&replayed).unwrap(),
        serde_json::to_value(&live).unwrap()
    );
}

#[tokio::test(start_paused = true)]
async fn time_travel_reads_any_step_and_a_fork_takes_new_inputs() {
    let store = MemoryStore::new();
    let options = Options::default().journal(JournalOptions::new(store.clone()));
    let gate = AgentServer::start(Gate::new().with_id("gate"), options.clone())
        .await
        .unwrap();
    for kind in [
        "gate.open",
        "gate.close",
        "gate.open",
        "gate.close",
        "gate.open",
    ] {
        gate.call(Signal::new(kind, json!({}))).await.unwrap();
    }
    gate.stop().await;
    let journal = Journal::load(&store, "gate").await.unwrap();
    // Step 1 is `init`, then one step per signal.
    let openings: Vec<u32> = (1..=6)
        .map(|seq| journal.state_at::<Gate>(seq).unwrap().state().openings)
        .collect();
    assert_eq!(openings, [0, 1, 1, 2, 2, 3]);
    let missing = journal.state_at::<Gate>(99).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("does not hold step 99 (it holds steps 1 to 6"),
        "{missing}"
    );

    let fork = journal.fork_at::<Gate>(3, "gate-fork").unwrap();
    let fork = AgentServer::start(fork, options).await.unwrap();
    fork.call(Signal::new("gate.open", json!({})))
        .await
        .unwrap();
    assert_eq!(fork.state().await.unwrap().openings, 2);
    tokio::time::advance(Duration::from_millis(25)).await;
    settle().await;
    assert_eq!(
        fork.state().await.unwrap().auto_closed,
        1,
        "the fork's own timer fired"
    );
    fork.stop().await;
    // The original run is as it was; the fork has its own journal.
    assert_eq!(
        Journal::load(&store, "gate").await.unwrap().steps().count(),
        6
    );
    let forked = Journal::load(&store, "gate-fork").await.unwrap();
    assert_eq!(forked.replay::<Gate>().unwrap().state().auto_closed, 1);
}

#[tokio::test(start_paused = true)]
async fn a_changed_input_diverges_at_its_step_and_names_the_differing_fields() {
    let store = MemoryStore::new();
    let options = Options::default().journal(JournalOptions::new(store.clone()).snapshot_every(1));
    let guard = AgentServer::start(Guard::new().with_id("g"), options)
        .await
        .unwrap();
    for text in ["first", "second", "third"] {
        guard
            .call(Signal::new("guard.note", json!({"text": text})))
            .await
            .unwrap();
    }
    guard.stop().await;
    // Rewrite what entered the agent at step 3 (its second note), as a changed definition
    // would make the strategy do something else with it. Written as JSON, the format of older
    // journals, which a journal still reads.
    let step = Journal::load(&store, "g")
        .await
        .unwrap()
        .step(3)
        .unwrap()
        .clone();
    let tampered = serde_json::to_string(&json!({ "step": step }))
        .unwrap()
        .replace("second", "other");
    store
        .append_journal("g", &[(6, tampered.into_bytes())])
        .await
        .unwrap();

    let journal = Journal::load(&store, "g").await.unwrap();
    let ReplayError::Diverged(divergence) = journal.replay::<Guard>().unwrap_err() else {
        panic!("expected a divergence");
    };
    assert_eq!(divergence.seq, 3);
    assert_eq!(divergence.input.as_deref(), Some("signal `guard.note`"));
    assert_ne!(divergence.expected, divergence.found);
    let differences = divergence.differences.clone().unwrap();
    assert_eq!(
        differences,
        ["`state.notes[1]`: recorded \"second\", replayed \"other\""]
    );
    let message = ReplayError::Diverged(divergence).to_string();
    assert!(
        message.starts_with("the replay of journal `g` diverged at step 3 (signal `guard.note`)"),
        "{message}"
    );
}

#[tokio::test]
async fn a_thawed_agent_continues_its_journal_in_a_redb_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(dir.path().join("agents.redb")).unwrap();
    let options = Options::default().journal(JournalOptions::new(store.clone()));
    let gate = AgentServer::start(Gate::new().with_id("door"), options.clone())
        .await
        .unwrap();
    gate.call(Signal::new("gate.open", json!({})))
        .await
        .unwrap();
    gate.call(Signal::new("gate.close", json!({})))
        .await
        .unwrap();
    gate.handle().hibernate(&store).await.unwrap();
    let gate = AgentServer::<Gate>::thaw(&store, "door", options)
        .await
        .unwrap();
    gate.call(Signal::new("gate.open", json!({})))
        .await
        .unwrap();
    gate.stop().await;

    let journal = Journal::load(&store, "door").await.unwrap();
    // The gate's 20 ms timer may fire in between (real time): leave timer steps aside.
    let steps: Vec<(u64, String)> = journal
        .steps()
        .filter(|s| !matches!(&s.input, Input::Signal { origin, .. } if origin == "timer"))
        .map(|s| (s.seq, s.input.describe()))
        .collect();
    let inputs: Vec<&str> = steps.iter().map(|(_, d)| d.as_str()).collect();
    assert_eq!(
        inputs,
        [
            "init",
            "signal `gate.open`",
            "signal `gate.close`",
            "init",
            "signal `gate.open`"
        ]
    );
    assert!(steps.windows(2).all(|w| w[0].0 < w[1].0), "{steps:?}");
    assert!(
        steps[3].0 >= steps[2].0 + 2,
        "the second run starts after a gap: {steps:?}"
    );
    assert_eq!(journal.replay::<Gate>().unwrap().state().openings, 2);
}

#[tokio::test(start_paused = true)]
async fn bytes_per_step_stay_flat_over_a_long_run_and_compaction_bounds_the_total() {
    let store = MemoryStore::new();
    let journal = JournalOptions::new(store.clone())
        .snapshot_every(100)
        .keep_snapshots(2);
    let server = AgentServer::start(
        Guard::new().with_id("long"),
        Options::default().journal(journal),
    )
    .await
    .unwrap();
    tokio::time::advance(Duration::from_millis(200)).await;
    settle().await;
    let (mut per_window, mut stored_per_step) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        for i in 0..100 {
            let signal = Signal::new("guard.note", json!({"text": format!("n{}", i % 10)}));
            if i < 99 {
                server.cast(signal).unwrap();
            } else {
                server.call(signal).await.unwrap();
            }
        }
        settle().await;
        let records = store.read_journal("long", 0).await.unwrap();
        // The last 100 steps: steps are at even positions.
        let steps: usize = records
            .iter()
            .rev()
            .filter(|(p, _)| p % 2 == 0)
            .take(100)
            .map(|(_, b)| b.len())
            .sum();
        per_window.push(steps / 100);
        // Everything stored (snapshots included) per step taken so far.
        let stored: usize = records.iter().map(|(_, b)| b.len()).sum();
        let taken = records.iter().map(|(p, _)| p / 2).max().unwrap_or(1) as usize;
        stored_per_step.push(stored / taken);
    }
    server.stop().await;
    let (first, last) = (per_window[0], per_window[9]);
    assert!(
        last * 10 <= first * 11,
        "bytes per step grew from {first} to {last}: {per_window:?}"
    );
    // After ~100 steps and after ~1,000: the journal's whole size per step did not grow.
    let (after_100, after_1000) = (stored_per_step[0], stored_per_step[9]);
    assert!(
        after_1000 * 10 <= after_100 * 11,
        "stored bytes per step grew from {after_100} to {after_1000}: {stored_per_step:?}"
    );
    let records = store.read_journal("long", 0).await.unwrap();
    assert!(
        records.len() <= 2 * 100 + 4,
        "compaction keeps two snapshot windows: {} records",
        records.len()
    );
}
