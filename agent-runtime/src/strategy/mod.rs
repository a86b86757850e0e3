//! The strategy contract and the built-in strategies.

mod behavior_tree;
mod direct;
mod dispatch;
pub mod fsm;
mod fsm_error;

pub use behavior_tree::{BehaviorTree, BehaviorTreeState, TreeAgent, render_tree};
pub use direct::{Direct, DirectState};
pub(crate) use dispatch::dispatch_action_of;
pub use dispatch::{Dispatch, complete_action, dispatch_action};
pub use fsm::{Fsm, FsmError, FsmSpec, FsmState};

use crate::route::{RouteTarget, priority};
use std::borrow::Cow;

/// The route of [`RESTART_SIGNAL`] to the strategy, for strategies that can restart.
pub(crate) fn restart_route() -> RouteSpec {
    RouteSpec {
        pattern: Cow::Borrowed(RESTART_SIGNAL),
        target: RouteTarget::Custom(Cow::Borrowed(RESTART_SIGNAL)),
        priority: priority::STRATEGY,
    }
}

/// The route of [`RESUME_SIGNAL`](crate::interrupt::RESUME_SIGNAL) to the strategy, for
/// strategies whose agents raise interrupts.
pub(crate) fn resume_route() -> RouteSpec {
    RouteSpec {
        pattern: Cow::Borrowed(crate::interrupt::RESUME_SIGNAL),
        target: RouteTarget::Custom(Cow::Borrowed(crate::interrupt::RESUME_SIGNAL)),
        priority: priority::STRATEGY,
    }
}

/// Reads a [`RESUME_SIGNAL`](crate::interrupt::RESUME_SIGNAL) instruction's data and answers
/// the interrupt through [`Strategy::resume`].
pub(crate) fn resume_instruction<S: AgentSpec>(
    agent: &mut Agent<S>,
    params: serde_json::Value,
) -> Result<Vec<Directive>, AgentError> {
    let resume = parse_resume(params)?;
    S::Strategy::resume(agent, &resume.id, resume.value)
}

/// The data of a [`RESUME_SIGNAL`](crate::interrupt::RESUME_SIGNAL) instruction.
pub(crate) fn parse_resume(
    params: serde_json::Value,
) -> Result<crate::interrupt::Resume, AgentError> {
    serde_json::from_value(params).map_err(|e| AgentError::Interrupt {
        error: crate::interrupt::InterruptError::Malformed {
            error: e.to_string(),
        },
    })
}

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::action::{ActionEntry, ActionSpec};
use crate::agent::{Agent, AgentSpec};
use crate::directive::Directive;
use crate::error::AgentError;
use crate::inspect::{Progress, Shape};
use crate::instruction::Instruction;
use crate::route::RouteSpec;
use crate::snapshot::{Snapshot, Status};

/// The type of the signal that restarts a finished run ([`Agent::restart`]): the behaviour-tree
/// and FSM strategies route it to themselves. Its data is ignored.
pub const RESTART_SIGNAL: &str = "stratagem.restart";

/// Decides what an agent does with instructions.
///
/// Only [`cmd`](Strategy::cmd) and [`snapshot`](Strategy::snapshot) are required. The functions
/// are associated (no `self`): a strategy is a type, configured by the agent type `S` it runs,
/// and all its run-time data lives in [`Strategy::State`] inside the agent, so it is checkpointed
/// with the agent.
pub trait Strategy<S: AgentSpec>: 'static {
    /// The strategy's own state, kept inside the agent.
    type State: Clone + fmt::Debug + Default + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Prepares the agent. Idempotent: a second call, or a call on a thawed agent, changes
    /// nothing more and repeats no effect.
    fn init(agent: &mut Agent<S>) -> Vec<Directive> {
        let _ = agent;
        Vec::new()
    }

    /// Runs instructions. Pure and deterministic: no I/O; effects are returned as directives.
    fn cmd(agent: &mut Agent<S>, instructions: Vec<Instruction>) -> Vec<Directive>;

    /// Runs a model's reply that the host kept typed: `instruction` is the routed
    /// `ai.llm.response` instruction without its `params`. The same as `cmd` of that
    /// instruction carrying the reply's JSON, which is what this does unless a strategy takes
    /// the reply as it is (the AI strategies do: no JSON round trip).
    fn cmd_llm_reply(
        agent: &mut Agent<S>,
        mut instruction: Instruction,
        reply: crate::ai::LlmReply,
    ) -> Vec<Directive> {
        instruction.params = reply.to_json();
        Self::cmd(agent, vec![instruction])
    }

    /// Advances a strategy that reported `Running`. The host calls it.
    fn tick(agent: &mut Agent<S>) -> Vec<Directive> {
        let _ = agent;
        Vec::new()
    }

    /// Where the agent stands.
    fn snapshot(agent: &Agent<S>) -> Snapshot;

    /// The status of [`snapshot`](Strategy::snapshot) without its result and details: cheap
    /// enough to read after every step or tick. The default builds the snapshot; the built-in
    /// strategies answer without allocating.
    fn status(agent: &Agent<S>) -> Status {
        Self::snapshot(agent).status
    }

    /// The description of an action, for tools.
    fn action_spec(action: &str) -> Option<ActionSpec> {
        S::action(action).map(ActionEntry::spec)
    }

    /// The model aliases the strategy calls (AI strategies); a host without them refuses to
    /// start the agent, listing the aliases it has.
    fn required_models() -> Vec<&'static str> {
        Vec::new()
    }

    /// Keywords in the parameter schemas of the tools the strategy offers a model that the
    /// argument validator does not enforce (AI strategies), as
    /// `` tool `lookup`: `pattern` at `/properties/code` ``; a host refuses to start the agent
    /// when there is one.
    fn tool_schema_problems() -> Vec<String> {
        Vec::new()
    }

    /// Routes the strategy contributes (default priority [`crate::route::priority::STRATEGY`]).
    fn signal_routes() -> Vec<RouteSpec> {
        Vec::new()
    }

    /// What a diagram of the agent draws (the FSM's states, the tree's nodes); the default
    /// describes nothing. Called by inspectors only, never while the agent runs.
    fn shape() -> Shape {
        Shape::Opaque
    }

    /// Where the run stands in the terms of [`shape`](Strategy::shape); the default says
    /// nothing beyond the snapshot. Called by inspectors only, after each step they watch.
    fn progress(agent: &Agent<S>) -> Progress {
        let _ = agent;
        Progress::Opaque
    }

    /// Told when a watcher starts (`true`) or stops (`false`) observing the agent, so the
    /// strategy can record for [`progress`](Strategy::progress) what it does not keep
    /// otherwise (a tree records each node's last status); the default does nothing. Only
    /// the server's inspection calls it, never while nobody watches.
    fn watched(agent: &mut Agent<S>, watched: bool) {
        let _ = (agent, watched);
    }

    /// Whether `cmd` and `tick` never let a panic of user code (an action, a guard, a
    /// condition, a hook) escape and leave the agent as it was when they report one, as the
    /// built-in strategies do. When `false` (the default), [`Agent::cmd`] and [`Agent::tick`]
    /// keep a copy of the agent for each call, put it back if the call panics, and report
    /// [`AgentError::StrategyPanicked`]: a panic never unwinds into the caller.
    const CATCHES_PANICS: bool = false;

    /// The interrupts the agent raised that wait for an answer, in the order they were raised
    /// ([`crate::interrupt`]). The default: none (the strategy raises none).
    fn interrupts(agent: &Agent<S>) -> Vec<crate::interrupt::PendingInterrupt> {
        let _ = agent;
        Vec::new()
    }

    /// Answers pending interrupt `id` with `value` (`agent.cmd(Resume { id, value })` and the
    /// [`RESUME_SIGNAL`](crate::interrupt::RESUME_SIGNAL) signal). The default: no interrupt
    /// is pending, so every id is unknown.
    fn resume(
        agent: &mut Agent<S>,
        id: &str,
        value: serde_json::Value,
    ) -> Result<Vec<Directive>, AgentError> {
        let _ = (agent, value);
        Err(AgentError::Interrupt {
            error: crate::interrupt::InterruptError::Unknown {
                agent: S::NAME.to_string(),
                id: crate::quote::clip(id.to_string()),
                pending: Vec::new(),
            },
        })
    }

    /// Starts the run over ([`Agent::restart`], or the [`RESTART_SIGNAL`] signal). The default
    /// refuses with [`AgentError::NotRestartable`]; on `Err` the agent is unchanged.
    fn restart(agent: &mut Agent<S>) -> Result<Vec<Directive>, AgentError> {
        let _ = agent;
        Err(AgentError::NotRestartable {
            agent: S::NAME.to_string(),
            reason: "its strategy has no run to start over".to_string(),
        })
    }
}
