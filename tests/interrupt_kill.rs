//! Parked agents survive `kill -9`: a child process runs 1,000 refund agents in the agent
//! server, each with 3 pending interrupts parked in a redb file, and is killed (`SIGKILL`)
//! while they wait. This process then thaws every agent from the file and answers all 3,000
//! interrupts in a random order: none is lost, none reaches another agent or another request,
//! and no action runs twice (the agents count their action runs). Beside them, a twentieth as
//! many behaviour-tree agents wait at two `ask` leaves each, and as many ReAct agents wait for
//! the approval of two tool calls each; their answers are shuffled in with the others.
//!
//! `STRATAGEM_INTERRUPT_AGENTS=N` changes the number of FSM agents. The binary runs without the
//! test harness: re-executed with `STRATAGEM_INTERRUPT_CHILD=<dir>`, it is the child.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use serde_json::json;
use stratagem::interrupt::InterruptError;
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::{RedbStore, Store};

#[path = "support/refunder.rs"]
mod refunder;
#[path = "support/refunds.rs"]
mod refunds;
#[path = "support/shipments.rs"]
mod shipments;
#[path = "support/shuffle.rs"]
mod shuffle;
use refunder::Refunder;
use refunds::{Decision, RefundRequest, Refunds};
use shipments::{Shipment, Verdict};
use shuffle::shuffle;
use stratagem::ai::{Approval, ModelTable, ScriptedModel};

const PENDING: u32 = 3;
const PARKED: &str = "parked";

fn agents() -> u32 {
    std::env::var("STRATAGEM_INTERRUPT_AGENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000)
}

fn id(agent: u32) -> String {
    format!("desk-{agent}")
}

/// How many tree agents and how many AI agents park beside the FSM agents.
fn others() -> u32 {
    (agents() / 20).max(1)
}

fn tree_id(agent: u32) -> String {
    format!("ship-{agent}")
}

fn ai_id(agent: u32) -> String {
    format!("refunder-{agent}")
}

/// The AI agents' model: in the child, the script up to the approvals; after the kill, a rule
/// that answers whatever comes next.
fn models(script: ScriptedModel) -> ModelTable {
    ModelTable::new().alias("fast", Arc::new(script), "test-model")
}

/// The item agent `agent`'s `k`-th request asks about: distinct across all agents.
fn item(agent: u32, k: u32) -> u32 {
    agent * 10 + k
}

/// Parks agents in `store`. A `call` waits for its step's checkpoint, and a thousand agents
/// share one file's fsyncs: on a busy machine that is slow, never wrong, so calls may wait.
fn parking(store: Arc<RedbStore>) -> Options {
    Options::default()
        .checkpoint_store(store)
        .call_timeout(std::time::Duration::from_secs(600))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn main() {
    if let Ok(dir) = std::env::var("STRATAGEM_INTERRUPT_CHILD") {
        return child(Path::new(&dir));
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut child = Command::new(std::env::current_exe().expect("this test's binary"))
        .env("STRATAGEM_INTERRUPT_CHILD", dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the child process starts");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let said = lines.next().and_then(Result::ok);
    assert_eq!(said.as_deref(), Some(PARKED), "the child parked its agents");
    // `Child::kill` is SIGKILL on Unix: no destructor, no flush, no goodbye.
    child.kill().expect("the child is killed");
    let status = child.wait().expect("the child is reaped");
    assert_eq!(
        status.signal(),
        Some(9),
        "the child died of SIGKILL: {status}"
    );
    runtime().block_on(resume_all(dir.path()));
    println!(
        "interrupt_kill: {} FSM agents, {} tree agents and {} AI agents; {} interrupts resumed after kill -9",
        agents(),
        others(),
        others(),
        agents() * PENDING + 4 * others()
    );
}

/// The child: parks every agent on three interrupts, says so, and waits to be killed.
fn child(dir: &Path) {
    runtime().block_on(async {
        let store =
            Arc::new(RedbStore::open(dir.join("checkpoints.redb")).expect("the store opens"));
        let options = parking(store);
        let mut servers = Vec::new();
        let mut servers_of_others = Vec::new();
        for agent in 0..agents() {
            let server = AgentServer::start(Refunds::new().with_id(id(agent)), options.clone())
                .await
                .expect("the agent starts");
            servers.push(server);
        }
        // A `call` answers once the step's interrupts are parked in the store.
        let calls = servers
            .iter()
            .enumerate()
            .map(|(agent, server)| async move {
                for k in 0..PENDING {
                    let data = json!({ "item": item(agent as u32, k) });
                    let outcome = server
                        .call(Signal::new("refund.request", data))
                        .await
                        .unwrap();
                    assert_eq!(outcome.errors().count(), 0, "{:?}", outcome.directives);
                }
            });
        futures::future::join_all(calls).await;
        for agent in 0..others() {
            let tree = AgentServer::start(Shipment::new().with_id(tree_id(agent)), options.clone())
                .await
                .expect("the tree agent starts");
            let ai = AgentServer::start(
                Refunder::new().with_id(ai_id(agent)),
                options.clone().models(models(refunder::script(agent))),
            )
            .await
            .expect("the AI agent starts");
            let query = json!({ "query": format!("refund order {agent}") });
            ai.call(Signal::new("ai.query", query)).await.unwrap();
            // Both park on their own (the tree as it ticks, the AI agent as its model answers):
            // wait until each has its two interrupts on disk.
            for server in [tree.handle(), ai.handle()] {
                while server.interrupts().await.unwrap().len() < 2 {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
            servers_of_others.push((tree, ai));
        }
        println!("{PARKED}");
        std::future::pending::<()>().await;
    });
}

/// One answer to give after the kill.
#[derive(Debug)]
enum Answer {
    /// FSM agent, interrupt id, item.
    Fsm(u32, String, u32),
    /// Tree agent, interrupt id.
    Tree(u32, String),
    /// AI agent, interrupt id.
    Ai(u32, String),
}

async fn resume_all(dir: &Path) {
    let store = Arc::new(RedbStore::open(dir.join("checkpoints.redb")).expect("the store reopens"));
    let options = parking(store.clone());
    let keys = store.keys().await.unwrap();
    assert_eq!(
        keys.len(),
        (agents() + 2 * others()) as usize,
        "every agent was parked"
    );

    let mut servers = BTreeMap::new();
    let mut answers = Vec::new();
    for agent in 0..agents() {
        let server = AgentServer::<Refunds>::thaw(&*store, &id(agent), options.clone())
            .await
            .expect("a parked agent thaws");
        let pending = server.interrupts().await.unwrap();
        assert_eq!(pending.len(), PENDING as usize, "agent {agent} lost none");
        for (k, interrupt) in pending.into_iter().enumerate() {
            let shown: RefundRequest = serde_json::from_value(interrupt.payload).unwrap();
            assert_eq!(
                shown.item,
                item(agent, k as u32),
                "each request shows its own item"
            );
            assert_eq!(interrupt.id, format!("{}/approval/{}", id(agent), k + 1));
            answers.push((agent, interrupt.id, shown.item));
        }
        let state = server.state().await.unwrap();
        assert_eq!(
            state.requests_run, PENDING,
            "agent {agent}: no request ran again"
        );
        servers.insert(agent, server);
    }

    // The tree and AI agents: each parked on two interrupts, nothing before them ran twice.
    let mut trees = BTreeMap::new();
    let mut ais = BTreeMap::new();
    let mut all: Vec<Answer> = answers
        .iter()
        .map(|(agent, id, item)| Answer::Fsm(*agent, id.clone(), *item))
        .collect();
    for agent in 0..others() {
        let tree = AgentServer::<Shipment>::thaw(&*store, &tree_id(agent), options.clone())
            .await
            .expect("a parked tree agent thaws");
        let pending = tree.interrupts().await.unwrap();
        assert_eq!(pending.len(), 2, "tree {agent} lost none");
        assert_eq!(tree.state().await.unwrap().packs_run, 1);
        all.extend(pending.into_iter().map(|p| Answer::Tree(agent, p.id)));
        trees.insert(agent, tree);
        let after_kill = models(ScriptedModel::new().when("refund order", "done"));
        let ai = AgentServer::<Refunder>::thaw(
            &*store,
            &ai_id(agent),
            options.clone().models(after_kill),
        )
        .await
        .expect("a parked AI agent thaws");
        let pending = ai.interrupts().await.unwrap();
        assert_eq!(pending.len(), 2, "AI agent {agent} lost none");
        assert_eq!(ai.state().await.unwrap().lookups_run, 1);
        all.extend(pending.into_iter().map(|p| Answer::Ai(agent, p.id)));
        ais.insert(agent, ai);
    }

    let seed = 0x9E37_79B9_7F4A_7C15;
    shuffle(&mut all, seed);
    for answer in &all {
        let resumed = match answer {
            Answer::Fsm(agent, interrupt, item) => {
                let decision = Decision {
                    item: *item,
                    approve: !item.is_multiple_of(3),
                };
                servers[agent].resume(interrupt, decision).await
            }
            Answer::Tree(agent, interrupt) => {
                let verdict = Verdict {
                    approve: true,
                    note: interrupt.clone(),
                };
                trees[agent].resume(interrupt, verdict).await
            }
            // The first refund of each is approved, the second refused.
            Answer::Ai(agent, interrupt) => {
                let approval = if interrupt.ends_with("/1") {
                    Approval::approve()
                } else {
                    Approval::refuse("one refund per order")
                };
                ais[agent].resume(interrupt, approval).await
            }
        };
        resumed.unwrap_or_else(|e| panic!("resuming {answer:?} (seed {seed:#x}): {e}"));
    }
    for (agent, tree) in &trees {
        let state = tree.state().await.unwrap();
        assert_eq!(
            (state.packs_run, state.ships_run),
            (1, 1),
            "tree {agent}: every action ran once"
        );
        let mut notes: Vec<String> = state.approvals.iter().map(|(_, n)| n.clone()).collect();
        notes.sort();
        let mut expected = vec![
            format!("{}/approval/1", tree_id(*agent)),
            format!("{}/customs/2", tree_id(*agent)),
        ];
        expected.sort();
        assert_eq!(notes, expected, "tree {agent} got exactly its own answers");
        assert_eq!(tree.snapshot().await.unwrap().status, Status::Success);
    }
    for (agent, ai) in &ais {
        let done = ai
            .await_completion(std::time::Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(done.status, Status::Success, "AI agent {agent}");
        let state = ai.state().await.unwrap();
        assert_eq!(
            state.lookups_run, 1,
            "AI agent {agent}: the lookup ran once"
        );
        assert_eq!(
            state.refunds,
            [5],
            "AI agent {agent}: the approved refund ran once"
        );
    }

    let mut seen = HashSet::new();
    for (agent, server) in &servers {
        let state = server.state().await.unwrap();
        assert_eq!(
            (state.requests_run, state.decisions_run),
            (PENDING, PENDING),
            "agent {agent}: every action ran once"
        );
        let mut decided: Vec<u32> = state.decisions.iter().map(|(item, _)| *item).collect();
        decided.sort_unstable();
        let asked: Vec<u32> = (0..PENDING).map(|k| item(*agent, k)).collect();
        assert_eq!(decided, asked, "agent {agent} got exactly its own answers");
        for (item, approved) in &state.decisions {
            assert_eq!(
                *approved,
                !item.is_multiple_of(3),
                "the answer for item {item} is its own"
            );
            assert!(seen.insert(*item), "item {item} decided twice");
        }
        assert!(server.interrupts().await.unwrap().is_empty());
    }

    // An answered id stays answered, after a thaw too.
    let (agent, interrupt, item) = &answers[0];
    servers[agent].stop().await;
    let thawed = AgentServer::<Refunds>::thaw(&*store, &id(*agent), options.clone())
        .await
        .unwrap();
    let error = thawed
        .resume(
            interrupt,
            Decision {
                item: *item,
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
}
