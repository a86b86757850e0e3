//! What an FSM agent allocates per event on the typed path (`agent.cmd(Event)`), counted with
//! `allocation-counter` (per thread, so the test harness's own threads cannot disturb the
//! count): a refused event (no row, all guards false) allocates nothing, nor does a transition
//! without actions or reading the status; the error still renders the full message.

use stratagem::prelude::*;

/// A CD player with a guarded row: `play` needs a disc.
#[agent(strategy = Fsm, transitions {
    initial Empty
    Empty   -> Open    on open_close
    Empty   -> Stopped on cd_detected
    Open    -> Empty   on open_close
    Stopped -> Playing on play if has_disc
    Stopped -> Open    on open_close
    Playing -> Stopped on stop
    Playing -> Paused  on pause
    Paused  -> Playing on end_pause
    Paused  -> Stopped on stop
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Cd {
    disc: bool,
}

fn has_disc(cd: &Cd) -> bool {
    cd.disc
}

/// Runs `f` and returns its result with the number of allocations it made.
fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (out.expect("ran"), info.count_total)
}

#[test]
fn refused_events_allocate_nothing_and_still_explain_themselves() {
    let mut cd = Cd::new();
    cd.init();
    // The first command enters the initial state (once per agent): not what is counted here.
    cd.cmd(CdEvent::OpenClose).unwrap();
    cd.cmd(CdEvent::OpenClose).unwrap();

    // No row: `Empty` does not accept `play`.
    let (result, allocations) = counted(|| cd.cmd(CdEvent::Play));
    let error = result.unwrap_err();
    assert_eq!(allocations, 0, "invalid transition: {error}");
    assert_eq!(
        error.to_string(),
        "invalid transition: state `Empty` has no row for event `play`; it accepts: `open_close`, `cd_detected`"
    );

    // Every guard false.
    cd.cmd(CdEvent::CdDetected).unwrap();
    let (result, allocations) = counted(|| cd.cmd(CdEvent::Play));
    let error = result.unwrap_err();
    assert_eq!(allocations, 0, "guard rejected: {error}");
    assert_eq!(
        error.to_string(),
        "guard rejected: no guard holds for event `play` in state `Stopped` (tried `has_disc`)"
    );
    assert_eq!(cd.fsm_state(), CdState::Stopped);

    // Refused many times over, mixed with reading the status, as a device loop does.
    let (_, allocations) = counted(|| {
        for _ in 0..1_000 {
            assert!(cd.cmd(CdEvent::Pause).is_err());
            assert!(cd.cmd(CdEvent::Play).is_err());
            assert!(cd.cmd(CdEvent::EndPause).is_err());
            assert_eq!(cd.status(), Status::Waiting);
        }
    });
    assert_eq!(allocations, 0);
}

#[test]
fn transitions_without_actions_allocate_nothing() {
    let mut cd = Cd::new();
    cd.init();
    cd.state_mut().disc = true;
    cd.cmd(CdEvent::CdDetected).unwrap();
    let (_, allocations) = counted(|| {
        for _ in 0..1_000 {
            for event in [
                CdEvent::Play,
                CdEvent::Pause,
                CdEvent::EndPause,
                CdEvent::Stop,
            ] {
                assert!(cd.cmd(event).unwrap().is_empty());
            }
            assert!(!cd.is_done());
        }
    });
    assert_eq!(allocations, 0);
    assert_eq!(cd.fsm_state(), CdState::Stopped);
}

/// A ledger whose rows run actions that read the state (`&Ledger`) and one that writes it.
#[agent(strategy = Fsm, transitions {
    initial Open
    terminal Closed
    Open -> Closed on close
    Open on look do look
    Open on note do note
    Open on stamp do stamp
    Open on bad_stamp do bad_stamp
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Ledger {
    entries: Vec<String>,
    stamp: u32,
}

/// Reads the state: cannot change it, so the machine keeps no copy to restore.
#[action]
fn look(ledger: &Ledger) {
    assert!(ledger.entries.len() < 1_000);
}

/// Writes the state: a copy of it (here its `Vec`) is kept to restore if the action fails.
#[action]
fn note(ledger: &mut Ledger) {
    ledger.stamp += 1;
}

/// Reads the state and changes it through a state operation, applied after a copy is taken.
#[action]
fn stamp(ledger: &Ledger) -> Outcome {
    Outcome::new().set_path("stamp", json!(ledger.stamp + 1))
}

/// A first operation that applies, then one that does not: all or nothing.
#[action]
fn bad_stamp(_: &Ledger) -> Outcome {
    Outcome::new()
        .set_path("stamp", json!(99))
        .set_path("stamp", json!("not a number"))
}

#[test]
fn actions_that_cannot_write_the_state_run_without_a_copy_of_it() {
    let mut ledger = Agent::new(Ledger {
        entries: vec!["opening balance".into(); 4],
        stamp: 0,
    });
    ledger.init();
    ledger.cmd(LedgerEvent::Look).unwrap();

    // `&Ledger`: nothing copied, nothing allocated.
    let (result, allocations) = counted(|| ledger.cmd(LedgerEvent::Look));
    result.unwrap();
    assert_eq!(allocations, 0, "an action reading the state copies nothing");

    // `&mut Ledger`: the copy kept for rollback clones the entries (the `Vec` and its four
    // `String`s), which is what an action that may change the state costs.
    let (result, allocations) = counted(|| ledger.cmd(LedgerEvent::Note));
    result.unwrap();
    assert_eq!(
        allocations, 5,
        "a writing action keeps one copy of the state"
    );
    assert_eq!(ledger.state().stamp, 1);

    // State operations of a reading action are applied after a copy is taken, so they are
    // all or nothing too.
    ledger.cmd(LedgerEvent::Stamp).unwrap();
    assert_eq!(ledger.state().stamp, 2);
    let error = ledger.cmd(LedgerEvent::BadStamp).unwrap_err();
    assert!(
        error.to_string().starts_with("action `bad_stamp` failed"),
        "{error}"
    );
    assert_eq!(ledger.state().stamp, 2, "the first operation was undone");
    assert_eq!(ledger.state().entries.len(), 4);
}

#[test]
fn a_first_command_allocates_nothing_when_entering_does_nothing() {
    // No `init`: the initial state has no `enter` action and no timer, so the first command
    // keeps no copy of the agent to restore.
    let mut cd = Cd::new();
    let (result, allocations) = counted(|| cd.cmd(CdEvent::Play));
    assert!(result.is_err());
    assert_eq!(allocations, 0, "a refused first event");
    assert_eq!(
        cd.status(),
        Status::Idle,
        "a refused first event changes nothing"
    );
    let (result, allocations) = counted(|| cd.cmd(CdEvent::OpenClose));
    assert!(result.unwrap().is_empty());
    assert_eq!(allocations, 0, "a first transition");
    assert_eq!(cd.fsm_state(), CdState::Open);
    assert!(cd.init().is_empty(), "entered once, by the transition");
}

/// A counter whose rows write plain data through `&mut` actions without parameters.
#[agent(strategy = Fsm, transitions {
    initial Idle
    Idle -> Busy on start do count_start
    Busy -> Idle on stop do count_stop
    Busy on bump do bump
    Busy on fail do bump_then_fail
})]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct Counter {
    starts: u64,
    stops: u64,
    bumps: u64,
}

#[action]
fn count_start(counter: &mut Counter) {
    counter.starts += 1;
}

#[action]
fn count_stop(counter: &mut Counter) {
    counter.stops += 1;
}

#[action]
fn bump(counter: &mut Counter) {
    counter.bumps += 1;
}

/// Writes, then fails: the write is undone.
#[action]
fn bump_then_fail(counter: &mut Counter) -> Result<(), ActionError> {
    counter.bumps += 100;
    Err(ActionError::new("jammed"))
}

#[test]
fn writing_actions_without_parameters_or_directives_allocate_nothing() {
    let mut counter = Counter::new();
    let (_, allocations) = counted(|| {
        for _ in 0..1_000 {
            for event in [CounterEvent::Start, CounterEvent::Bump, CounterEvent::Stop] {
                assert!(counter.cmd(event).unwrap().is_empty());
            }
        }
    });
    assert_eq!(allocations, 0);
    assert_eq!(
        *counter.state(),
        Counter {
            starts: 1_000,
            stops: 1_000,
            bumps: 1_000
        }
    );
    // All or nothing still: the failing action's write is undone.
    counter.cmd(CounterEvent::Start).unwrap();
    let error = counter.cmd(CounterEvent::Fail).unwrap_err();
    assert!(error.to_string().contains("jammed"), "{error}");
    assert_eq!(counter.state().bumps, 1_000);
    assert_eq!(counter.fsm_state(), CounterState::Busy);
}
