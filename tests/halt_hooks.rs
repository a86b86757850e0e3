//! Halt hooks: `#[action(on_halt = f)]` is called exactly once each time a behaviour tree halts
//! a running leaf of the action, never when the action finishes by itself or is not running.

use stratagem::prelude::*;
use stratagem::{ActionErrorKind, AgentError};

/// Drives in steps while allowed; being stopped mid-drive resets the trip.
#[agent(strategy = BehaviorTree, tree = {
    reactive_sequence {
        condition allowed
        action drive
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Car {
    stopped: bool,
    trip: u32,
    total: u32,
    halts: u32,
    explode_on_halt: bool,
}

fn allowed(car: &Car) -> bool {
    !car.stopped
}

/// One step of a three-step drive.
#[action(on_halt = reset_trip)]
fn drive(car: &mut Car) -> bt::Status {
    car.trip += 1;
    car.total += 1;
    if car.trip < 3 {
        bt::Status::Running
    } else {
        car.trip = 0;
        bt::Status::Success
    }
}

fn reset_trip(car: &mut Car) {
    car.trip = 0;
    car.halts += 1;
    assert!(!car.explode_on_halt, "the brakes failed");
}

#[tokio::test(start_paused = true)]
async fn the_hook_runs_once_per_halt_of_a_running_leaf() {
    let mut car = Car::new();
    car.tick();
    car.tick();
    assert_eq!((car.state().trip, car.state().halts), (2, 0));

    // The condition turns false while `drive` runs: one halt, one hook call.
    car.state_mut().stopped = true;
    assert!(car.tick().is_empty());
    assert_eq!((car.state().trip, car.state().halts), (0, 1));
    assert_eq!(car.snapshot().status, Status::Failure);

    // A fresh run to completion: no halt, no hook.
    car.restart().unwrap();
    car.state_mut().stopped = false;
    for _ in 0..3 {
        car.tick();
    }
    assert_eq!(car.snapshot().status, Status::Success);
    assert_eq!(car.state().halts, 1, "finishing by itself is not a halt");

    // A restart of a finished tree halts nothing.
    car.restart().unwrap();
    assert_eq!(car.state().halts, 1);
    // A restart of a running one halts the leaf: the hook runs.
    car.tick();
    car.restart().unwrap();
    assert_eq!((car.state().trip, car.state().halts), (0, 2));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_hook_is_reported_and_its_changes_undone() {
    let mut car = Car::new();
    car.state_mut().explode_on_halt = true;
    car.tick();
    car.state_mut().stopped = true;
    let out = car.tick();
    let Some(AgentError::Hook { hook, error }) = out[0].as_error() else {
        panic!("{out:?}")
    };
    assert_eq!(hook, "reset_trip");
    assert_eq!(error.kind(), ActionErrorKind::Panicked);
    assert!(error.message().contains("the brakes failed"), "{error}");
    assert_eq!(car.state().halts, 0, "the hook's changes were undone");
    assert_eq!(car.state().trip, 1);
    assert_eq!(
        car.snapshot().status,
        Status::Failure,
        "the halt went ahead"
    );
}

/// Honks, then drives: `honk` returns `()`, so it always finishes and its leaf keeps no
/// progress flag; halting the reactive sequence never halts it.
#[agent(strategy = BehaviorTree, tree = {
    reactive_sequence {
        action honk
        action drive_on
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Van {
    honks: u32,
    steps: u32,
    honk_halts: u32,
}

/// Honks once.
#[action(on_halt = honk_halted)]
fn honk(van: &mut Van) {
    van.honks += 1;
}

fn honk_halted(van: &mut Van) {
    van.honk_halts += 1;
}

/// Drives forever, a step per tick.
#[action]
fn drive_on(van: &mut Van) -> bt::Status {
    van.steps += 1;
    bt::Status::Running
}

#[test]
fn only_actions_that_can_stay_in_progress_keep_a_progress_flag() {
    let may_be_in_progress = [
        <honk as Action<Van>>::MAY_BE_IN_PROGRESS,
        <drive_on as Action<Van>>::MAY_BE_IN_PROGRESS,
        <drive as Action<Car>>::MAY_BE_IN_PROGRESS,
    ];
    assert_eq!(may_be_in_progress, [false, true, true]);
}

#[test]
fn a_leaf_that_always_finishes_is_never_halted_whatever_a_checkpoint_says() {
    let mut van = Van::new();
    van.tick();
    let mut checkpoint = serde_json::to_value(&van).unwrap();
    // `honk`'s leaf, the first child of the root.
    let honk_leaf = &mut checkpoint["strategy"]["run"]["nodes"]["children"][0]["node"];
    assert_eq!(honk_leaf["running"], false);
    // A checkpoint claiming `honk` runs (edited, or written by a build where it returned a
    // status): restored, the leaf is still idle, and halting the tree does not halt it.
    honk_leaf["running"] = true.into();
    let mut back: Agent<Van> = serde_json::from_value(checkpoint).unwrap();
    let drawn = stratagem::strategy::render_tree::<Van>(&back.strategy_state().run);
    assert!(drawn.contains("* action drive_on"), "{drawn}");
    assert!(!drawn.contains("* action honk"), "{drawn}");
    back.restart().unwrap();
    assert_eq!(
        back.state().honk_halts,
        0,
        "a restart halts only `drive_on`"
    );
    assert!(back.tick().is_empty());
    assert_eq!(
        (
            back.state().honks,
            back.state().steps,
            back.state().honk_halts
        ),
        (2, 2, 0)
    );
}
