//! A generated behaviour tree ticks without allocating: 1,000 ticks of a tree mixing every kind
//! of composite, decorators, timers, conditions and actions with arguments, through the agent's
//! strategy and the host clock, reading the agent's status after each, allocate nothing. The counting allocator is
//! `allocation-counter`'s, which counts per thread, so the test harness's own threads cannot
//! disturb the count.

use std::time::Duration;

use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tree = Work, tick = 10ms)]
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Rover {
    steps: u64,
    heat: u32,
    scans: u64,
}

bt! {
    for Rover
    behavior Work {
        repeat(1000000) {
            reactive_sequence {
                condition cool
                parallel(success = 2, failure = 2) {
                    retry(3) { action step(by = 1, fast = true) }
                    repeat(2) { sequence { delay(20ms) { action step(by = 2, fast = false) } wait(10ms) } }
                    timeout(1h) { force_success { invert { condition idle } } }
                }
                selector {
                    run_once { action scan }
                    reactive_selector { condition idle  action cool_down(by = 3) }
                }
                subtree Rest
            }
        }
    }
    behavior Rest { force_success { action cool_down(by = 1) } }
}

fn cool(rover: &Rover) -> bool {
    rover.heat < 1_000_000
}

fn idle(rover: &Rover) -> bool {
    rover.steps.is_multiple_of(7)
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Step {
    by: u64,
    fast: bool,
}

/// Steps; every other step takes a second tick.
#[action]
fn step(rover: &mut Rover, params: Step) -> bt::Status {
    rover.steps += params.by;
    rover.heat += if params.fast { 2 } else { 1 };
    if rover.steps.is_multiple_of(2) {
        bt::Status::Running
    } else {
        bt::Status::Success
    }
}

/// Scans once.
#[action]
fn scan(rover: &mut Rover) {
    rover.scans += 1;
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct By {
    by: u32,
}

/// Cools down.
#[action]
fn cool_down(rover: &mut Rover, params: By) -> Result<(), ActionError> {
    if rover.heat < params.by {
        return Err(ActionError::new("already cool"));
    }
    rover.heat -= params.by;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_thousand_ticks_of_a_generated_tree_allocate_nothing() {
    let mut agent = Rover::new();
    // Warm-up: one-time initialisation (the host clock's anchor) happens here.
    for _ in 0..10 {
        agent.tick();
        tokio::time::advance(Duration::from_millis(10)).await;
    }
    let mut allocations = 0;
    let mut bytes = 0;
    for _ in 0..1_000 {
        let mut directives = Directives::new();
        let mut status = Status::Idle;
        let info = allocation_counter::measure(|| {
            directives = agent.tick();
            // What a host's loop reads after each tick.
            status = agent.status();
        });
        assert!(directives.is_empty(), "{directives:?}");
        assert_eq!(status, Status::Running);
        allocations += info.count_total;
        bytes += info.bytes_total;
        tokio::time::advance(Duration::from_millis(10)).await;
    }
    let state = agent.state();
    assert!(state.steps > 1_000, "the tree did work: {state:?}");
    assert_eq!(state.scans, 1, "run_once ran once");
    assert_eq!(
        agent.snapshot().status,
        Status::Running,
        "still running after 1,010 ticks"
    );
    assert_eq!((allocations, bytes), (0, 0), "no allocation while ticking");
}
