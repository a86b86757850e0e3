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
