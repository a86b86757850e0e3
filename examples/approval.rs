//! A refund that needs a person's approval, across a crash.
//!
//! ```sh
//! cargo run --example approval
//! ```
//!
//! The refund agent asks for approval (a typed interrupt) and is parked: its checkpoint and its
//! journal up to there are on disk before anyone sees the interrupt's id. The process running it is then killed with
//! `SIGKILL` while it waits (this example runs that process as a child of itself). A new
//! process thaws the agent, a person approves, the refund is paid, and the whole run is replayed
//! step by step from the agent's input journal, offline, every state hash checked.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use stratagem::journal::{Journal, JournalOptions};
use stratagem::prelude::*;
use stratagem::store::RedbStore;

/// A refund of one order, paid out once a person approves it.
#[agent(
    strategy = Fsm,
    transitions {
        initial Requested
        terminal Refunded
        terminal Rejected as failure
        interrupt approval(ApprovalRequest) -> Approval
        Requested -> AwaitingApproval on request do record_request ask approval
        AwaitingApproval -> Refunded on approval if approved do pay_out
        AwaitingApproval -> Rejected on approval
    },
    routes { "refund.request" => request },
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refund {
    order: String,
    amount_cents: u64,
    paid_out_cents: u64,
    approved_by: Option<String>,
    /// How often `record_request` ran: once, even across the crash.
    requests_recorded: u32,
}

/// The refund asked for.
#[derive(Debug, Deserialize, JsonSchema)]
struct RefundRequest {
    order: String,
    amount_cents: u64,
}

/// What the approver is shown.
#[derive(Debug, Serialize)]
struct ApprovalRequest {
    order: String,
    amount: String,
}

impl From<&Refund> for ApprovalRequest {
    fn from(refund: &Refund) -> Self {
        ApprovalRequest {
            order: refund.order.clone(),
            amount: format!(
                "{}.{:02} EUR",
                refund.amount_cents / 100,
                refund.amount_cents % 100
            ),
        }
    }
}

/// The approver's answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Approval {
    approved: bool,
    by: String,
}

/// Records the request, before approval is asked for.
#[action]
fn record_request(refund: &mut Refund, request: RefundRequest) {
    refund.order = request.order;
    refund.amount_cents = request.amount_cents;
    refund.requests_recorded += 1;
}

/// Whether the approver said yes.
fn approved(_: &Refund, approval: Approval) -> bool {
    approval.approved
}

/// Pays the refund out.
#[action]
fn pay_out(refund: &mut Refund, approval: Approval) {
    refund.paid_out_cents = refund.amount_cents;
    refund.approved_by = Some(approval.by);
}

const ID: &str = "refund-A1001";
const PARKED: &str = "parked";

fn options(store: &RedbStore) -> Options {
    Options::default()
        .checkpoint_store(std::sync::Arc::new(store.clone()))
        .journal(JournalOptions::new(store.clone()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Ok(dir) = std::env::var("APPROVAL_EXAMPLE_CHILD") {
        return first_process(Path::new(&dir)).await;
    }
    let dir = tempfile_dir()?;
    println!("1. a process starts the refund agent and asks for approval");
    let mut child = Command::new(std::env::current_exe()?)
        .env("APPROVAL_EXAMPLE_CHILD", &dir)
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        if line == PARKED {
            break;
        }
        println!("   {line}");
    }
    child.kill()?; // SIGKILL: no shutdown, no flush, no goodbye
    let status = child.wait()?;
    println!("2. that process was killed while the agent waited ({status})");

    let store = RedbStore::open(dir.join("stratagem.redb"))?;
    let refund = AgentServer::<Refund>::thaw(&store, ID, options(&store)).await?;
    let pending = refund.interrupts().await?;
    println!(
        "3. a new process thaws `{ID}`: state {:?}, waiting for {}",
        refund.agent().await?.fsm_state(),
        pending[0].id
    );
    let approval = Approval {
        approved: true,
        by: "maria@example.com".to_string(),
    };
    let outcome = refund.resume(&pending[0].id, approval).await?;
    let state = refund.state().await?;
    println!(
        "4. approved: {:?}, {} cents paid out, approved by {}; `record_request` ran {} time(s)",
        outcome.snapshot.status,
        state.paid_out_cents,
        state.approved_by.as_deref().unwrap_or("nobody"),
        state.requests_recorded,
    );
    let again = refund.resume(&pending[0].id, json!({ "approved": false, "by": "x" }));
    println!(
        "   answering again is refused: {}",
        again.await.unwrap_err()
    );
    refund.stop().await; // writes the journal's last records

    println!("5. the run, replayed step by step from the journal (offline, hashes checked):");
    let journal = Journal::load(&store, ID).await?;
    let mut replayer = journal.replayer::<Refund>()?;
    while let Some(step) = replayer.next_step() {
        let step = step?;
        println!(
            "   step {}: {:<34} -> {:?}",
            step.seq,
            step.step.input.describe(),
            replayer.agent().fsm_state()
        );
    }
    let replayed = replayer.into_agent();
    assert_eq!(replayed.state().paid_out_cents, state.paid_out_cents);
    println!(
        "   the replay ends where the live run did: {:?}",
        replayed.fsm_state()
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// The first process: starts the agent, asks for approval, and waits to be killed.
async fn first_process(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let store = RedbStore::open(dir.join("stratagem.redb"))?;
    let refund = AgentServer::start(Refund::new().with_id(ID), options(&store)).await?;
    let mut events = refund.subscribe();
    let request = json!({ "order": "A-1001", "amount_cents": 4_250 });
    refund.call(Signal::new("refund.request", request)).await?;
    // The interrupt signal goes out once the agent's checkpoint holding it is written.
    let interrupt = events.recv().await?;
    println!(
        "interrupt {} asks: {}",
        interrupt.id, interrupt.data["payload"]
    );
    // Nothing to wait for: the journal's steps up to the interrupt were synced with its
    // checkpoint, before the interrupt went out.
    println!("{PARKED}");
    std::future::pending::<()>().await;
    Ok(())
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("stratagem-approval-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
