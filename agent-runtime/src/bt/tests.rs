//! The engine's semantics, case by case after BehaviorTree.CPP's own tests (gtest_sequence,
//! gtest_reactive, gtest_fallback, gtest_parallel, gtest_decorator, gtest_wakeup): every case
//! ticks a tree of probes whose ticks and halts are counted on the blackboard.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::nodes;

const N: usize = 8;

/// The blackboard: what each probe returns next, and how often it was ticked and halted.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Board {
    script: [Option<Status>; N],
    ticks: [u32; N],
    halts: [u32; N],
    flag: bool,
}

impl Board {
    fn new() -> Self {
        Board {
            script: [Some(Status::Success); N],
            flag: true,
            ..Board::default()
        }
    }

    fn set(&mut self, probe: usize, status: Status) {
        self.script[probe] = Some(status);
    }
}

/// A leaf returning what the blackboard scripts for it, counting ticks and halts. Unlike the
/// built-in leaves it counts every halt call, so a parent halting it twice, or halting it
/// while it is not running, shows.
#[derive(Debug, Clone, Copy)]
struct Probe(usize);

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct ProbeState {
    running: bool,
}

impl Node<Board> for Probe {
    type State = ProbeState;

    fn tick(&self, state: &mut ProbeState, ctx: &mut Ctx<'_, Board>) -> Status {
        let board = ctx.state_mut();
        board.ticks[self.0] += 1;
        let status = board.script[self.0].unwrap_or(Status::Success);
        state.running = status == Status::Running;
        status
    }

    fn halt(&self, state: &mut ProbeState, ctx: &mut Ctx<'_, Board>) {
        assert!(state.running, "probe {} halted while not running", self.0);
        ctx.state_mut().halts[self.0] += 1;
        state.running = false;
    }

    fn is_running(&self, state: &ProbeState) -> bool {
        state.running
    }

    fn visit(&self, state: &ProbeState, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Custom("probe"),
            running: state.running,
        });
    }
}

fn flag() -> Condition<fn(&Board) -> bool> {
    Condition::new("flag", |b: &Board| b.flag)
}

/// A tree, its run and its blackboard, ticked at times the test chooses.
struct Harness<T: Node<Board>> {
    tree: T,
    run: TreeRun<T::State>,
    board: Board,
    now: Duration,
}

impl<T: Node<Board>> Harness<T> {
    fn new(tree: T) -> Self {
        Harness {
            tree,
            run: TreeRun::default(),
            board: Board::new(),
            now: Duration::ZERO,
        }
    }

    fn tick(&mut self) -> Status {
        self.run.tick(&self.tree, &mut self.board, self.now).status
    }

    fn tick_at(&mut self, ms: u64) -> Status {
        self.now = Duration::from_millis(ms);
        self.tick()
    }

    fn halt(&mut self) {
        self.run.halt(&self.tree, &mut self.board, self.now);
    }
}

use Status::{Failure, Running, Success};

// ---- sequence and selector: memory vs reactive re-evaluation ----

#[test]
fn sequence_remembers_the_running_child_and_does_not_retick_earlier_ones() {
    let mut h = Harness::new(Sequence::new(nodes![Probe(0), Probe(1), Probe(2)]));
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.board.ticks, [1, 2, 0, 0, 0, 0, 0, 0]);
    h.board.set(1, Success);
    assert_eq!(h.tick(), Success);
    assert_eq!(h.board.ticks, [1, 3, 1, 0, 0, 0, 0, 0]);
    // Completed: the next activation starts at child 0.
    assert_eq!(h.tick(), Success);
    assert_eq!(h.board.ticks, [2, 4, 2, 0, 0, 0, 0, 0]);
}

#[test]
fn sequence_resets_on_failure_and_restarts_at_the_first_child() {
    let mut h = Harness::new(Sequence::new(nodes![Probe(0), Probe(1), Probe(2)]));
    h.board.set(1, Running);
    h.tick();
    h.board.set(1, Failure);
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks, [1, 2, 0, 0, 0, 0, 0, 0], "child 2 never ran");
    h.board.set(1, Success);
    assert_eq!(h.tick(), Success);
    assert_eq!(h.board.ticks, [2, 3, 1, 0, 0, 0, 0, 0]);
}

#[test]
fn reactive_sequence_rechecks_its_condition_every_tick() {
    let mut h = Harness::new(ReactiveSequence::new(nodes![flag(), Probe(1)]));
    h.board.set(1, Running);
    for _ in 0..3 {
        assert_eq!(h.tick(), Running);
    }
    assert_eq!(h.board.ticks[1], 3);
    // A memory sequence would not notice: it resumes at the running action.
    let mut m = Harness::new(Sequence::new(nodes![flag(), Probe(1)]));
    m.board.set(1, Running);
    m.tick();
    m.board.flag = false;
    assert_eq!(
        m.tick(),
        Running,
        "the sequence with memory skips the condition"
    );
    assert_eq!(m.board.halts[1], 0);
}

#[test]
fn reactive_sequence_halts_the_running_action_when_its_condition_fails() {
    let mut h = Harness::new(ReactiveSequence::new(nodes![flag(), Probe(1)]));
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    h.board.flag = false;
    assert_eq!(h.tick(), Failure);
    assert_eq!(
        h.board.ticks[1], 1,
        "the action is not ticked once the condition fails"
    );
    assert_eq!(h.board.halts[1], 1, "halted exactly once");
    assert!(!h.tree.is_running(&h.run.nodes));
    h.halt();
    assert_eq!(h.board.halts[1], 1, "halting the idle tree halts nothing");
}

#[test]
fn reactive_sequence_halts_a_later_running_child_when_an_earlier_one_starts_running() {
    // BehaviorTree.CPP's "ReactiveSequence: earlier async child wakes up".
    let mut h = Harness::new(ReactiveSequence::new(nodes![Probe(0), Probe(1)]));
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    h.board.set(0, Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.board.halts, [0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(h.board.ticks, [2, 1, 0, 0, 0, 0, 0, 0]);
    // Child 0 finishes: child 1 starts again (a new activation).
    h.board.set(0, Success);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.board.ticks, [3, 2, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn selector_remembers_the_running_child() {
    let mut h = Harness::new(Selector::new(nodes![Probe(0), Probe(1), Probe(2)]));
    h.board.set(0, Failure);
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.board.ticks, [1, 2, 0, 0, 0, 0, 0, 0]);
    h.board.set(1, Failure);
    assert_eq!(h.tick(), Success, "child 2 succeeds");
    assert_eq!(h.board.ticks, [1, 3, 1, 0, 0, 0, 0, 0]);
    h.board.set(2, Failure);
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks, [2, 4, 2, 0, 0, 0, 0, 0]);
}

#[test]
fn reactive_selector_halts_a_running_fallback_when_an_earlier_child_succeeds() {
    let mut h = Harness::new(ReactiveSelector::new(nodes![Invert::new(flag()), Probe(1)]));
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running, "flag holds: fall back to the action");
    assert_eq!(h.tick(), Running);
    h.board.flag = false;
    assert_eq!(h.tick(), Success);
    assert_eq!(h.board.ticks[1], 2);
    assert_eq!(h.board.halts[1], 1);
}

// ---- parallel ----

#[test]
fn parallel_succeeds_at_the_success_threshold_and_halts_the_rest() {
    let tree = Parallel::new(2, 1, nodes![Probe(0), Probe(1), Probe(2)]);
    let mut h = Harness::new(tree);
    h.board.set(0, Running);
    h.board.set(1, Success);
    h.board.set(2, Running);
    assert_eq!(h.tick(), Running);
    // Child 1 completed: it is not ticked again in this activation.
    assert_eq!(h.tick(), Running);
    assert_eq!(h.board.ticks, [2, 1, 2, 0, 0, 0, 0, 0]);
    h.board.set(0, Success);
    assert_eq!(h.tick(), Success);
    assert_eq!(
        h.board.ticks,
        [3, 1, 2, 0, 0, 0, 0, 0],
        "decided before child 2"
    );
    assert_eq!(h.board.halts, [0, 0, 1, 0, 0, 0, 0, 0]);
    // A new activation ticks everything again.
    h.board.set(0, Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.board.ticks, [4, 2, 3, 0, 0, 0, 0, 0]);
}

#[test]
fn parallel_fails_at_the_failure_threshold_without_ticking_the_rest() {
    let tree = Parallel::new(3, 2, nodes![Probe(0), Probe(1), Probe(2), Probe(3)]);
    let mut h = Harness::new(tree);
    h.board.set(0, Running);
    h.board.set(1, Failure);
    h.board.set(2, Failure);
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks, [1, 1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(h.board.halts, [1, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn parallel_fails_as_soon_as_the_successes_are_out_of_reach() {
    // failure = 3 is never reached; after one failure, 3 successes out of 3 are impossible.
    let tree = Parallel::new(3, 3, nodes![Probe(0), Probe(1), Probe(2)]);
    let mut h = Harness::new(tree);
    h.board.set(0, Running);
    h.board.set(1, Failure);
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks, [1, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(h.board.halts, [1, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn parallel_thresholds_both_ways_with_the_default_failure_of_one() {
    let tree = Parallel::new(1, 1, nodes![Probe(0), Probe(1)]);
    let mut h = Harness::new(tree);
    h.board.set(0, Running);
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    h.board.set(1, Failure);
    assert_eq!(h.tick(), Failure, "one failure fails it");
    assert_eq!(h.board.halts, [1, 0, 0, 0, 0, 0, 0, 0]);
    h.board.set(1, Success);
    assert_eq!(h.tick(), Success, "one success succeeds it");
    assert_eq!(h.board.halts, [2, 0, 0, 0, 0, 0, 0, 0]);
}

// ---- decorators ----

#[test]
fn invert_and_force_map_completed_statuses_only() {
    for (status, invert, success, failure) in [
        (Success, Failure, Success, Failure),
        (Failure, Success, Success, Failure),
        (Running, Running, Running, Running),
    ] {
        let mut h = Harness::new(Invert::new(Probe(0)));
        h.board.set(0, status);
        assert_eq!(h.tick(), invert);
        let mut h = Harness::new(ForceSuccess::new(Probe(0)));
        h.board.set(0, status);
        assert_eq!(h.tick(), success);
        let mut h = Harness::new(ForceFailure::new(Probe(0)));
        h.board.set(0, status);
        assert_eq!(h.tick(), failure);
    }
}

#[test]
fn repeat_counts_successful_runs_within_one_tick_when_the_child_is_synchronous() {
    let mut h = Harness::new(Repeat::new(3, Probe(0)));
    assert_eq!(h.tick(), Success);
    assert_eq!(h.board.ticks[0], 3);
    // Counters reset on completion: the next activation makes three runs again.
    assert_eq!(h.tick(), Success);
    assert_eq!(h.board.ticks[0], 6);
}

#[test]
fn repeat_counts_runs_across_ticks_and_fails_on_a_failure() {
    let mut h = Harness::new(Repeat::new(2, Probe(0)));
    h.board.set(0, Running);
    assert_eq!(h.tick(), Running);
    h.board.set(0, Success);
    // One run completes; the second starts in the same tick and completes too.
    assert_eq!(h.tick(), Success);
    assert_eq!(h.board.ticks[0], 3);
    h.board.set(0, Failure);
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks[0], 4);
    assert_eq!(h.run.nodes.count, 0);
}

#[test]
fn retry_makes_n_attempts_in_total() {
    let mut h = Harness::new(Retry::new(3, Probe(0)));
    h.board.set(0, Failure);
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks[0], 3);

    let mut once = Harness::new(Retry::new(1, Probe(0)));
    once.board.set(0, Failure);
    assert_eq!(once.tick(), Failure);
    assert_eq!(once.board.ticks[0], 1, "retry(1) never retries");
}

/// Fails on its first `k` ticks, then succeeds.
#[derive(Debug, Clone, Copy)]
struct Flaky(usize, u32);

impl Node<Board> for Flaky {
    type State = ();

    fn tick(&self, _: &mut (), ctx: &mut Ctx<'_, Board>) -> Status {
        let board = ctx.state_mut();
        board.ticks[self.0] += 1;
        if board.ticks[self.0] <= self.1 {
            Failure
        } else {
            Success
        }
    }

    fn halt(&self, _: &mut (), _: &mut Ctx<'_, Board>) {
        unreachable!("never running")
    }

    fn is_running(&self, _: &()) -> bool {
        false
    }

    fn visit(&self, _: &(), _: usize, _: &mut dyn FnMut(Visit<'_>)) {}
}

#[test]
fn retry_stops_at_the_first_success() {
    let mut h = Harness::new(Retry::new(5, Flaky(0, 2)));
    assert_eq!(h.tick(), Success);
    assert_eq!(
        h.board.ticks[0], 3,
        "two failures, then the successful third attempt"
    );
    let mut h = Harness::new(Retry::new(2, Flaky(0, 2)));
    assert_eq!(h.tick(), Failure, "two attempts were not enough");
    assert_eq!(h.board.ticks[0], 2);
}

#[test]
fn retry_counts_attempts_across_ticks_and_resets_on_halt() {
    let mut h = Harness::new(Retry::new(3, Probe(0)));
    h.board.set(0, Running);
    assert_eq!(h.tick(), Running);
    h.board.set(0, Failure);
    // Attempt 1 fails; attempts 2 and 3 run (and fail) in the same tick.
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks[0], 4);

    let mut h = Harness::new(ReactiveSequence::new(nodes![
        flag(),
        Retry::new(3, Probe(1))
    ]));
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    h.board.flag = false;
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.halts[1], 1);
    assert_eq!(h.run.nodes.children.1.0.node.count, 0);
}

#[test]
fn timeout_halts_its_child_and_fails_once_the_fake_clock_reaches_the_deadline() {
    let mut h = Harness::new(Timeout::new(Duration::from_millis(100), Probe(0)));
    h.board.set(0, Running);
    assert_eq!(
        h.tick_at(1_000),
        Running,
        "the window opens at the first tick"
    );
    assert_eq!(h.tick_at(1_099), Running);
    assert_eq!(h.tick_at(1_100), Failure, ">= at the boundary");
    assert_eq!(h.board.ticks[0], 2, "not ticked on the deadline tick");
    assert_eq!(h.board.halts[0], 1);
    // Each activation opens a new window.
    assert_eq!(h.tick_at(5_000), Running);
    assert_eq!(h.tick_at(5_099), Running);
    h.board.set(0, Success);
    assert_eq!(h.tick_at(5_099), Success);
    assert_eq!(h.board.halts[0], 1);
}

#[test]
fn delay_waits_without_ticking_then_ticks_in_the_same_tick() {
    let mut h = Harness::new(Delay::new(Duration::from_millis(50), Probe(0)));
    assert_eq!(h.tick_at(10), Running);
    assert_eq!(h.tick_at(59), Running);
    assert_eq!(h.board.ticks[0], 0);
    assert_eq!(h.tick_at(60), Success);
    assert_eq!(h.board.ticks[0], 1);
    // A halted delay that had not ticked its child halts nothing below it.
    assert_eq!(h.tick_at(100), Running);
    h.halt();
    assert_eq!(h.board.halts[0], 0);
    assert_eq!(h.tick_at(200), Running, "a new activation waits again");
    assert_eq!(h.board.ticks[0], 1);
}

#[test]
fn wait_runs_on_its_first_tick_and_succeeds_once_elapsed() {
    let mut h = Harness::new(Wait::new(Duration::from_millis(30)));
    assert_eq!(h.tick_at(0), Running);
    assert_eq!(h.tick_at(29), Running);
    assert_eq!(h.tick_at(30), Success);
    let mut zero = Harness::new(Wait::new(Duration::ZERO));
    assert_eq!(zero.tick_at(0), Running, "running on its first tick");
    assert_eq!(zero.tick_at(0), Success);
}

#[test]
fn run_once_keeps_the_first_completed_status_and_ignores_halted_runs() {
    let mut h = Harness::new(ReactiveSequence::new(nodes![
        flag(),
        RunOnce::new(Probe(1))
    ]));
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    h.board.flag = false;
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.halts[1], 1);
    // The halted run does not count: the child runs again.
    h.board.flag = true;
    h.board.set(1, Failure);
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.ticks[1], 2);
    h.board.set(1, Success);
    for _ in 0..3 {
        assert_eq!(h.tick(), Failure, "the completed run's status, forever");
    }
    assert_eq!(h.board.ticks[1], 2);
}

// ---- halting ----

#[test]
fn halting_a_deep_tree_halts_every_running_leaf_exactly_once() {
    let tree = ReactiveSequence::new(nodes![
        flag(),
        Sequence::new(nodes![
            Probe(0),
            Timeout::new(
                Duration::from_secs(10),
                Parallel::new(
                    3,
                    1,
                    nodes![
                        Probe(1),
                        Repeat::new(2, Probe(2)),
                        Retry::new(2, Delay::new(Duration::ZERO, Probe(3))),
                        RunOnce::new(Invert::new(Probe(4))),
                    ]
                ),
            ),
        ]),
        Probe(5),
    ]);
    let mut h = Harness::new(tree);
    for p in 1..=4 {
        h.board.set(p, Running);
    }
    assert_eq!(h.tick(), Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(h.board.ticks, [1, 2, 2, 2, 2, 0, 0, 0]);
    h.board.flag = false;
    assert_eq!(h.tick(), Failure);
    assert_eq!(h.board.halts, [0, 1, 1, 1, 1, 0, 0, 0]);
    h.halt();
    h.halt();
    assert_eq!(h.board.halts, [0, 1, 1, 1, 1, 0, 0, 0], "nothing more");
    // Every node forgot its progress: the next activation starts from scratch.
    let fresh = Harness::new(h.tree).run.nodes;
    assert_eq!(h.run.nodes, fresh);
}

#[test]
fn halting_from_the_root_reaches_each_running_node_once() {
    let tree = Sequence::new(nodes![Parallel::new(
        2,
        1,
        nodes![Probe(0), Timeout::new(Duration::from_secs(1), Probe(1))]
    )]);
    let mut h = Harness::new(tree);
    h.board.set(0, Running);
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    h.halt();
    assert_eq!(h.board.halts, [1, 1, 0, 0, 0, 0, 0, 0]);
    assert!(!h.tree.is_running(&h.run.nodes));
}

#[test]
fn completed_children_are_not_halted() {
    let tree = ReactiveSequence::new(nodes![flag(), Probe(1), Probe(2)]);
    let mut h = Harness::new(tree);
    h.board.set(2, Running);
    assert_eq!(h.tick(), Running);
    h.board.flag = false;
    assert_eq!(h.tick(), Failure);
    // Probe 1 completed; only the running probe 2 is halted (the probe asserts otherwise).
    assert_eq!(h.board.halts, [0, 0, 1, 0, 0, 0, 0, 0]);
}

// ---- progress, checkpoints ----

#[test]
fn the_run_renders_and_round_trips_through_json() {
    let tree = ReactiveSequence::new(nodes![
        flag(),
        Timeout::new(Duration::from_secs(2), Probe(1))
    ]);
    let mut h = Harness::new(tree);
    h.board.set(1, Running);
    h.tick();
    assert_eq!(
        h.run.render(&h.tree),
        "* reactive_sequence\n    condition flag\n  * timeout(2s)\n    * probe\n"
    );
    assert_eq!(
        h.run.running_path(&h.tree),
        "reactive_sequence > timeout(2s) > probe"
    );
    let json = serde_json::to_value(&h.run).unwrap();
    let back: TreeRun<_> = serde_json::from_value(json).unwrap();
    h.run = back;
    h.board.flag = false;
    assert_eq!(h.tick(), Failure);
    assert_eq!(
        h.board.halts[1], 1,
        "the restored run knew the probe was running"
    );
}

#[test]
fn a_sequence_runs_exactly_when_its_current_child_does_whatever_its_stored_flag_says() {
    let tree = Sequence::new(nodes![
        Probe(0),
        ReactiveSelector::new(nodes![Probe(1), Probe(2)])
    ]);
    let mut h = Harness::new(tree);
    assert!(!h.tree.is_running(&h.run.nodes));
    h.board.set(1, Failure);
    h.board.set(2, Running);
    assert_eq!(h.tick(), Running);
    assert!(
        h.tree.is_running(&h.run.nodes),
        "the sequence resumes at a running child"
    );
    let json = serde_json::to_value(&h.run).unwrap();
    assert_eq!(
        json["nodes"]["running"],
        json!(false),
        "not stored with memory"
    );
    assert_eq!(
        json["nodes"]["children"][1][0]["node"]["running"],
        json!(true)
    );
    // Restored with its flag `false` over a running child: the sequence asks its child.
    h.run = serde_json::from_value(json).unwrap();
    assert_eq!(
        h.run.running_path(&h.tree),
        "sequence > reactive_selector > probe"
    );
    h.halt();
    assert_eq!(
        h.board.halts,
        [0, 0, 1, 0, 0, 0, 0, 0],
        "the running probe halted once"
    );
    assert!(!h.tree.is_running(&h.run.nodes));
    assert_eq!(h.run.running_path(&h.tree), "");
    // Stored `true` over children that do not run: still not running.
    let mut json = serde_json::to_value(&h.run).unwrap();
    json["nodes"]["running"] = json!(true);
    h.run = serde_json::from_value(json).unwrap();
    assert!(!h.tree.is_running(&h.run.nodes));
}

#[test]
fn durations_display_in_the_language_syntax() {
    let show = |ms| DisplayDuration(Duration::from_millis(ms)).to_string();
    assert_eq!(show(0), "0ms");
    assert_eq!(show(1500), "1500ms");
    assert_eq!(show(2000), "2s");
    assert_eq!(show(120_000), "2m");
    assert_eq!(show(3_600_000), "1h");
}

// ---- action leaves, with the runtime's hand-written Counter agent ----

mod actions {
    use super::*;
    use crate::ActionErrorKind;
    use crate::error::AgentError;
    use crate::testing::{Add, Counter, Explode, FetchAction};
    use crate::{Instruction, Outcome};

    fn tick<T: Node<Counter>>(
        tree: &T,
        run: &mut TreeRun<T::State>,
        counter: &mut Counter,
    ) -> TickReport {
        run.tick(tree, counter, Duration::ZERO)
    }

    #[test]
    fn a_sync_action_runs_with_its_parameters_and_commits() {
        let tree = Repeat::new(
            2,
            ActionNode::<Counter, Add>::new(Args(&[("by", Arg::Int(5))])),
        );
        let mut run = TreeRun::default();
        let mut counter = Counter::default();
        let report = tick(&tree, &mut run, &mut counter);
        assert_eq!(report.status, Success);
        assert!(report.directives.is_empty());
        assert_eq!(counter.value, 10);
    }

    #[test]
    fn a_failing_action_is_a_quiet_failure_that_changes_nothing() {
        let tree = ActionNode::<Counter, Add>::new(Args(&[("by", Arg::Int(-1))]));
        let mut run = TreeRun::default();
        let mut counter = Counter::default();
        let report = tick(&tree, &mut run, &mut counter);
        assert_eq!(report.status, Failure);
        assert!(report.directives.is_empty(), "failure is control flow");
        assert_eq!(counter, Counter::default());
    }

    #[test]
    fn bad_parameters_and_panics_fail_the_leaf_and_report_an_error() {
        fn check<T: Node<Counter>>(tree: T, kind: ActionErrorKind) {
            let mut counter = Counter::default();
            let mut run = TreeRun::default();
            let report = tick(&tree, &mut run, &mut counter);
            assert_eq!(report.status, Failure);
            let [directive] = report.directives.as_slice() else {
                panic!("{:?}", report.directives)
            };
            let Some(AgentError::Action { error, .. }) = directive.as_error() else {
                panic!("{directive:?}")
            };
            assert_eq!(error.kind(), kind);
            assert_eq!(counter, Counter::default());
        }
        check(
            ActionNode::<Counter, Add>::new(Args(&[("by", Arg::Str("x"))])),
            ActionErrorKind::InvalidParams,
        );
        check(
            ActionNode::<Counter, Explode>::new(Args::NONE),
            ActionErrorKind::Panicked,
        );
    }

    #[test]
    fn status_returning_actions_map_onto_the_tree() {
        use crate::action::IntoOutcome;
        assert!(Running.into_outcome().unwrap().in_progress);
        assert!(!Success.into_outcome().unwrap().in_progress);
        assert_eq!(
            Failure.into_outcome().unwrap_err().kind(),
            ActionErrorKind::Failed
        );
    }

    #[test]
    fn an_async_action_runs_until_its_completion_comes_back() {
        let tree = ActionNode::<Counter, FetchAction>::new(Args(&[("key", Arg::Str("bt"))]));
        let mut run = TreeRun::default();
        let mut counter = Counter::default();
        let report = tick(&tree, &mut run, &mut counter);
        assert_eq!(report.status, Running);
        let [crate::Directive::RunInstruction { instruction, .. }] = report.directives.as_slice()
        else {
            panic!("{:?}", report.directives)
        };
        assert_eq!(instruction.action, "fetch");
        assert_eq!(instruction.params, json!({"key": "bt"}));
        // Still running while nothing came back; no second start.
        assert!(tick(&tree, &mut run, &mut counter).directives.is_empty());
        assert!(!run.complete(Instruction::completed(
            &Instruction::new("fetch", json!(null)).with_id("bt-99"),
            Ok(Outcome::new())
        )));
        let done = Instruction::completed(instruction, Ok(Outcome::new().set(json!({"value": 7}))));
        assert!(run.complete(done));
        assert_eq!(tick(&tree, &mut run, &mut counter).status, Success);
        assert_eq!(counter.value, 7);
    }

    #[test]
    fn a_completion_for_a_halted_async_leaf_is_discarded() {
        let tree = ActionNode::<Counter, FetchAction>::new(Args(&[("key", Arg::Str("bt"))]));
        let mut run = TreeRun::default();
        let mut counter = Counter::default();
        let report = tick(&tree, &mut run, &mut counter);
        let crate::Directive::RunInstruction { instruction, .. } = &report.directives[0] else {
            panic!()
        };
        let instruction = instruction.clone();
        run.halt(&tree, &mut counter, Duration::ZERO);
        run.complete(Instruction::completed(
            &instruction,
            Ok(Outcome::new().set(json!({"value": 7}))),
        ));
        // The next tick starts a new run and ignores the stale result.
        let report = tick(&tree, &mut run, &mut counter);
        assert_eq!(report.status, Running);
        assert_eq!(counter.value, 0);
        assert!(run.inbox.completions.is_empty());
    }
}

// ---- recording each node's last status (what an inspector colours) ----

impl<T: Node<Board>> Harness<T> {
    /// Each node's last status and tick, in visiting order (`None`: not ticked yet).
    fn last(&self) -> Vec<Option<(Status, u64)>> {
        self.run
            .last_statuses()
            .expect("recording")
            .iter()
            .map(|n| n.map(|n| (n.status, n.tick)))
            .collect()
    }
}

#[test]
fn every_node_kind_states_the_size_visit_reports() {
    let tree = Sequence::new(nodes![
        Invert::new(Probe(0)),
        ForceSuccess::new(ForceFailure::new(Probe(1))),
        Subtree::new("inner", ReactiveSelector::new(nodes![Probe(2), flag()])),
        Repeat::new(2, Retry::new(2, Probe(3))),
        Timeout::new(Duration::from_secs(1), Delay::new(Duration::ZERO, Probe(4))),
        RunOnce::new(Wait::new(Duration::ZERO)),
        Parallel::new(1, 1, Join(nodes![Probe(5)], nodes![Probe(6), Probe(7)])),
        ReactiveSequence::new(nodes![Selector::new(nodes![flag()])]),
    ]);
    let mut count = 0;
    tree.visit(&Default::default(), 0, &mut |_| count += 1);
    assert_eq!(count, 25);
    fn size_of<N: Node<Board>>(_: &N) -> usize {
        N::SIZE
    }
    assert_eq!(size_of(&tree), 25);
    let mut run = TreeRun::default();
    assert!(run.record(&tree));
}

#[test]
fn recording_names_each_node_by_its_visiting_index_and_keeps_the_last_status() {
    // 0 sequence, 1 selector, 2 probe 0, 3 probe 1, 4 invert, 5 probe 2
    let mut h = Harness::new(Sequence::new(nodes![
        Selector::new(nodes![Probe(0), Probe(1)]),
        Invert::new(Probe(2)),
    ]));
    assert!(h.run.last_statuses().is_none(), "off until asked for");
    assert!(h.run.record(&h.tree));
    h.board.set(0, Failure);
    h.board.set(1, Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(
        h.last(),
        [
            Some((Running, 1)),
            Some((Running, 1)),
            Some((Failure, 1)),
            Some((Running, 1)),
            None,
            None
        ]
    );
    // The selector resumes at probe 1: probe 0 keeps its failure from tick 1.
    h.board.set(1, Success);
    h.board.set(2, Success);
    assert_eq!(h.tick(), Failure);
    assert_eq!(
        h.last(),
        [
            Some((Failure, 2)),
            Some((Success, 2)),
            Some((Failure, 1)),
            Some((Success, 2)),
            Some((Failure, 2)),
            Some((Success, 2))
        ]
    );
    h.run.stop_recording();
    assert!(h.run.last_statuses().is_none());
}

#[test]
fn recording_finds_children_past_a_join_and_in_parallel_and_repeated_ticks() {
    // 0 parallel, 1 probe 0, 2 repeat, 3 probe 1, 4 probe 2, 5 probe 3
    let mut h = Harness::new(Parallel::new(
        4,
        1,
        Join(
            nodes![Probe(0), Repeat::new(3, Probe(1))],
            nodes![Probe(2), Probe(3)],
        ),
    ));
    assert!(h.run.record(&h.tree));
    h.board.set(0, Running);
    h.board.set(3, Running);
    assert_eq!(h.tick(), Running);
    assert_eq!(
        h.last(),
        [
            Some((Running, 1)),
            Some((Running, 1)),
            Some((Success, 1)),
            Some((Success, 1)),
            Some((Success, 1)),
            Some((Running, 1))
        ]
    );
    assert_eq!(
        h.board.ticks[1], 3,
        "the repeat ticked its child three times"
    );
    h.board.set(3, Failure);
    assert_eq!(h.tick(), Failure);
    // Only the unfinished children were ticked again.
    assert_eq!(
        h.last(),
        [
            Some((Failure, 2)),
            Some((Running, 2)),
            Some((Success, 1)),
            Some((Success, 1)),
            Some((Success, 1)),
            Some((Failure, 2))
        ]
    );
}

#[test]
fn a_custom_node_that_misstates_its_size_is_not_recorded() {
    /// Visits two nodes but keeps the default size of one.
    struct Pair;
    impl Node<Board> for Pair {
        type State = ();
        fn tick(&self, _: &mut (), _: &mut Ctx<'_, Board>) -> Status {
            Success
        }
        fn halt(&self, _: &mut (), _: &mut Ctx<'_, Board>) {}
        fn is_running(&self, _: &()) -> bool {
            false
        }
        fn visit(&self, _: &(), depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
            for depth in [depth, depth + 1] {
                f(Visit {
                    depth,
                    kind: NodeKind::Custom("pair"),
                    running: false,
                });
            }
        }
    }
    let tree = Sequence::new(nodes![Pair, Probe(0)]);
    let mut run = TreeRun::default();
    assert!(!run.record(&tree));
    assert!(run.last_statuses().is_none());
}
