//! Behaviour-tree agents defined with the macros, end to end: `bt!` behaviours and expressions,
//! `#[agent(strategy = BehaviorTree)]`, actions with arguments, the host clock, the server.

use std::time::Duration;

use stratagem::bt::{Status as Tree, TreeRun};
use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tree = Patrol, tick = 100ms)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Sentry {
    battery: u8,
    position: i32,
    target: Option<i32>,
    visited: u32,
    log: Vec<String>,
}

bt! {
    for Sentry
    behavior Patrol {
        sequence {
            repeat(2) {
                sequence {
                    selector { condition battery_ok  retry(2) { action recharge } }
                    action pick_target
                    timeout(1s) { action move_to(speed = 2) }
                }
            }
            subtree Report
        }
    }
    behavior Report { action report(note = "patrol done") }
}

fn battery_ok(sentry: &Sentry) -> bool {
    sentry.battery >= 20
}

/// Charges 40% per tick until full.
#[action]
fn recharge(sentry: &mut Sentry) -> bt::Status {
    sentry.battery = sentry.battery.saturating_add(40).min(100);
    sentry.log.push(format!("charged to {}", sentry.battery));
    if sentry.battery == 100 {
        bt::Status::Success
    } else {
        bt::Status::Running
    }
}

/// The next target: four steps ahead.
#[action]
fn pick_target(sentry: &mut Sentry) {
    sentry.target = Some(sentry.position + 4);
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Move {
    speed: i32,
}

/// Moves towards the target, `speed` steps per tick, 5% battery per tick.
#[action]
fn move_to(sentry: &mut Sentry, params: Move) -> Result<bt::Status, ActionError> {
    let target = sentry.target.ok_or_else(|| ActionError::new("no target"))?;
    sentry.position = (sentry.position + params.speed).min(target);
    sentry.battery = sentry.battery.saturating_sub(5);
    if sentry.position < target {
        return Ok(bt::Status::Running);
    }
    sentry.visited += 1;
    sentry.target = None;
    Ok(bt::Status::Success)
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Note {
    note: String,
}

/// Writes a note.
#[action]
fn report(sentry: &mut Sentry, params: Note) {
    sentry.log.push(params.note);
}

fn sentry(battery: u8) -> Agent<Sentry> {
    Agent::new(Sentry {
        battery,
        ..Sentry::default()
    })
}

#[test]
fn a_generated_agent_patrols_recharges_and_reports() {
    let mut agent = sentry(20);
    assert_eq!(agent.snapshot().status, Status::Running);
    let mut ticks = 0;
    while !agent.snapshot().done() {
        assert!(agent.tick().is_empty());
        ticks += 1;
        assert!(ticks < 10, "the patrol should end");
    }
    let snapshot = agent.snapshot();
    assert_eq!(snapshot.status, Status::Success);
    assert_eq!(snapshot.details["ticks"], 5);
    let state = agent.state();
    assert_eq!(state.visited, 2);
    assert_eq!(state.position, 8);
    assert_eq!(
        state.log,
        [
            "charged to 50",
            "charged to 90",
            "charged to 100",
            "patrol done"
        ]
    );
}

#[test]
fn the_snapshot_shows_the_running_path_and_the_run_survives_a_checkpoint() {
    let mut agent = sentry(100);
    agent.tick();
    assert_eq!(
        agent.snapshot().details["running"],
        "subtree Patrol > sequence > repeat(2) > sequence > timeout(1s) > action move_to"
    );
    let json = serde_json::to_value(&agent).unwrap();
    let mut back: Agent<Sentry> = serde_json::from_value(json).unwrap();
    while !back.snapshot().done() {
        back.tick();
    }
    assert_eq!(back.snapshot().status, Status::Success);
    assert_eq!(back.state().visited, 2);
    assert_eq!(
        back.snapshot().details["ticks"],
        3,
        "resumed where the checkpoint was"
    );
}

#[test]
fn an_expression_tree_runs_with_its_own_behaviors_and_times() {
    let tree = bt! {
        selector {
            timeout(1s) { action move_to(speed = 0) }
            subtree Fallback
        }
        behavior Fallback { sequence { wait(500ms) action report(note = "gave up") } }
    };
    let mut run = TreeRun::default();
    let mut state = Sentry {
        battery: 100,
        target: Some(3),
        ..Sentry::default()
    };
    let at = |ms| Duration::from_millis(ms);
    assert_eq!(run.tick(&tree, &mut state, at(0)).status, Tree::Running);
    assert_eq!(run.tick(&tree, &mut state, at(999)).status, Tree::Running);
    // The timeout fails the move; the fallback starts waiting in the same tick.
    assert_eq!(run.tick(&tree, &mut state, at(1000)).status, Tree::Running);
    assert_eq!(
        run.running_path(&tree),
        "selector > subtree Fallback > sequence > wait(500ms)"
    );
    assert_eq!(run.tick(&tree, &mut state, at(1499)).status, Tree::Running);
    assert_eq!(run.tick(&tree, &mut state, at(1500)).status, Tree::Success);
    assert_eq!(state.log, ["gave up"]);
    assert_eq!(state.battery, 90, "two moves ran before the timeout");
}

/// `Params` classifies fields by how their type is written, so behind an alias it cannot
/// tell the type: such a field takes any argument, and serde judges it at run time.
type Steps = i32;

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct LooseMove {
    speed: Steps,
}

#[action]
fn move_loosely(sentry: &mut Sentry, params: LooseMove) {
    sentry.position += params.speed;
}

#[test]
fn invalid_arguments_fail_the_leaf_with_an_error_directive() {
    let tree = bt! { action move_loosely(speed = "fast") };
    let mut run = TreeRun::default();
    let mut state = Sentry {
        target: Some(1),
        ..Sentry::default()
    };
    let report = run.tick(&tree, &mut state, Duration::ZERO);
    assert_eq!(report.status, Tree::Failure);
    let [Directive::Error { error, .. }] = report.directives.as_slice() else {
        panic!("{:?}", report.directives)
    };
    assert!(
        error
            .to_string()
            .contains("invalid parameters for `move_loosely`"),
        "{error}"
    );
    assert_eq!(state.position, 0);
}

/// A tree written in place, with a parallel and decorators.
#[agent(strategy = BehaviorTree, tree = {
    parallel(success = 2, failure = 1) {
        force_success { action scan(side = "left") }
        invert { condition never }
        delay(200ms) { action scan(side = "right") }
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Scanner {
    scans: Vec<String>,
}

fn never(_: &Scanner) -> bool {
    false
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Side {
    side: String,
}

/// Scans one side.
#[action]
fn scan(scanner: &mut Scanner, params: Side) {
    scanner.scans.push(params.side);
}

#[tokio::test(start_paused = true)]
async fn an_inline_tree_runs_on_the_host_clock() {
    let mut agent = Scanner::new();
    agent.tick();
    // Two of three children succeeded at once: the delayed scan never ran.
    assert_eq!(agent.snapshot().status, Status::Success);
    assert_eq!(agent.state().scans, ["left"]);
}

#[tokio::test(start_paused = true)]
async fn a_tree_agent_is_ticked_to_completion_by_the_server() {
    let server = AgentServer::start(sentry(20), Options::default())
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let done = server
        .await_completion(Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Success);
    assert_eq!(done.result, Some(json!("success")));
    assert_eq!(done.details["ticks"], 5);
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(500),
        "five ticks at the agent's 100ms interval"
    );
    let state = server.state().await.unwrap();
    assert_eq!(state.visited, 2);
    assert_eq!(state.log.last().map(String::as_str), Some("patrol done"));
    let report = server.stop().await;
    assert_eq!(report.ticks, 5);
}

#[test]
fn behaviours_carry_their_diagrams() {
    assert!(
        Patrol::MERMAID.starts_with("flowchart TD\n    n0[\"→ sequence\"]\n    n1(\"repeat(2)\")"),
        "{}",
        Patrol::MERMAID
    );
    assert!(
        Patrol::MERMAID.contains("{{\"? selector\"}}"),
        "{}",
        Patrol::MERMAID
    );
    // `subtree Report` is drawn expanded.
    assert!(
        Patrol::DOT.contains("label=\"action report(note = \\\"patrol done\\\")\""),
        "{}",
        Patrol::DOT
    );
    assert!(
        Report::DOT.starts_with("digraph \"Report\" {"),
        "{}",
        Report::DOT
    );
}
