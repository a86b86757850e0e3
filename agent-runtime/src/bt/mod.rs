//! The behaviour-tree engine: statuses, nodes and the context they tick in.
//!
//! A tree is a value of concrete, generic node types ([`Sequence`], [`Timeout`], [`ActionNode`],
//! ...) whose children are cons lists (`(A, (B, ()))`, built with [`nodes!`](crate::nodes)).
//! Nothing is boxed and nothing allocates while ticking. The tree value is immutable structure;
//! its progress (running flags, the running child, counters, timer starts) lives apart, in
//! [`Node::State`], a plain serializable value, so an agent checkpoints its tree's progress with
//! it and `bt!` can build the structure once and share it.
//!
//! Semantics follow BehaviorTree.CPP, with these exact rules (also in the `stratagem::guide::trees` chapter):
//! - halting reaches only a node that is running; a halted node halts its running children (each
//!   exactly once) and resets its own progress; completed children are reset, never halted;
//! - `sequence`/`selector` resume at the running child; reactive ones re-tick from child 0 and
//!   halt every other running child when one returns `Running`;
//! - time is the caller's: each tick receives `now` (see [`Clock`]), so tests drive it exactly.
//!
//! ```
//! use std::time::Duration;
//! use agent_runtime::bt::{Condition, Sequence, Status, TreeRun, Wait};
//! use agent_runtime::nodes;
//!
//! let tree = Sequence::new(nodes![
//!     Condition::new("ready", |ready: &bool| *ready),
//!     Wait::new(Duration::from_millis(50)),
//! ]);
//! let mut run = TreeRun::default();
//! let mut ready = true;
//! assert_eq!(run.tick(&tree, &mut ready, Duration::ZERO).status, Status::Running);
//! assert_eq!(run.tick(&tree, &mut ready, Duration::from_millis(50)).status, Status::Success);
//! ```

pub(crate) mod arg_check;
mod args;
mod ask;
mod children;
mod clock;
mod composite;
mod context;
mod decorator;
mod leaf;
mod record;
mod run;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use arg_check::{ArgType, ParamField, Params};
pub use args::{Arg, Args};
pub use ask::{Ask, AskState};
pub use children::{Children, Join, Slot};
pub use clock::{Clock, HostClock, ManualClock};
pub use composite::{
    CompositeState, Parallel, ParallelState, ReactiveSelector, ReactiveSequence, Selector, Sequence,
};
pub use context::{Ctx, Inbox};
pub use decorator::{
    CountState, Delay, ForceFailure, ForceSuccess, Invert, Repeat, Retry, RunOnce, RunOnceState,
    Subtree, Timeout, TimerState,
};
pub use leaf::{ActionNode, ActionState, Condition, Wait, WaitState, condition};
pub use record::{NodeTick, TickRecord};
pub use run::{TickReport, TreeRun};

use crate::action::{IntoOutcome, Outcome};
use crate::error::{ActionError, ActionErrorKind, IntoActionError};

/// What a node reports after a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The node finished and succeeded.
    Success,
    /// The node finished and failed.
    Failure,
    /// The node has not finished: tick it again.
    Running,
}

impl Status {
    /// `Success` or `Failure`.
    pub fn is_done(self) -> bool {
        self != Status::Running
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Success => "success",
            Status::Failure => "failure",
            Status::Running => "running",
        })
    }
}

/// An action may return a tree status: `Success` commits its changes, `Running` commits them and
/// keeps the leaf running, `Failure` is a failed action (its changes are discarded).
impl IntoOutcome for Status {
    #[inline]
    fn into_outcome(self) -> Result<Outcome, ActionError> {
        match self {
            Status::Success => Ok(Outcome::new()),
            Status::Running => Ok(Outcome::new().in_progress()),
            Status::Failure => Err(ActionError::fixed(
                ActionErrorKind::Failed,
                "the action returned `failure`",
            )),
        }
    }
}

/// A fallible action may return a tree status too: an `Err` is a failure like `Status::Failure`.
impl<E: IntoActionError> IntoOutcome for Result<Status, E> {
    #[inline]
    fn into_outcome(self) -> Result<Outcome, ActionError> {
        self.map_err(IntoActionError::into_action_error)
            .and_then(IntoOutcome::into_outcome)
    }
}

/// What a node's progress must be: plain data, checkpointed with the agent.
pub trait NodeState:
    Clone + fmt::Debug + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

impl<T> NodeState for T where
    T: Clone
        + fmt::Debug
        + Default
        + PartialEq
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// A behaviour-tree node over a blackboard `S` (the agent's typed state).
///
/// The node value is the tree's structure and never changes while ticking; everything that does
/// lives in [`Node::State`]. Implement it for custom leaves; the built-in nodes cover the
/// language.
pub trait Node<S> {
    /// The node's progress (and its children's).
    type State: NodeState;

    /// How many nodes [`visit`](Node::visit) reports: this one and its descendants. A node's
    /// index in visiting order is its parent's plus the sizes of its earlier siblings, which is
    /// how a [`TickRecord`] names the nodes it saw tick. A custom node with children must say.
    const SIZE: usize = 1;

    /// Advances the node by one tick.
    fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status;

    /// Stops a running node: halts its running children, each exactly once, and resets its
    /// progress. The engine calls it only on running nodes (see [`halt_running`]); an
    /// implementation should still do nothing when the node is not running.
    fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>);

    /// Whether the node's last tick returned `Running` and it has not been halted since.
    fn is_running(&self, state: &Self::State) -> bool;

    /// Calls `f` for this node and then its descendants, depth first (for progress displays).
    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>));

    /// What the node is, as its trace events name it. Custom nodes should say; the default
    /// is `NodeKind::Custom("custom")`.
    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Custom("custom")
    }
}

/// Ticks `node` (a decorator's child, or a tree's root): what every decorator calls, so that
/// with a TRACE subscriber each node's status change is one `stratagem::tree` event, and while
/// an inspector watches ([`TickRecord`]) each node's status is recorded. Otherwise it is
/// exactly `node.tick(state, ctx)` plus one test of a flag of the tick.
#[inline(always)]
pub fn tick_node<S, N: Node<S> + ?Sized>(
    node: &N,
    state: &mut N::State,
    ctx: &mut Ctx<'_, S>,
) -> Status {
    tick_child(node, state, ctx, 1)
}

/// [`tick_node`] for a child `offset` nodes after the node ticking it, in visiting order (1
/// for the first child, 1 plus the first's [`SIZE`](Node::SIZE) for the second, ...);
/// [`Children`] computes it for composites.
#[inline(always)]
pub fn tick_child<S, N: Node<S> + ?Sized>(
    node: &N,
    state: &mut N::State,
    ctx: &mut Ctx<'_, S>,
    offset: usize,
) -> Status {
    if ctx.observed() {
        return ctx.detached(|ctx| tick_observed(node, state, ctx, offset));
    }
    node.tick(state, ctx)
}

/// [`tick_child`] reporting the change (from idle or running to the status the tick returned;
/// a node running before and after did not change) and recording the status.
#[cold]
#[inline(never)]
fn tick_observed<S, N: Node<S> + ?Sized>(
    node: &N,
    state: &mut N::State,
    ctx: &mut Ctx<'_, S>,
    offset: usize,
) -> Status {
    let traced = crate::trace::on!(TRACE);
    let was_running = traced && node.is_running(state);
    let (index, parent) = ctx.enter(offset);
    let status = node.tick(state, ctx);
    ctx.leave(index, parent, status);
    if traced && !(was_running && status == Status::Running) {
        crate::trace::node_status(&node.kind(), was_running, status);
    }
    status
}

/// Something done with a tree whose concrete type the caller cannot name (generated trees hold
/// function items): [`Behavior::with_tree`] hands the tree to [`TreeVisitor::visit`].
pub trait TreeVisitor<S, T> {
    /// What the visit returns.
    type Output;
    /// Does the work with the tree.
    fn visit<N: Node<S, State = T>>(self, tree: &N) -> Self::Output;
}

/// A named behaviour over blackboard `S`: `bt! { for S  behavior Patrol { ... } }` generates a
/// unit struct implementing it, and `#[agent(strategy = BehaviorTree, tree = Patrol)]` runs it.
pub trait Behavior<S> {
    /// The progress of the behaviour's tree.
    type Nodes: NodeState;
    /// The behaviour's name.
    const NAME: &'static str;
    /// Hands the tree to `visitor`. The tree is constant data: building it costs nothing.
    fn with_tree<V: TreeVisitor<S, Self::Nodes>>(visitor: V) -> V::Output;

    /// The action called `name` among the tree's leaves: how a host finds an async action the
    /// tree started, which the agent need not list in `actions`. `bt!` generates it.
    fn action(name: &str) -> Option<&'static crate::action::ActionEntry<S>> {
        let _ = name;
        None
    }

    /// Whether `value` is an answer of the type the tree's `ask interrupt` leaves expect:
    /// `None` when no leaf asks `interrupt`. `bt!` generates it.
    fn check_answer(
        interrupt: &str,
        value: &serde_json::Value,
    ) -> Option<Result<(), crate::error::ActionError>> {
        let _ = (interrupt, value);
        None
    }
}

/// Halts `node` if it is running: the one way the engine halts a child, so a node that is not
/// running is never halted and a halted node is halted once.
#[inline]
pub fn halt_running<S, N: Node<S> + ?Sized>(node: &N, state: &mut N::State, ctx: &mut Ctx<'_, S>) {
    if node.is_running(state) {
        node.halt(state, ctx);
    }
}

/// One node as [`Node::visit`] reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Visit<'a> {
    /// Depth in the tree (the root is 0).
    pub depth: usize,
    /// What the node is.
    pub kind: NodeKind<'a>,
    /// Whether it is running.
    pub running: bool,
}

/// What a node is, with its parameters; displays in the language's syntax (`timeout(2s)`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum NodeKind<'a> {
    /// `sequence`
    Sequence,
    /// `reactive_sequence`
    ReactiveSequence,
    /// `selector`
    Selector,
    /// `reactive_selector`
    ReactiveSelector,
    /// `parallel(success = N, failure = M)`
    Parallel {
        /// Successes needed.
        success: usize,
        /// Failures that fail it.
        failure: usize,
    },
    /// `invert`
    Invert,
    /// `force_success`
    ForceSuccess,
    /// `force_failure`
    ForceFailure,
    /// `repeat(N)`
    Repeat(u32),
    /// `retry(N)`
    Retry(u32),
    /// `timeout(D)`
    Timeout(Duration),
    /// `delay(D)`
    Delay(Duration),
    /// `run_once`
    RunOnce,
    /// `action name`
    Action(&'a str),
    /// `condition name`
    Condition(&'a str),
    /// `wait(D)`
    Wait(Duration),
    /// `subtree Name`
    Subtree(&'a str),
    /// `ask name`: waits for a person's answer to interrupt `name`.
    Ask(&'a str),
    /// A node defined outside this crate.
    Custom(&'a str),
}

impl fmt::Display for NodeKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeKind::Sequence => f.write_str("sequence"),
            NodeKind::ReactiveSequence => f.write_str("reactive_sequence"),
            NodeKind::Selector => f.write_str("selector"),
            NodeKind::ReactiveSelector => f.write_str("reactive_selector"),
            NodeKind::Parallel { success, failure } => {
                write!(f, "parallel(success = {success}, failure = {failure})")
            }
            NodeKind::Invert => f.write_str("invert"),
            NodeKind::ForceSuccess => f.write_str("force_success"),
            NodeKind::ForceFailure => f.write_str("force_failure"),
            NodeKind::Repeat(n) => write!(f, "repeat({n})"),
            NodeKind::Retry(n) => write!(f, "retry({n})"),
            NodeKind::Timeout(d) => write!(f, "timeout({})", DisplayDuration(*d)),
            NodeKind::Delay(d) => write!(f, "delay({})", DisplayDuration(*d)),
            NodeKind::RunOnce => f.write_str("run_once"),
            NodeKind::Action(name) => write!(f, "action {name}"),
            NodeKind::Condition(name) => write!(f, "condition {name}"),
            NodeKind::Wait(d) => write!(f, "wait({})", DisplayDuration(*d)),
            NodeKind::Subtree(name) => write!(f, "subtree {name}"),
            NodeKind::Ask(name) => write!(f, "ask {name}"),
            NodeKind::Custom(name) => f.write_str(name),
        }
    }
}

/// A duration in the language's syntax: the largest unit that divides it (`2s`, `1500ms`).
#[derive(Debug, Clone, Copy)]
pub struct DisplayDuration(pub Duration);

impl fmt::Display for DisplayDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        match ms {
            0 => f.write_str("0ms"),
            _ if ms.is_multiple_of(3_600_000) => write!(f, "{}h", ms / 3_600_000),
            _ if ms.is_multiple_of(60_000) => write!(f, "{}m", ms / 60_000),
            _ if ms.is_multiple_of(1_000) => write!(f, "{}s", ms / 1_000),
            _ => write!(f, "{ms}ms"),
        }
    }
}

/// Builds a cons list of child nodes: `nodes![a, b, c]` is `(a, (b, (c, ())))`. For generated
/// code and hand-built trees; hidden, since it lands at the crate root.
#[doc(hidden)]
#[macro_export]
macro_rules! nodes {
    () => { () };
    ($head:expr $(, $tail:expr)* $(,)?) => { ($head, $crate::nodes!($($tail),*)) };
}
