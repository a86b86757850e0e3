//! Statecharts with parallel regions and completion, end to end: every region entered in
//! document order, one event firing a row in each region in one microstep, a region's final
//! state and the parallel state's `done`, conflicts between a region's row and its parent's,
//! history over regions, completion on entry. Each test pins one SCXML rule with a machine of
//! our own (the ideas of the SCXML 1.0 test suite's parallel and `done.state` tests).

use std::time::Duration;

use stratagem::prelude::*;
use stratagem::{AgentError, FsmSpec};

/// A washer-dryer: `Running` runs the `Wash` and `Dry` regions side by side and completes
/// when both reach their final state.
#[agent(
    strategy = Fsm,
    transitions {
        initial Off
        terminal Finished
        enter Running do enter_running
        exit Running do exit_running
        enter Wash do enter_wash
        exit Wash do exit_wash
        enter Filling do enter_filling
        exit Filling do exit_filling
        enter Washing do enter_washing
        exit Washing do exit_washing
        enter Rinsed do enter_rinsed
        enter Dry do enter_dry
        exit Dry do exit_dry
        enter Cold do enter_cold
        exit Cold do exit_cold
        enter Warm do enter_warm
        exit Warm do exit_warm
        enter Dried do enter_dried
        Off -> Running on start
        Off -> Resume on resume
        Off -> Warm on preheat
        state Cycle {
            initial Running
            history deep Resume
            Cycle -> Off on stop
            Paused -> Finished when done
            parallel Running {
                Running -> Off on halt do halted
                Running -> Paused when done
                state Wash {
                    initial Filling
                    Filling -> Washing on next do fill_done
                    Filling -> Drained on halt
                    Washing -> Rinsed on next
                    Washing on tick do count
                    final Rinsed
                    Drained -> Filling on refill
                }
                state Dry {
                    initial Cold
                    Cold -> Warm on next do cold_done
                    Warm -> Dried on heat if hot
                    Warm -> Dried after 5s
                    final Dried
                }
            }
            state Paused {
                initial Holding
                Holding -> Done on confirm
                final Done
            }
        }
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Washer {
    hot: bool,
    ticks: u32,
    fail_warm: bool,
    log: Vec<String>,
}

macro_rules! loggers {
    ($($name:ident => $line:literal),* $(,)?) => {
        $(
            #[action]
            fn $name(washer: &mut Washer) {
                washer.log.push($line.into());
            }
        )*
    };
}

loggers! {
    enter_running => "enter Running", exit_running => "exit Running",
    enter_wash => "enter Wash", exit_wash => "exit Wash",
    enter_filling => "enter Filling", exit_filling => "exit Filling",
    enter_washing => "enter Washing", exit_washing => "exit Washing",
    enter_rinsed => "enter Rinsed",
    enter_dry => "enter Dry", exit_dry => "exit Dry",
    enter_cold => "enter Cold", exit_cold => "exit Cold",
    exit_warm => "exit Warm",
    enter_dried => "enter Dried",
    fill_done => "fill done", cold_done => "cold done", halted => "halted",
}

#[action]
fn enter_warm(washer: &mut Washer) -> Result<(), ActionError> {
    if washer.fail_warm {
        return Err(ActionError::new("heater broken"));
    }
    washer.log.push("enter Warm".into());
    Ok(())
}

#[action]
fn count(washer: &mut Washer) {
    washer.ticks += 1;
}

fn hot(washer: &Washer) -> bool {
    washer.hot
}

use WasherEvent as E;
use WasherState as S;

/// A washer driven through `events`, its log cleared.
fn at(events: &[WasherEvent]) -> Agent<Washer> {
    let mut washer = Washer::new();
    washer.init();
    for &event in events {
        washer.cmd(event).unwrap();
    }
    washer.state_mut().log.clear();
    washer
}

fn log(washer: &Agent<Washer>) -> Vec<&str> {
    washer.state().log.iter().map(String::as_str).collect()
}

#[test]
fn entering_a_parallel_state_enters_every_region_in_document_order() {
    let mut washer = at(&[]);
    washer.cmd(E::Start).unwrap();
    assert_eq!(
        log(&washer),
        [
            "enter Running",
            "enter Wash",
            "enter Filling",
            "enter Dry",
            "enter Cold"
        ]
    );
    assert_eq!(washer.fsm_leaves(), [S::Filling, S::Cold]);
    assert_eq!(washer.fsm_state(), S::Filling, "the first active leaf");
    for state in [S::Cycle, S::Running, S::Wash, S::Dry, S::Filling, S::Cold] {
        assert!(washer.in_state(state), "{state} is active");
    }
    assert!(!washer.in_state(S::Warm));
    assert_eq!(
        washer.snapshot().details["active"],
        serde_json::json!(["Cycle", "Running", "Wash", "Filling", "Dry", "Cold"])
    );
}

#[test]
fn one_event_fires_a_row_in_each_region_in_one_microstep() {
    let mut washer = at(&[E::Start]);
    washer.cmd(E::Next).unwrap();
    assert_eq!(
        log(&washer),
        [
            "exit Cold",
            "exit Filling",
            "fill done",
            "cold done",
            "enter Washing",
            "enter Warm"
        ],
        "every exit (reverse document order), then the actions, then every entry"
    );
    assert_eq!(washer.fsm_leaves(), [S::Washing, S::Warm]);
}

#[test]
fn a_region_without_a_row_for_the_event_stays_where_it_is() {
    let mut washer = at(&[E::Start, E::Next]);
    washer.state_mut().hot = true;
    washer.cmd(E::Heat).unwrap();
    assert_eq!(washer.fsm_leaves(), [S::Washing, S::Dried]);
    // An internal row in one region runs only its action.
    washer.cmd(E::Tick).unwrap();
    assert_eq!(washer.state().ticks, 1);
    assert_eq!(washer.fsm_leaves(), [S::Washing, S::Dried]);
}

#[test]
fn a_row_of_an_ancestor_leaves_every_region_inward_out() {
    let mut washer = at(&[E::Start, E::Next]);
    washer.cmd(E::Stop).unwrap();
    assert_eq!(
        log(&washer),
        [
            "exit Warm",
            "exit Dry",
            "exit Washing",
            "exit Wash",
            "exit Running"
        ]
    );
    assert_eq!(washer.fsm_leaves(), [S::Off]);
    assert!(!washer.in_state(S::Cycle));
}

#[test]
fn a_region_row_preempts_the_parallel_state_row_it_conflicts_with() {
    // `halt`: Filling has its own row; Cold only the parent's, whose exit set holds Filling.
    // SCXML keeps the row of the deeper source.
    let mut washer = at(&[E::Start]);
    washer.cmd(E::Halt).unwrap();
    assert_eq!(washer.fsm_leaves(), [S::Drained, S::Cold]);
    assert!(!log(&washer).contains(&"halted"));
    // Once Wash has no row of its own, the parent's row fires (once, though both leaves
    // chose it).
    washer.state_mut().log.clear();
    washer.cmd(E::Halt).unwrap();
    assert_eq!(washer.fsm_leaves(), [S::Off]);
    assert_eq!(log(&washer).iter().filter(|l| **l == "halted").count(), 1);
}

#[test]
fn a_region_final_state_completes_the_region_and_all_of_them_the_parallel_state() {
    let mut washer = at(&[E::Start, E::Next, E::Next]);
    assert_eq!(
        washer.fsm_leaves(),
        [S::Rinsed, S::Warm],
        "Wash is final, Dry is not: Running has not completed"
    );
    washer.state_mut().hot = true;
    washer.cmd(E::Heat).unwrap();
    // Dry is final too: Running's `when done` row fires before `cmd` returns.
    assert_eq!(washer.fsm_leaves(), [S::Holding]);
    assert_eq!(
        log(&washer),
        [
            "exit Warm",
            "enter Dried",
            "exit Dry",
            "exit Wash",
            "exit Running"
        ]
    );
    // A compound state's final child completes it: Paused's `when done` ends the machine.
    washer.cmd(E::Confirm).unwrap();
    assert_eq!(washer.fsm_state(), S::Finished);
    assert_eq!(washer.snapshot().status, Status::Success);
}

#[test]
fn entering_a_state_inside_a_region_enters_the_other_regions_by_default() {
    let mut washer = at(&[]);
    washer.cmd(E::Preheat).unwrap();
    assert_eq!(washer.fsm_leaves(), [S::Filling, S::Warm]);
    assert_eq!(
        log(&washer),
        [
            "enter Running",
            "enter Wash",
            "enter Filling",
            "enter Dry",
            "enter Warm"
        ]
    );
}

#[test]
fn deep_history_resumes_every_region() {
    let mut washer = at(&[E::Start, E::Next, E::Stop]);
    washer.cmd(E::Resume).unwrap();
    assert_eq!(washer.fsm_leaves(), [S::Washing, S::Warm]);
    // Before Cycle was ever left: its initial, entered by default.
    let mut washer = at(&[]);
    washer.cmd(E::Resume).unwrap();
    assert_eq!(washer.fsm_leaves(), [S::Filling, S::Cold]);
}

#[test]
fn a_timer_in_one_region_fires_there_only() {
    let mut washer = at(&[E::Start]);
    let armed = washer.cmd(E::Next).unwrap();
    let Some(Directive::Schedule { delay, signal }) = armed
        .into_iter()
        .find(|d| matches!(d, Directive::Schedule { .. }))
    else {
        panic!("Warm arms its timer")
    };
    assert_eq!(delay, Duration::from_secs(5));
    washer.cmd(E::Tick).unwrap();
    washer.handle_signal(&signal);
    assert_eq!(washer.fsm_leaves(), [S::Washing, S::Dried]);
    // Fired once: the same signal again is stale.
    washer.handle_signal(&signal);
    assert_eq!(washer.fsm_leaves(), [S::Washing, S::Dried]);
}

#[test]
fn a_failing_action_in_one_region_leaves_every_region_unchanged() {
    let mut washer = at(&[E::Start]);
    washer.state_mut().fail_warm = true;
    let before = serde_json::to_value(&washer).unwrap();
    let error = washer.cmd(E::Next).unwrap_err();
    assert!(
        matches!(AgentError::from(error), AgentError::Action { .. }),
        "the entry action's error"
    );
    assert_eq!(serde_json::to_value(&washer).unwrap(), before);
    assert_eq!(washer.fsm_leaves(), [S::Filling, S::Cold]);
}

#[test]
fn an_event_no_region_accepts_is_refused() {
    let mut washer = at(&[E::Start]);
    assert!(matches!(
        AgentError::from(washer.cmd(E::Confirm).unwrap_err()),
        AgentError::InvalidTransition { .. }
    ));
    // A guard that holds nowhere: rejected.
    let mut washer = at(&[E::Start, E::Next]);
    assert!(matches!(
        AgentError::from(washer.cmd(E::Heat).unwrap_err()),
        AgentError::GuardRejected { .. }
    ));
}

#[test]
fn the_configuration_of_every_region_survives_a_checkpoint() {
    let washer = at(&[E::Start, E::Next]);
    let json = serde_json::to_value(&washer).unwrap();
    let mut restored: Agent<Washer> = serde_json::from_value(json).unwrap();
    assert_eq!(restored.fsm_leaves(), [S::Washing, S::Warm]);
    restored.state_mut().hot = true;
    restored.cmd(E::Heat).unwrap();
    assert_eq!(restored.fsm_leaves(), [S::Washing, S::Dried]);
    let mut left = at(&[E::Start, E::Next, E::Stop]);
    let mut restored: Agent<Washer> =
        serde_json::from_value(serde_json::to_value(&left).unwrap()).unwrap();
    restored.cmd(E::Resume).unwrap();
    left.cmd(E::Resume).unwrap();
    assert_eq!(restored.fsm_leaves(), left.fsm_leaves(), "history kept");
}

#[test]
fn the_generated_tables_describe_the_regions() {
    const { assert!(<Washer as FsmSpec>::PARALLEL) };
    assert!(<Washer as FsmSpec>::parallel(S::Running));
    assert_eq!(<Washer as FsmSpec>::children(S::Running), [S::Wash, S::Dry]);
    assert!(<Washer as FsmSpec>::is_final(S::Dried));
    assert!(S::MERMAID.contains("    --\n"), "{}", S::MERMAID);
    assert!(S::MERMAID.contains("Rinsed --> [*]"), "{}", S::MERMAID);
    assert!(S::DOT.contains("style=dashed"), "{}", S::DOT);
}

/// A compound state whose initial child is final completes as soon as it is entered.
#[agent(
    strategy = Fsm,
    transitions {
        initial Idle
        Idle -> Check on go
        Idle -> Idle on again
        state Check {
            initial Passed
            final Passed
        }
        Check -> Idle when done do noted
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Probe {
    done: u32,
}

#[action]
fn noted(probe: &mut Probe) {
    probe.done += 1;
}

#[test]
fn completion_on_entry_runs_its_done_row_before_cmd_returns() {
    let mut probe = Probe::new();
    probe.init();
    probe.cmd(ProbeEvent::Go).unwrap();
    assert_eq!(probe.fsm_state(), ProbeState::Idle);
    assert_eq!(probe.state().done, 1);
    probe.cmd(ProbeEvent::Go).unwrap();
    assert_eq!(probe.state().done, 2);
}

/// `done` at every level (SCXML's `done.state.id`): a final state completes its compound
/// state, every region final completes the parallel state, and each completion is an event
/// that the completed state's `when done` row answers, which may complete the next level up.
#[agent(
    strategy = Fsm,
    transitions {
        initial Job
        terminal Archived
        enter Filed do note_filed
        enter Closed do note_closed
        enter Archived do note_archived
        state Job {
            initial Work
            final Closed
            Work -> Closed when done
            parallel Work {
                state Print {
                    initial Queued
                    Queued -> Printed on print
                    final Printed
                }
                state Review {
                    initial Unread
                    Unread -> Reading on open
                    state Reading {
                        initial Page
                        Page -> Signed on sign
                        final Signed
                    }
                    Reading -> Filed when done
                    final Filed
                }
            }
        }
        Job -> Archived when done
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Job {
    log: Vec<String>,
}

#[action]
fn note_filed(job: &mut Job) {
    job.log.push("enter Filed".into());
}

#[action]
fn note_closed(job: &mut Job) {
    job.log.push("enter Closed".into());
}

#[action]
fn note_archived(job: &mut Job) {
    job.log.push("enter Archived".into());
}

#[test]
fn one_final_region_does_not_complete_the_parallel_state() {
    let mut job = Job::new();
    job.init();
    job.cmd(JobEvent::Print).unwrap();
    assert_eq!(job.fsm_leaves(), [JobState::Printed, JobState::Unread]);
    assert!(job.state().log.is_empty(), "Work has not completed");
}

#[test]
fn done_propagates_level_by_level_through_done_rows() {
    let mut job = Job::new();
    job.init();
    job.cmd(JobEvent::Print).unwrap();
    job.cmd(JobEvent::Open).unwrap();
    assert_eq!(job.fsm_leaves(), [JobState::Printed, JobState::Page]);
    // Signed is final: Reading completes, its row enters Filed, final in Review, so Review
    // completes and, Print being final too, Work; Work's row enters Closed, final in Job, so
    // Job completes and its row archives it. One event, five completions.
    job.cmd(JobEvent::Sign).unwrap();
    assert_eq!(job.fsm_leaves(), [JobState::Archived]);
    assert_eq!(
        job.state().log,
        ["enter Filed", "enter Closed", "enter Archived"]
    );
    assert_eq!(job.snapshot().status, Status::Success);
}

#[test]
fn the_parallel_state_completes_whichever_region_finishes_last() {
    let mut job = Job::new();
    job.init();
    job.cmd(JobEvent::Open).unwrap();
    job.cmd(JobEvent::Sign).unwrap();
    // Review completed first: Work waits for Print.
    assert_eq!(job.fsm_leaves(), [JobState::Queued, JobState::Filed]);
    assert_eq!(job.state().log, ["enter Filed"]);
    job.cmd(JobEvent::Print).unwrap();
    assert_eq!(job.fsm_leaves(), [JobState::Archived]);
}

/// A final state completes its parent only, not the states above it (SCXML raises
/// `done.state` for the parent, and for a parallel grandparent whose regions are all final).
#[agent(
    strategy = Fsm,
    transitions {
        initial Outer
        terminal Finished
        state Outer {
            initial Mid
            final Left
            state Mid {
                initial M1
                M1 -> M2 on go
                final M2
            }
            Mid -> Left on leave
        }
        Outer -> Finished when done
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Nest {}

#[test]
fn a_nested_final_state_completes_its_parent_only() {
    let mut nest = Nest::new();
    nest.init();
    nest.cmd(NestEvent::Go).unwrap();
    // Mid completed (it has no `when done` row); Outer did not: its own child is not final.
    assert_eq!(nest.fsm_leaves(), [NestState::M2]);
    assert!(nest.in_state(NestState::Outer));
    // Mid's row enters Left, Outer's final child: now Outer completes.
    nest.cmd(NestEvent::Leave).unwrap();
    assert_eq!(nest.fsm_state(), NestState::Finished);
}

/// Two regions final in one microstep: SCXML raises `done.state` for each region (in
/// document order) before the parallel state's, once.
#[agent(
    strategy = Fsm,
    transitions {
        initial Split
        terminal Joined
        terminal Aborted
        parallel Split {
            Split -> Joined when done do joined
            B -> Aborted when done do b_done
            state A {
                initial A1
                A1 -> AF on finish
                final AF
            }
            state B {
                initial B1
                B1 -> BF on finish
                final BF
            }
        }
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Split {
    log: Vec<String>,
}

#[action]
fn joined(split: &mut Split) {
    split.log.push("joined".into());
}

#[action]
fn b_done(split: &mut Split) {
    split.log.push("b done".into());
}

#[test]
fn regions_complete_before_their_parallel_state() {
    let mut split = Split::new();
    split.init();
    split.cmd(SplitEvent::Finish).unwrap();
    // B's `when done` row runs first and leaves Split: Split's own completion finds it
    // inactive and is dropped.
    assert_eq!(split.fsm_leaves(), [SplitState::Aborted]);
    assert_eq!(split.state().log, ["b done"]);
}
