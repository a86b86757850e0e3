//! Cancelling running async actions: a behaviour tree that halts an async leaf, and an FSM that
//! leaves the state an async action started in, send `CancelInstruction`; the server and the
//! `Runner` abort the work, so it stops and never overlaps the next run of the action.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use stratagem::prelude::*;
use stratagem::strategy::RESTART_SIGNAL;
use tokio::time::{Instant, advance};

/// Counts runs of an async action: started, finished, and how many ran at once at most. A run
/// that is aborted drops its guard, so it stops counting as running.
struct Runs {
    started: AtomicU32,
    finished: AtomicU32,
    running: AtomicU32,
    max_running: AtomicU32,
}

impl Runs {
    const fn new() -> Self {
        Runs {
            started: AtomicU32::new(0),
            finished: AtomicU32::new(0),
            running: AtomicU32::new(0),
            max_running: AtomicU32::new(0),
        }
    }

    fn start(&'static self) -> RunGuard {
        self.started.fetch_add(1, Ordering::SeqCst);
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        RunGuard(self)
    }

    fn get(&self) -> (u32, u32, u32) {
        (
            self.started.load(Ordering::SeqCst),
            self.finished.load(Ordering::SeqCst),
            self.max_running.load(Ordering::SeqCst),
        )
    }
}

struct RunGuard(&'static Runs);

impl RunGuard {
    fn finish(self) {
        self.0.finished.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Lets the agent's task handle everything that is due, without moving the clock.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

static JOBS: Runs = Runs::new();

/// Works on a job while it is allowed to; blocking it halts the running job.
#[agent(
    strategy = BehaviorTree,
    tick = 100ms,
    tree = {
        reactive_sequence {
            condition allowed
            action slow_job
        }
    },
    actions [block, unblock],
    routes {
        "job.block" => block
        "job.unblock" => unblock
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Job {
    blocked: bool,
    done: u32,
}

fn allowed(job: &Job) -> bool {
    !job.blocked
}

#[action]
fn block(job: &mut Job) {
    job.blocked = true;
}

#[action]
fn unblock(job: &mut Job) {
    job.blocked = false;
}

/// Ten seconds of work.
#[action]
async fn slow_job(job: &Job) -> Outcome {
    let run = JOBS.start();
    tokio::time::sleep(Duration::from_secs(10)).await;
    run.finish();
    Outcome::new().set(json!({"done": job.done + 1}))
}

#[tokio::test(start_paused = true)]
async fn the_server_aborts_an_async_leaf_the_tree_halted() {
    let server = AgentServer::start(Job::new(), Options::default())
        .await
        .unwrap();
    settle().await;
    advance(Duration::from_secs(3)).await;
    settle().await;
    assert_eq!(JOBS.get(), (1, 0, 1), "the first job runs");

    // The condition turns false: the next tick halts the leaf, which cancels its run.
    server.cast(Signal::new("job.block", json!({}))).unwrap();
    advance(Duration::from_millis(200)).await;
    settle().await;
    let halted = server.snapshot().await.unwrap();
    assert_eq!(halted.status, Status::Failure, "{halted:?}");

    // A new run of the tree starts the job again: it must not overlap the first one.
    server.cast(Signal::new("job.unblock", json!({}))).unwrap();
    server.cast(Signal::new(RESTART_SIGNAL, json!({}))).unwrap();
    let done = server
        .await_completion(Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success);
    // Well past the first job's ten seconds: it never finished, and never ran beside the second.
    advance(Duration::from_secs(30)).await;
    settle().await;
    assert_eq!(
        JOBS.get(),
        (2, 1, 1),
        "started, finished, at most running at once"
    );
    assert_eq!(server.state().await.unwrap().done, 1);
    let report = server.stop().await;
    assert_eq!(report.errors, 0, "{report:?}");
}

static SCANS: Runs = Runs::new();

/// Two scans race; the first to finish wins and the other is halted.
#[agent(strategy = BehaviorTree, tree = {
    parallel(success = 1) {
        action quick_scan
        action deep_scan
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Scanner {
    found: Vec<String>,
}

#[action]
async fn quick_scan(scanner: &Scanner) -> Outcome {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut found = scanner.found.clone();
    found.push("quick".into());
    Outcome::new().set(json!({ "found": found }))
}

#[action]
async fn deep_scan(scanner: &Scanner) -> Outcome {
    let run = SCANS.start();
    tokio::time::sleep(Duration::from_secs(60)).await;
    run.finish();
    let mut found = scanner.found.clone();
    found.push("deep".into());
    Outcome::new().set(json!({ "found": found }))
}

#[tokio::test(start_paused = true)]
async fn the_runner_aborts_an_async_leaf_the_tree_halted() {
    let mut scanner = Scanner::new();
    let start = Instant::now();
    let directives = scanner.tick();
    let out = Runner::new().settle(&mut scanner, directives).await;
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(1),
        "the runner returned when the quick scan won, without waiting for the deep one"
    );
    assert_eq!(scanner.snapshot().status, Status::Success);
    assert_eq!(scanner.state().found, ["quick"]);
    assert_eq!(SCANS.get(), (1, 0, 1), "the deep scan was aborted");
}

static AUDITS: Runs = Runs::new();

/// A door whose audit, started while it is open, is pointless once it closes.
#[agent(
    strategy = Fsm,
    transitions {
        initial Open
        Open -> Closed on close
        Closed -> Open on open
    },
    actions [audit],
    routes {
        "door.audit" => audit
        "door.close" => close
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {
    audits: u32,
}

#[action]
async fn audit(door: &Door) -> Outcome {
    let run = AUDITS.start();
    tokio::time::sleep(Duration::from_secs(10)).await;
    run.finish();
    Outcome::new().set(json!({"audits": door.audits + 1}))
}

#[test]
fn leaving_a_state_cancels_the_async_actions_started_in_it() {
    let mut door = Door::new();
    let started = door.cmd(Instruction::new("audit", json!({})).with_id("audit-1"));
    assert!(
        matches!(started.as_slice(), [Directive::RunInstruction { instruction, .. }] if instruction.id == "audit-1"),
        "{started:?}"
    );
    assert_eq!(door.snapshot().details["in_flight"], json!(["audit-1"]));
    let closed = door.cmd(DoorEvent::Close).unwrap();
    assert!(
        matches!(closed.as_slice(), [Directive::CancelInstruction { id }] if id == "audit-1"),
        "{closed:?}"
    );
    assert_eq!(door.snapshot().details["in_flight"], json!([]));
    // Another transition has nothing left to cancel.
    assert!(door.cmd(DoorEvent::Open).unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_server_aborts_an_async_action_of_a_state_the_fsm_left() {
    let server = AgentServer::start(Door::new(), Options::default())
        .await
        .unwrap();
    server.cast(Signal::new("door.audit", json!({}))).unwrap();
    settle().await;
    advance(Duration::from_secs(1)).await;
    server.cast(Signal::new("door.close", json!({}))).unwrap();
    settle().await;
    advance(Duration::from_secs(30)).await;
    settle().await;
    assert_eq!(AUDITS.get(), (1, 0, 1), "the audit was aborted");
    let agent = server.agent().await.unwrap();
    assert_eq!(agent.fsm_state(), DoorState::Closed);
    assert_eq!(agent.state().audits, 0);
    let report = server.stop().await;
    assert_eq!(report.errors, 0, "no stray completion: {report:?}");
    assert!(report.in_flight.is_empty(), "{report:?}");
}
