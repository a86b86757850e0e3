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
