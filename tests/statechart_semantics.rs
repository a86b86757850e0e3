//! Statecharts end to end: compound states, parent rows, local and external transitions, a
//! parent's timer, shallow and deep history. Each test pins one SCXML rule (the ideas of the
//! SCXML 1.0 test suite, written as Rust machines of our own).

use std::time::Duration;

use stratagem::prelude::*;
use stratagem::{AgentError, FsmSpec};

/// A media player: `On` holds `Stopped` and `Active`, which holds `Playing` and `Paused`.
#[agent(
    strategy = Fsm,
    transitions {
        initial Off
        terminal Broken as failure
        enter Off do enter_off
        exit Off do exit_off
        enter On do enter_on
        exit On do exit_on
        enter Stopped do enter_stopped
        exit Stopped do exit_stopped
        enter Active do enter_active
        exit Active do exit_active
        enter Playing do enter_playing
        exit Playing do exit_playing
        enter Paused do enter_paused
        exit Paused do exit_paused
        Off -> On on power
        Off -> Resume on resume
        Off -> Last on resume_shallow
        state On {
            initial Stopped
            history deep Resume
            history Last -> Stopped
            On -> Off on power do power_down
            On -> Broken on smash
            On -> Off after 30m
            On -> local Stopped on reset
            On -> Stopped on restart
            Stopped -> Active on play
            state Active {
                initial Playing
                Playing -> Paused on pause
                Playing on tick do count
                Playing -> Stopped on power if locked
                Paused -> Playing on play
                Active -> Stopped on stop
            }
        }
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Player {
    locked: bool,
    ticks: u32,
    log: Vec<String>,
}

macro_rules! loggers {
    ($($name:ident => $line:literal),* $(,)?) => {
        $(
            #[action]
            fn $name(player: &mut Player) {
                player.log.push($line.into());
            }
        )*
    };
}

loggers! {
    enter_off => "enter Off", exit_off => "exit Off",
    enter_on => "enter On", exit_on => "exit On",
    enter_stopped => "enter Stopped", exit_stopped => "exit Stopped",
    enter_active => "enter Active", exit_active => "exit Active",
    enter_playing => "enter Playing", exit_playing => "exit Playing",
    enter_paused => "enter Paused", exit_paused => "exit Paused",
    power_down => "power down",
}

#[action]
fn count(player: &mut Player) {
    player.ticks += 1;
}

fn locked(player: &Player) -> bool {
    player.locked
}

use PlayerEvent as E;
use PlayerState as S;

/// A player driven through `events`, its log cleared.
fn at(events: &[PlayerEvent]) -> Agent<Player> {
    let mut player = Player::new();
    player.init();
    for &event in events {
        player.cmd(event).unwrap();
    }
    player.state_mut().log.clear();
    player
}

fn log(player: &Agent<Player>) -> Vec<&str> {
    player.state().log.iter().map(String::as_str).collect()
}

fn timers(directives: &[Directive]) -> Vec<serde_json::Value> {
    directives
        .iter()
        .filter_map(|d| match d {
            Directive::Schedule { signal, .. } => Some(signal.data.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn entering_a_compound_state_enters_its_initial_child_outermost_first() {
    let mut player = at(&[]);
    player.cmd(E::Power).unwrap();
    assert_eq!(log(&player), ["exit Off", "enter On", "enter Stopped"]);
    assert_eq!(player.fsm_state(), S::Stopped);
    assert!(player.in_state(S::On));
    assert!(player.fsm_state().in_state(S::On));
    assert!(!player.in_state(S::Active));
    assert_eq!(S::Playing.parent(), Some(S::Active));
    assert_eq!(S::On.parent(), None);

    player.state_mut().log.clear();
    player.cmd(E::Play).unwrap();
    assert_eq!(
        log(&player),
        ["exit Stopped", "enter Active", "enter Playing"]
    );
    assert!(player.in_state(S::Active) && player.in_state(S::On));
    let snapshot = player.snapshot();
    assert_eq!(snapshot.details["state"], "Playing");
    assert_eq!(
        snapshot.details["active"],
        serde_json::json!(["On", "Active", "Playing"]),
        "the configuration, outermost first"
    );
}

#[test]
fn the_initial_configuration_is_entered_from_the_top() {
    // Off is a top-level leaf: only its own entry runs.
    let mut player = Player::new();
    player.init();
    assert_eq!(log(&player), ["enter Off"]);
}

#[test]
fn a_parent_row_applies_in_every_descendant_and_exits_inward_out() {
    let mut player = at(&[E::Power, E::Play, E::Pause]);
    player.cmd(E::Power).unwrap();
    assert_eq!(
        log(&player),
        [
            "exit Paused",
            "exit Active",
            "exit On",
            "power down",
            "enter Off"
        ],
        "exits innermost first, then the row's action, then the entry"
    );
    assert_eq!(player.fsm_state(), S::Off);
}

#[test]
fn the_innermost_row_wins_and_a_parent_row_is_tried_when_its_guards_fail() {
    let mut player = at(&[E::Power, E::Play]);
    player.state_mut().locked = true;
    player.cmd(E::Power).unwrap();
    assert_eq!(player.fsm_state(), S::Stopped, "Playing's own `power` row");
    assert_eq!(
        log(&player),
        ["exit Playing", "exit Active", "enter Stopped"]
    );

    let mut player = at(&[E::Power, E::Play]);
    player.cmd(E::Power).unwrap();
    assert_eq!(player.fsm_state(), S::Off, "guard false: On's `power` row");
}

#[test]
fn a_transition_inside_a_compound_state_leaves_only_below_the_common_ancestor() {
    let mut player = at(&[E::Power, E::Play, E::Pause]);
    player.cmd(E::Play).unwrap();
    assert_eq!(log(&player), ["exit Paused", "enter Playing"]);

    let mut player = at(&[E::Power, E::Play, E::Pause]);
    player.cmd(E::Stop).unwrap();
    assert_eq!(
        log(&player),
        ["exit Paused", "exit Active", "enter Stopped"]
    );
}

#[test]
fn local_rows_keep_their_source_and_external_rows_leave_it() {
    let mut player = at(&[E::Power, E::Play]);
    player.cmd(E::Reset).unwrap();
    assert_eq!(
        log(&player),
        ["exit Playing", "exit Active", "enter Stopped"],
        "`On -> local Stopped`: On is neither left nor entered"
    );

    let mut player = at(&[E::Power, E::Play]);
    player.cmd(E::Restart).unwrap();
    assert_eq!(
        log(&player),
        [
            "exit Playing",
            "exit Active",
            "exit On",
            "enter On",
            "enter Stopped"
        ],
        "`On -> Stopped` is external: On is left and entered again"
    );
}

#[test]
fn internal_rows_of_a_substate_run_only_their_action() {
    let mut player = at(&[E::Power, E::Play]);
    player.cmd(E::Tick).unwrap();
    assert!(log(&player).is_empty());
    assert_eq!(player.state().ticks, 1);
    assert_eq!(player.fsm_state(), S::Playing);
}

#[test]
fn events_of_ancestors_are_accepted_and_others_refused_naming_the_leaf() {
    let mut player = at(&[E::Power]);
    let error = AgentError::from(player.cmd(E::Pause).unwrap_err());
    match error {
        AgentError::InvalidTransition {
            state, accepted, ..
        } => {
            assert_eq!(state, "Stopped");
            let accepted: Vec<&str> = accepted.iter().map(|n| n.as_ref()).collect();
            assert_eq!(accepted, ["power", "smash", "reset", "restart", "play"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(<Player as FsmSpec>::accepted(S::Playing).len() > 5);
}

#[test]
fn a_parent_timer_runs_while_any_descendant_is_active() {
    let mut player = at(&[]);
    let armed = player.cmd(E::Power).unwrap();
    let data = timers(&armed);
    assert_eq!(data.len(), 1, "On has an `after` row, Stopped none");
    assert_eq!(data[0]["state"], "On");
    let signal = match armed
        .iter()
        .find(|d| matches!(d, Directive::Schedule { .. }))
    {
        Some(Directive::Schedule { delay, signal }) => {
            assert_eq!(*delay, Duration::from_secs(30 * 60));
            signal.clone()
        }
        _ => unreachable!(),
    };
    // Moving inside On keeps its timer.
    player.cmd(E::Play).unwrap();
    player.cmd(E::Pause).unwrap();
    player.handle_signal(&signal);
    assert_eq!(
        player.fsm_state(),
        S::Off,
        "the timer of On fired from Paused"
    );

    // Leaving On makes it stale, even once On is entered again.
    player.cmd(E::Power).unwrap();
    player.handle_signal(&signal);
    assert_eq!(player.fsm_state(), S::Stopped);
}

#[test]
fn an_external_row_out_of_and_into_a_parent_rearms_its_timer() {
    let mut player = at(&[]);
    let first = timers(&player.cmd(E::Power).unwrap());
    let again = timers(&player.cmd(E::Restart).unwrap());
    assert_eq!(again.len(), 1);
    assert_ne!(first[0]["generation"], again[0]["generation"]);
    // `reset` is local: On stays, its timer is not re-armed.
    assert!(timers(&player.cmd(E::Reset).unwrap()).is_empty());
}

#[test]
fn deep_history_resumes_the_leaf_the_compound_state_was_left_from() {
    // Before On was ever left, the history's default is On's initial child.
    let mut player = at(&[]);
    player.cmd(E::Resume).unwrap();
    assert_eq!(player.fsm_state(), S::Stopped);

    let mut player = at(&[E::Power, E::Play, E::Pause, E::Power]);
    player.cmd(E::Resume).unwrap();
    assert_eq!(player.fsm_state(), S::Paused);
    assert_eq!(
        log(&player),
        ["exit Off", "enter On", "enter Active", "enter Paused"]
    );
}

#[test]
fn shallow_history_resumes_the_child_and_enters_it_by_default() {
    let mut player = at(&[E::Power, E::Play, E::Pause, E::Power]);
    player.cmd(E::ResumeShallow).unwrap();
    assert_eq!(player.fsm_state(), S::Playing, "Active, entered by default");

    // Its declared default before any record.
    let mut player = at(&[]);
    player.cmd(E::ResumeShallow).unwrap();
    assert_eq!(player.fsm_state(), S::Stopped);
}

#[test]
fn the_configuration_and_history_survive_a_checkpoint() {
    let player = at(&[E::Power, E::Play, E::Pause, E::Power]);
    let json = serde_json::to_value(&player).unwrap();
    let mut restored: Agent<Player> = serde_json::from_value(json).unwrap();
    restored.cmd(E::Resume).unwrap();
    assert_eq!(restored.fsm_state(), S::Paused);
    // A parent timer armed before the checkpoint still fires after it.
    let mut player = at(&[]);
    let armed = player.cmd(E::Power).unwrap();
    let Some(Directive::Schedule { signal, .. }) = armed.into_iter().next() else {
        panic!("no timer")
    };
    player.cmd(E::Play).unwrap();
    let mut restored: Agent<Player> =
        serde_json::from_value(serde_json::to_value(&player).unwrap()).unwrap();
    restored.handle_signal(&signal);
    assert_eq!(restored.fsm_state(), S::Off);
}

#[test]
fn a_parent_row_to_a_terminal_state_ends_the_machine() {
    let mut player = at(&[E::Power, E::Play]);
    player.cmd(E::Smash).unwrap();
    assert_eq!(player.fsm_state(), S::Broken);
    assert_eq!(player.snapshot().status, Status::Failure);
    assert!(!player.in_state(S::On));
    let before = serde_json::to_value(&player).unwrap();
    assert!(
        player.cmd(E::Power).is_err(),
        "no event leaves a terminal state"
    );
    assert_eq!(serde_json::to_value(&player).unwrap(), before);
}

/// Starts in `Inner`, inside `Outer`: neither does anything on entry, so a command does not
/// test whether they were entered (`FsmSpec::QUIET_START`).
#[agent(
    strategy = Fsm,
    transitions {
        initial Outer
        enter Other do enter_other
        exit Inner do exit_inner
        state Outer {
            initial Inner
            Inner -> Other on go
        }
        Other -> Outer on back
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Quiet {
    log: Vec<String>,
}

#[action]
fn enter_other(quiet: &mut Quiet) {
    quiet.log.push("enter Other".into());
}

#[action]
fn exit_inner(quiet: &mut Quiet) {
    quiet.log.push("exit Inner".into());
}

/// The same start, but entering `Outer` logs.
#[agent(
    strategy = Fsm,
    transitions {
        initial Outer
        enter Outer do enter_outer
        state Outer {
            initial Inner
            Inner -> Other on go
        }
        Other -> Outer on back
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Loud {
    log: Vec<String>,
}

#[action]
fn enter_outer(loud: &mut Loud) {
    loud.log.push("enter Outer".into());
}

#[test]
fn a_first_command_enters_the_initial_configuration_first_only_when_that_does_something() {
    assert_eq!(
        [Quiet::QUIET_START, Loud::QUIET_START],
        [true, false],
        "only `Loud` enters something first"
    );
    let mut quiet = Quiet::new();
    let before = serde_json::to_value(&quiet).unwrap();
    assert!(quiet.cmd(QuietEvent::Back).is_err());
    assert_eq!(
        serde_json::to_value(&quiet).unwrap(),
        before,
        "a refused first event changes nothing"
    );
    assert_eq!(quiet.snapshot().status, Status::Idle);
    quiet.cmd(QuietEvent::Go).unwrap();
    assert_eq!(quiet.state().log, ["exit Inner", "enter Other"]);
    assert_eq!(quiet.fsm_state(), QuietState::Other);
    assert_eq!(quiet.snapshot().status, Status::Waiting);
    quiet.cmd(QuietEvent::Back).unwrap();
    assert_eq!(quiet.fsm_state(), QuietState::Inner);

    let mut loud = Loud::new();
    assert!(loud.cmd(LoudEvent::Back).is_err());
    assert!(
        loud.state().log.is_empty(),
        "a refused first event enters nothing"
    );
    loud.cmd(LoudEvent::Go).unwrap();
    assert_eq!(loud.state().log, ["enter Outer"]);
    assert_eq!(loud.fsm_state(), LoudState::Other);
    loud.cmd(LoudEvent::Back).unwrap();
    assert_eq!(loud.state().log, ["enter Outer", "enter Outer"]);
}
