//! `BehaviorTree`: an agent driven by a behaviour tree over its typed state.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{
    Dispatch, RESTART_SIGNAL, Strategy, complete_action, dispatch_action_of, restart_route,
    resume_instruction, resume_route,
};
use crate::agent::{Agent, AgentSpec};
use crate::bt::{Clock, HostClock, Node, NodeState, Status as TreeStatus, TreeRun, TreeVisitor};
use crate::directive::Directive;
use crate::error::{AgentError, ErrorContext};
use crate::inspect::{Progress, Shape, TreeNode};
use crate::instruction::Instruction;
use crate::interrupt::{InterruptError, PendingInterrupt, RESUME_SIGNAL};
use crate::route::RouteSpec;
use crate::snapshot::{Snapshot, Status};
use crate::trace;

/// An agent run by a behaviour tree: implemented by `#[agent(strategy = BehaviorTree, tree = ..)]`
/// (or by hand) next to [`AgentSpec`].
pub trait TreeAgent: AgentSpec {
    /// The progress of the agent's tree (kept in the agent, checkpointed with it).
    type Nodes: NodeState;

    /// Hands the tree to `visitor`. Generated agents build it from constants, so this costs
    /// nothing; the tree's concrete type never needs a name.
    fn with_tree<V: TreeVisitor<Self, Self::Nodes>>(visitor: V) -> V::Output;

    /// The action called `name` among the tree's leaves (generated): hosts run the async
    /// actions a tree starts through it, so they need not be listed in `actions`.
    fn tree_action(name: &str) -> Option<&'static crate::action::ActionEntry<Self>> {
        let _ = name;
        None
    }

    /// Whether `value` is an answer of the type the tree's `ask interrupt` leaves expect
    /// (generated): `None` when no leaf asks `interrupt`. `resume` checks an answer with it
    /// before the tree sees it.
    fn check_answer(
        interrupt: &str,
        value: &serde_json::Value,
    ) -> Option<Result<(), crate::error::ActionError>> {
        let _ = (interrupt, value);
        None
    }

    /// The time of a tick. The default is the host's clock ([`HostClock`]), which follows
    /// tokio's paused clock in tests; override it to drive time by hand. A tick reads it only
    /// when a node asks for the time (a `timeout`, `delay` or `wait`), at most once.
    fn now() -> Duration {
        HostClock.now()
    }
}

/// Ticks the agent's behaviour tree.
///
/// Each `tick` advances the tree once; while it returns `Running` the snapshot is `Running`, so
/// the host ticks it again after the agent's interval (`tick = 100ms`). `Success` or `Failure`
/// ends the run: the snapshot is done, its result is the final status, and later ticks do
/// nothing. Before the first tick the snapshot is `Running` too, which makes a host start the
/// tree on its own.
///
/// `cmd` runs instructions routed to the agent's actions as [`Direct`](super::Direct) does (they
/// change the blackboard the tree reads), and takes the completions of async actions the tree
/// started, ticking the tree at once so the waiting leaf sees its result.
#[derive(Debug, Clone, Copy, Default)]
pub struct BehaviorTree;

/// The strategy's state: the tree's run and the async actions started outside the tree.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(bound(serialize = "T: Serialize", deserialize = "T: DeserializeOwned"))]
pub struct BehaviorTreeState<T> {
    /// The tree's progress.
    pub run: TreeRun<T>,
    /// Ids of async instructions routed to the agent directly (not by the tree).
    #[serde(default)]
    pub in_flight: Vec<String>,
}

struct Tick<'a, S, T> {
    agent_id: &'a str,
    run: &'a mut TreeRun<T>,
    state: &'a mut S,
    clock: fn() -> Duration,
    out: &'a mut Vec<Directive>,
    // DEBUG on: leaves report their runs (read once per tick).
    debug: bool,
}

impl<S, T: NodeState> TreeVisitor<S, T> for Tick<'_, S, T> {
    type Output = TreeStatus;
    #[inline(always)]
    fn visit<N: Node<S, State = T>>(self, tree: &N) -> TreeStatus {
        self.run.tick_observed(
            self.agent_id,
            tree,
            self.state,
            self.clock,
            self.out,
            self.debug,
        )
    }
}

struct Halt<'a, S, T> {
    run: &'a mut TreeRun<T>,
    state: &'a mut S,
    now: Duration,
}

impl<S, T: NodeState> TreeVisitor<S, T> for Halt<'_, S, T> {
    type Output = Vec<Directive>;
    fn visit<N: Node<S, State = T>>(self, tree: &N) -> Vec<Directive> {
        self.run.halt(tree, self.state, self.now)
    }
}

struct RunningPath<'a, T>(&'a TreeRun<T>);

impl<S, T: NodeState> TreeVisitor<S, T> for RunningPath<'_, T> {
    type Output = String;
    fn visit<N: Node<S, State = T>>(self, tree: &N) -> String {
        self.0.running_path(tree)
    }
}

/// Every node of the tree, depth first: its depth, its label and whether it is running.
struct Visited<'a, T>(&'a TreeRun<T>);

impl<S, T: NodeState> TreeVisitor<S, T> for Visited<'_, T> {
    type Output = Vec<(usize, String, bool)>;
    fn visit<N: Node<S, State = T>>(self, tree: &N) -> Self::Output {
        let mut nodes = Vec::new();
        tree.visit(&self.0.nodes, 0, &mut |v| {
            nodes.push((v.depth, v.kind.to_string(), v.running));
        });
        nodes
    }
}

/// Starts recording each node's last status.
struct Record<'a, T>(&'a mut TreeRun<T>);

impl<S, T: NodeState> TreeVisitor<S, T> for Record<'_, T> {
    type Output = bool;
    fn visit<N: Node<S, State = T>>(self, tree: &N) -> bool {
        self.0.record(tree)
    }
}

/// Any tick but the common one, out of line: a finished run (nothing to do), DEBUG on (the
/// tick runs inside a span naming the agent), a recorded run or one with an inbox to clear.
#[cold]
#[inline(never)]
fn general_tick<S>(agent: &mut Agent<S>) -> Vec<Directive>
where
    S: AgentSpec<Strategy = BehaviorTree> + TreeAgent,
{
    if agent
        .strategy_state()
        .run
        .status
        .is_some_and(TreeStatus::is_done)
    {
        return Vec::new();
    }
    // One copy of the tree for every case here: the level is a value, not a constant.
    let debug = trace::on!(DEBUG);
    let span = if debug {
        trace::tree_span(S::NAME, agent.id())
    } else {
        tracing::Span::none()
    };
    let _entered = span.enter();
    let (agent_id, state, bt) = agent.parts_with_id();
    let mut out = Vec::new();
    S::with_tree(Tick {
        agent_id,
        run: &mut bt.run,
        state,
        clock: S::now,
        out: &mut out,
        debug,
    });
    out
}

struct PlainTick<'a, S, T> {
    agent_id: &'a str,
    run: &'a mut TreeRun<T>,
    state: &'a mut S,
    clock: fn() -> Duration,
}

impl<S, T: NodeState> TreeVisitor<S, T> for PlainTick<'_, S, T> {
    type Output = TreeStatus;
    // Inlined into `tick`: called out of line, the visitor (four pointers) is passed through
    // memory and read back with wider loads than it was written with, a store-forwarding
    // stall that cost a third of a small tree's tick.
    #[inline(always)]
    fn visit<N: Node<S, State = T>>(self, tree: &N) -> TreeStatus {
        self.run
            .tick_plain(self.agent_id, tree, self.state, self.clock)
    }
}

/// The common tick: DEBUG off, the run not done, nothing recorded or to clear.
#[inline(always)]
fn plain_tick<S>(agent: &mut Agent<S>) -> Vec<Directive>
where
    S: AgentSpec<Strategy = BehaviorTree> + TreeAgent,
{
    let (agent_id, state, bt) = agent.parts_with_id();
    S::with_tree(PlainTick {
        agent_id,
        run: &mut bt.run,
        state,
        clock: S::now,
    });
    bt.run.take_emitted()
}

/// The tree of a [`TreeAgent`] with its run's progress marked, as [`TreeRun::render`] draws it.
pub fn render_tree<S: TreeAgent>(run: &TreeRun<S::Nodes>) -> String {
    struct Render<'a, T>(&'a TreeRun<T>);
    impl<S, T: NodeState> TreeVisitor<S, T> for Render<'_, T> {
        type Output = String;
        fn visit<N: Node<S, State = T>>(self, tree: &N) -> String {
            self.0.render(tree)
        }
    }
    S::with_tree(Render(run))
}

impl<S> Strategy<S> for BehaviorTree
where
    S: AgentSpec<Strategy = BehaviorTree> + TreeAgent,
{
    type State = BehaviorTreeState<S::Nodes>;

    // Actions, conditions and halt hooks are each run under `catch_unwind`.
    const CATCHES_PANICS: bool = true;

    fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive> {
        let mut out = Vec::new();
        let mut completed = false;
        for instruction in instructions {
            let context = ErrorContext::instruction(&instruction);
            if instruction.action == RESTART_SIGNAL && !instruction.is_completion() {
                match Self::restart(agent) {
                    Ok(directives) => out.extend(directives),
                    Err(error) => out.push(Directive::error(error, context)),
                }
                completed = false;
                continue;
            }
            if instruction.action == RESUME_SIGNAL && !instruction.is_completion() {
                match resume_instruction(agent, instruction.params) {
                    Ok(directives) => out.extend(directives),
                    Err(error) => out.push(Directive::error(error, context)),
                }
                continue;
            }
            let (agent_id, state, bt) = agent.parts_with_id();
            if instruction.is_completion() {
                if let Some(pos) = bt.in_flight.iter().position(|id| *id == instruction.id) {
                    bt.in_flight.remove(pos);
                    match complete_action(state, instruction) {
                        Ok(directives) => out.extend(directives),
                        Err(error) => out.push(Directive::error(error, context)),
                    }
                } else if bt.run.complete(instruction.clone()) {
                    completed = true;
                } else {
                    out.push(Directive::error(
                        AgentError::UnexpectedCompletion {
                            id: crate::quote::clip(instruction.id),
                        },
                        context,
                    ));
                }
                continue;
            }
            let id = instruction.id.clone();
            match dispatch_action_of(agent_id, state, instruction) {
                Dispatch::Completed(directives) => out.extend(directives),
                Dispatch::Started(run) => {
                    bt.in_flight.push(id);
                    out.push(run);
                }
                Dispatch::Failed(error) => out.push(Directive::error(error, context)),
            }
        }
        if completed {
            out.extend(Self::tick(agent));
        }
        out
    }

    #[inline]
    fn tick(agent: &mut Agent<S>) -> Vec<Directive> {
        // The common tick (DEBUG off, the run not done, nothing recorded or to clear) tests
        // one flag and the tracing level; everything else is out of line.
        if agent.strategy_state().run.is_plain() && !trace::on!(DEBUG) {
            return plain_tick(agent);
        }
        general_tick(agent)
    }

    /// Halts what runs (cancelling async leaves, calling halt hooks) and starts a fresh run.
    /// The instruction id counter carries on, so a late completion of the old run is never
    /// taken for one of the new.
    fn restart(agent: &mut Agent<S>) -> Result<Vec<Directive>, AgentError> {
        let (state, bt) = agent.parts_mut();
        let directives = S::with_tree(Halt {
            run: &mut bt.run,
            state,
            now: S::now(),
        });
        let next_id = bt.run.inbox.next_id;
        // Halting withdrew the pending interrupts; the count goes on, so ids never repeat.
        let interrupts = std::mem::take(&mut bt.run.inbox.interrupts);
        let recording = bt.run.last_statuses().is_some();
        bt.run = TreeRun::default();
        bt.run.inbox.next_id = next_id;
        bt.run.inbox.interrupts = interrupts;
        if recording {
            S::with_tree(Record(&mut bt.run));
        }
        Ok(directives)
    }

    fn signal_routes() -> Vec<RouteSpec> {
        vec![resume_route(), restart_route()]
    }

    fn interrupts(agent: &Agent<S>) -> Vec<PendingInterrupt> {
        agent.strategy_state().run.inbox.interrupts.pending.clone()
    }

    /// Checks the answer against the type the `ask` leaf declared, hands it to the tree and
    /// ticks it, so the leaf runs its action with it at once. On `Err` nothing changed.
    fn resume(
        agent: &mut Agent<S>,
        id: &str,
        value: serde_json::Value,
    ) -> Result<Vec<Directive>, AgentError> {
        let interrupt = |error| AgentError::Interrupt { error };
        let interrupts = &agent.strategy_state().run.inbox.interrupts;
        let at = interrupts
            .find(S::NAME, agent.id(), id)
            .map_err(interrupt)?;
        let pending = &interrupts.pending[at];
        match S::check_answer(&pending.interrupt, &value) {
            Some(Ok(())) => {}
            Some(Err(error)) => {
                return Err(interrupt(InterruptError::WrongType {
                    id: pending.id.clone(),
                    interrupt: pending.interrupt.clone(),
                    expected: pending.resume_type.clone(),
                    error: error.message().to_string(),
                }));
            }
            // Raised by an older definition whose tree no longer asks it.
            None => {
                return Err(interrupt(InterruptError::Unknown {
                    agent: S::NAME.to_string(),
                    id: pending.id.clone(),
                    pending: Vec::new(),
                }));
            }
        }
        let (agent_id, _, bt) = agent.parts_with_id();
        bt.run
            .answer(S::NAME, agent_id, id, value)
            .map_err(interrupt)?;
        Ok(Self::tick(agent))
    }

    fn shape() -> Shape {
        let nodes = S::with_tree(Visited(&TreeRun::<S::Nodes>::default()))
            .into_iter()
            .map(|(depth, label, _)| TreeNode { depth, label })
            .collect();
        Shape::Tree { nodes }
    }

    fn progress(agent: &Agent<S>) -> Progress {
        let run = &agent.strategy_state().run;
        let running = S::with_tree(Visited(run))
            .into_iter()
            .enumerate()
            .filter_map(|(index, (_, _, running))| running.then_some(index))
            .collect();
        Progress::Tree {
            running,
            status: run.status.map(|status| match status {
                TreeStatus::Running => Status::Running,
                TreeStatus::Success => Status::Success,
                TreeStatus::Failure => Status::Failure,
            }),
            ticks: run.ticks,
            last: run.last_statuses().map(<[_]>::to_vec).unwrap_or_default(),
        }
    }

    /// Records each node's last status while watched, for [`progress`](Strategy::progress).
    fn watched(agent: &mut Agent<S>, watched: bool) {
        let run = &mut agent.strategy_state_mut().run;
        if watched {
            S::with_tree(Record(run));
        } else {
            run.stop_recording();
        }
    }

    fn snapshot(agent: &Agent<S>) -> Snapshot {
        let run = &agent.strategy_state().run;
        let mut details = json!({
            "ticks": run.ticks,
            "running": S::with_tree(RunningPath(run)),
        });
        if !run.inbox.interrupts.pending.is_empty() {
            details["interrupts"] = run
                .inbox
                .interrupts
                .pending
                .iter()
                .map(|p| serde_json::Value::String(p.id.clone()))
                .collect();
        }
        let status = Self::status(agent);
        let result = match status {
            Status::Success => Some(json!("success")),
            Status::Failure => Some(json!("failure")),
            _ => None,
        };
        let snapshot = Snapshot::new(status).with_details(details);
        match result {
            Some(result) => snapshot.with_result(result),
            None => snapshot,
        }
    }

    #[inline]
    fn status(agent: &Agent<S>) -> Status {
        match agent.strategy_state().run.status {
            None | Some(TreeStatus::Running) => Status::Running,
            Some(TreeStatus::Success) => Status::Success,
            Some(TreeStatus::Failure) => Status::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::OnceLock;
    use std::time::Duration;

    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;
    use crate::action::{Action, ActionEntry, NoParams, Outcome, SyncAction};
    use crate::bt::{
        ActionNode, ActionState, Args, Condition, ReactiveSequence, Sequence, Timeout, Wait,
    };
    use crate::error::ActionError;
    use crate::nodes;
    use crate::signal::Signal;

    thread_local! {
        static NOW: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    }

    fn advance(ms: u64) {
        NOW.with(|now| now.set(now.get() + Duration::from_millis(ms)));
    }

    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    struct Rover {
        battery: u8,
        distance: u32,
    }

    /// Drives one unit per run; `Running` until three units are done.
    struct Drive;

    impl Action<Rover> for Drive {
        type Params = NoParams;
        const NAME: &'static str = "drive";
        const DESCRIPTION: &'static str = "drives a unit";
        const ENTRY: ActionEntry<Rover> = ActionEntry::sync::<Self>();
    }

    impl SyncAction<Rover> for Drive {
        fn run(rover: &mut Rover, _: NoParams) -> Result<Outcome, ActionError> {
            rover.distance += 1;
            rover.battery = rover.battery.saturating_sub(10);
            Ok(if rover.distance < 3 {
                Outcome::new().in_progress()
            } else {
                Outcome::new()
            })
        }
    }

    type RoverTree = Sequence<(
        Wait,
        (
            Timeout<
                ReactiveSequence<(
                    Condition<fn(&Rover) -> bool>,
                    (ActionNode<Rover, Drive>, ()),
                )>,
            >,
            (),
        ),
    )>;
    impl AgentSpec for Rover {
        const NAME: &'static str = "Rover";
        type Strategy = BehaviorTree;

        fn actions() -> &'static [ActionEntry<Self>] {
            static ACTIONS: [ActionEntry<Rover>; 1] = [Drive::ENTRY];
            &ACTIONS
        }
    }

    impl TreeAgent for Rover {
        type Nodes = <RoverTree as Node<Rover>>::State;

        fn with_tree<V: TreeVisitor<Self, Self::Nodes>>(visitor: V) -> V::Output {
            static TREE: OnceLock<RoverTree> = OnceLock::new();
            visitor.visit(TREE.get_or_init(|| {
                Sequence::new(nodes![
                    Wait::new(Duration::from_millis(100)),
                    Timeout::new(
                        Duration::from_secs(1),
                        ReactiveSequence::new(nodes![
                            Condition::new(
                                "charged",
                                (|r: &Rover| r.battery > 0) as fn(&Rover) -> bool
                            ),
                            ActionNode::<Rover, Drive>::new(Args::NONE),
                        ])
                    ),
                ])
            }))
        }

        fn now() -> Duration {
            NOW.with(Cell::get)
        }
    }

    fn rover(battery: u8) -> Agent<Rover> {
        Agent::new(Rover {
            battery,
            distance: 0,
        })
    }

    #[test]
    fn the_tree_is_ticked_to_success_and_then_stays_done() {
        let mut agent = rover(100);
        let snapshot = agent.snapshot();
        assert_eq!(snapshot.status, Status::Running, "ready to be ticked");
        assert!(!snapshot.done());
        assert!(agent.tick().is_empty());
        assert_eq!(
            agent.snapshot().details["running"],
            "sequence > wait(100ms)"
        );
        advance(100);
        agent.tick();
        assert_eq!(agent.state().distance, 1);
        let snapshot = agent.snapshot();
        assert_eq!(snapshot.status, Status::Running);
        assert_eq!(
            snapshot.details["running"],
            "sequence > timeout(1s) > reactive_sequence > action drive"
        );
        agent.tick();
        agent.tick();
        let snapshot = agent.snapshot();
        assert_eq!(snapshot.status, Status::Success);
        assert!(snapshot.done());
        assert_eq!(snapshot.result, Some(json!("success")));
        assert_eq!(snapshot.details["ticks"], 4);
        // Done: further ticks change nothing.
        agent.tick();
        assert_eq!(agent.state().distance, 3);
        assert_eq!(agent.snapshot().details["ticks"], 4);
    }

    #[test]
    fn a_failing_tree_ends_the_run_with_failure() {
        let mut agent = rover(15);
        agent.tick();
        advance(100);
        agent.tick();
        assert_eq!(agent.snapshot().status, Status::Running);
        agent.tick(); // battery 5 -> drive again -> 0
        agent.tick(); // the condition fails and halts the running drive
        let snapshot = agent.snapshot();
        assert_eq!(snapshot.status, Status::Failure);
        assert_eq!(snapshot.result, Some(json!("failure")));
        assert_eq!(agent.state().distance, 2);
    }

    #[test]
    fn the_run_is_checkpointed_with_the_agent() {
        let mut agent = rover(100);
        agent.tick();
        advance(100);
        agent.tick();
        let json = serde_json::to_value(&agent).unwrap();
        let mut back: Agent<Rover> = serde_json::from_value(json).unwrap();
        assert_eq!(back.snapshot(), agent.snapshot());
        back.tick();
        back.tick();
        assert_eq!(back.snapshot().status, Status::Success);
        assert_eq!(back.state().distance, 3);
    }

    #[test]
    fn a_finished_run_restored_from_a_checkpoint_stays_done() {
        let mut agent = rover(100);
        agent.tick();
        advance(100);
        agent.tick();
        agent.tick();
        agent.tick();
        assert_eq!(agent.status(), Status::Success);
        let json = serde_json::to_value(&agent).unwrap();
        let mut back: Agent<Rover> = serde_json::from_value(json).unwrap();
        assert_eq!(back.status(), Status::Success);
        assert!(back.tick().is_empty());
        assert_eq!(back.state().distance, 3);
        assert_eq!(back.snapshot().details["ticks"], 4, "not ticked again");
    }

    #[test]
    fn the_common_tick_and_the_general_one_agree() {
        // A recorded run ticks on the general path every time; the other on the common one.
        for battery in [100, 15] {
            let (mut plain, mut general) = (rover(battery), rover(battery));
            BehaviorTree::watched(&mut general, true);
            for tick in 0..8 {
                let (a, b) = (plain.tick(), general.tick());
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "tick {tick}");
                assert_eq!(plain.state(), general.state(), "tick {tick}");
                assert_eq!(plain.status(), general.status(), "tick {tick}");
                assert_eq!(
                    plain.snapshot().details["ticks"],
                    general.snapshot().details["ticks"],
                    "tick {tick}"
                );
                advance(50);
            }
            assert!(plain.status().is_done(), "battery {battery}: the run ended");
        }
    }

    /// Pings on every other run, and runs forever.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    struct Beacon {
        runs: u32,
    }

    struct Ping;

    impl Action<Beacon> for Ping {
        type Params = NoParams;
        const NAME: &'static str = "ping";
        const DESCRIPTION: &'static str = "pings every other run";
        const ENTRY: ActionEntry<Beacon> = ActionEntry::sync::<Self>();
    }

    impl SyncAction<Beacon> for Ping {
        fn run(beacon: &mut Beacon, _: NoParams) -> Result<Outcome, ActionError> {
            beacon.runs += 1;
            let outcome = Outcome::new().in_progress();
            Ok(if beacon.runs % 2 == 1 {
                outcome.emit(Signal::new("beacon.ping", json!(beacon.runs)))
            } else {
                outcome
            })
        }
    }

    impl AgentSpec for Beacon {
        const NAME: &'static str = "Beacon";
        type Strategy = BehaviorTree;

        fn actions() -> &'static [ActionEntry<Self>] {
            static ACTIONS: [ActionEntry<Beacon>; 1] = [Ping::ENTRY];
            &ACTIONS
        }
    }

    impl TreeAgent for Beacon {
        type Nodes = ActionState;

        fn with_tree<V: TreeVisitor<Self, Self::Nodes>>(visitor: V) -> V::Output {
            visitor.visit(&ActionNode::<Beacon, Ping>::new(Args::NONE))
        }
    }

    fn pings(directives: &[Directive]) -> Vec<serde_json::Value> {
        directives
            .iter()
            .map(|d| match d {
                Directive::Emit(signal) => signal.data.clone(),
                other => panic!("not a ping: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn each_tick_returns_the_directives_it_emitted_and_no_others() {
        let mut agent = Agent::new(Beacon::default());
        assert_eq!(pings(&agent.tick()), [json!(1)]);
        assert!(
            agent.tick().is_empty(),
            "the first ping is not returned twice"
        );
        assert_eq!(pings(&agent.tick()), [json!(3)]);
        // While the run is recorded, ticks take the general path: the same directives.
        BehaviorTree::watched(&mut agent, true);
        assert!(agent.strategy_state().run.last_statuses().is_some());
        assert!(agent.tick().is_empty());
        assert_eq!(pings(&agent.tick()), [json!(5)]);
        assert_eq!(agent.state().runs, 5);
    }

    #[test]
    fn instructions_run_actions_directly_and_stray_completions_are_errors() {
        let mut agent = rover(100);
        let out = agent.cmd(Instruction::new("drive", json!(null)));
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(agent.state().distance, 1);
        let stray = Instruction::completed(
            &Instruction::new("drive", json!(null)).with_id("nope"),
            Ok(Outcome::new()),
        );
        let out = agent.cmd(stray);
        assert!(
            matches!(out[0].as_error(), Some(AgentError::UnexpectedCompletion { id }) if id == "nope"),
            "{out:?}"
        );
    }
}
