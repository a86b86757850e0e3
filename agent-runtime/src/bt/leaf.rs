//! Leaves: conditions, actions and `wait`.

use std::fmt;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Args, Ctx, Node, NodeKind, Status, Visit};
use crate::action::{Action, ActionFn, HaltHook, Outcome, apply_outcome};
use crate::directive::Directive;
use crate::error::{ActionError, ActionErrorKind, AgentError, ErrorContext};
use crate::instruction::Instruction;
use crate::state_op::apply_ops;
use crate::trace::{self, Ran};

/// `condition name`: `Success` when the predicate holds on the blackboard, else `Failure`.
/// Never running.
#[derive(Clone, Copy)]
pub struct Condition<F> {
    name: &'static str,
    check: F,
}

impl<F> Condition<F> {
    /// A condition called `name` (for displays) checking `check`.
    pub const fn new(name: &'static str, check: F) -> Self {
        Condition { name, check }
    }
}

/// A condition over blackboard `S`; what generated trees call, so a function that is not
/// `fn(&S) -> bool` is reported where the tree names it.
pub const fn condition<S, F: Fn(&S) -> bool>(name: &'static str, check: F) -> Condition<F> {
    Condition { name, check }
}

impl<F> fmt::Debug for Condition<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Condition").field(&self.name).finish()
    }
}

impl<S, F: Fn(&S) -> bool> Node<S> for Condition<F> {
    type State = ();

    #[inline]
    fn tick(&self, _: &mut (), ctx: &mut Ctx<'_, S>) -> Status {
        // A condition only reads the blackboard, so a panic leaves nothing to put back.
        match catch_unwind(AssertUnwindSafe(|| (self.check)(ctx.state()))) {
            Ok(true) => Status::Success,
            Ok(false) => Status::Failure,
            Err(payload) => condition_panicked(self.name, payload.as_ref(), ctx.out()),
        }
    }

    #[inline]
    fn halt(&self, _: &mut (), _: &mut Ctx<'_, S>) {}

    #[inline]
    fn is_running(&self, _: &()) -> bool {
        false
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Condition(self.name)
    }

    fn visit(&self, _: &(), depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Condition(self.name),
            running: false,
        });
    }
}

/// A panicking condition is a `Failure` reported as [`AgentError::Condition`], as a panicking
/// action is a `Failure` reported as an action error.
#[cold]
fn condition_panicked(
    name: &'static str,
    payload: &(dyn std::any::Any + Send),
    out: &mut Vec<Directive>,
) -> Status {
    out.push(Directive::error(
        AgentError::Condition {
            condition: name.to_string(),
            error: ActionError::panicked(name, payload),
        },
        ErrorContext::Tick,
    ));
    Status::Failure
}

/// Progress of `wait`: when it started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitState {
    /// The clock reading at the activation's first tick; `None` when not waiting.
    pub since: Option<Duration>,
}

/// `wait(D)`: `Running` on its first tick, `Success` on the first tick at which D has elapsed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wait {
    after: Duration,
}

impl Wait {
    /// Waits `after`.
    pub const fn new(after: Duration) -> Self {
        Wait { after }
    }
}

impl<S> Node<S> for Wait {
    type State = WaitState;

    #[inline]
    fn tick(&self, state: &mut WaitState, ctx: &mut Ctx<'_, S>) -> Status {
        match state.since {
            None => {
                state.since = Some(ctx.now());
                Status::Running
            }
            Some(since) if ctx.now().saturating_sub(since) >= self.after => {
                state.since = None;
                Status::Success
            }
            Some(_) => Status::Running,
        }
    }

    #[inline]
    fn halt(&self, state: &mut WaitState, _: &mut Ctx<'_, S>) {
        state.since = None;
    }

    #[inline]
    fn is_running(&self, state: &WaitState) -> bool {
        state.since.is_some()
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Wait(self.after)
    }

    fn visit(&self, state: &WaitState, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Wait(self.after),
            running: state.since.is_some(),
        });
    }
}

/// Progress of an action leaf.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionState {
    /// Whether the action returned `Running` (or its async run is in flight).
    pub running: bool,
    /// The id of the async instruction the leaf waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
}

/// `action name(k = v)`: runs an agent action with the same contract as everywhere else.
///
/// A sync action runs on the blackboard with a copy kept to restore it if the action fails (an
/// `Err`, a `Status::Failure`, a panic, a state operation that does not apply); its directives
/// go to the host. `Ok` is `Success`; an [`Outcome::in_progress`] (or `Status::Running`) is `Running`, and
/// the action runs again next tick. A plain failure is control flow (`Failure`, no error
/// reported); invalid parameters, panics and bad state operations also send an `Error` directive.
///
/// An async action is started with a `RunInstruction` directive and the leaf is `Running` until
/// its completion comes back through `cmd`; its outcome is then applied like a sync one's.
/// Halting the leaf cancels the instruction (a `CancelInstruction` directive: the host aborts
/// it) and forgets it: a completion that arrives anyway is discarded.
///
/// Halting a running leaf (sync or async) calls the action's [`HaltHook`], once per halt.
pub struct ActionNode<S, A> {
    args: Args,
    action: PhantomData<fn() -> (S, A)>,
}

impl<S: 'static, A: Action<S>> ActionNode<S, A> {
    /// A leaf running action `A` (an `#[action]` marker) with these arguments ([`Args::NONE`]
    /// for none). They are decoded into the action's parameters on each run, from constant
    /// data: parameters without owned data cost no allocation. The action is a type parameter,
    /// so the call is static and inlines.
    pub const fn new(args: Args) -> Self {
        ActionNode {
            args,
            action: PhantomData,
        }
    }

    /// The action's name.
    pub fn name(&self) -> &'static str {
        A::NAME
    }
}

impl<S, A> Copy for ActionNode<S, A> {}

impl<S, A> Clone for ActionNode<S, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: 'static, A: Action<S>> fmt::Debug for ActionNode<S, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionNode")
            .field("action", &A::NAME)
            .field("args", &self.args)
            .finish()
    }
}

impl<S, A> ActionNode<S, A>
where
    S: Clone + Serialize + DeserializeOwned + 'static,
    A: Action<S>,
{
    /// Turns an action's result into the leaf's status, reporting errors that are not plain
    /// failures.
    #[inline]
    fn conclude(
        result: Result<(Vec<Directive>, bool), ActionError>,
        state: &mut ActionState,
        out: &mut Vec<Directive>,
    ) -> Status {
        match result {
            Ok((directives, in_progress)) => {
                if !directives.is_empty() {
                    out.extend(directives);
                }
                state.running = in_progress;
                if in_progress {
                    Status::Running
                } else {
                    Status::Success
                }
            }
            Err(error) => {
                state.running = false;
                if error.kind() != ActionErrorKind::Failed {
                    out.push(Directive::error(
                        AgentError::Action {
                            action: A::NAME.into(),
                            error,
                        },
                        ErrorContext::Tick,
                    ));
                }
                Status::Failure
            }
        }
    }
}

/// Runs a sync action on `state` in place, with a copy to restore if it fails (an error, a
/// panic, a state operation that does not apply): the same all-or-nothing as `run_sync`'s
/// draft, without copying the state back on success. Its directives are appended to `out`
/// only on success; returns the outcome's `in_progress`. Only a small value crosses the panic
/// boundary: a plain failure (a tree status, not an error to report) is `Err(None)` and costs no
/// allocation; an error to report is boxed.
#[inline]
pub(super) fn run_draft<S, F>(
    name: &str,
    writes: bool,
    state: &mut S,
    out: &mut Vec<Directive>,
    f: F,
) -> Result<bool, Option<Box<ActionError>>>
where
    S: Clone + Serialize + DeserializeOwned,
    F: FnOnce(&mut S) -> Option<Result<Outcome, ActionError>>,
{
    // An action that cannot write the state (`&S` or no state) needs no copy until its state
    // operations are applied.
    let mut backup = writes.then(|| state.clone());
    let result = catch_unwind(AssertUnwindSafe(
        || -> Result<bool, Option<Box<ActionError>>> {
            let outcome = match f(state) {
                Some(Ok(outcome)) => outcome,
                Some(Err(error)) => return Err(reported(error)),
                None => {
                    return Err(reported(ActionError::new(format!(
                        "`{name}` is not synchronous"
                    ))));
                }
            };
            if !outcome.ops.is_empty() {
                if backup.is_none() {
                    backup = Some(state.clone());
                }
                apply_ops(state, &outcome.ops).map_err(reported)?;
            }
            if !outcome.directives.is_empty() {
                out.extend(outcome.directives);
            }
            Ok(outcome.in_progress)
        },
    ));
    match result {
        Ok(Ok(in_progress)) => Ok(in_progress),
        Ok(Err(error)) => {
            if let Some(backup) = backup {
                *state = backup;
            }
            Err(error)
        }
        Err(payload) => {
            if let Some(backup) = backup {
                *state = backup;
            }
            Err(reported(ActionError::panicked(name, payload.as_ref())))
        }
    }
}

/// Runs an action's halt hook on the blackboard, putting it back if the hook panics.
#[cold]
fn run_halt_hook<S: Clone>(hook: HaltHook<S>, state: &mut S, out: &mut Vec<Directive>) {
    let backup = state.clone();
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (hook.run)(state))) {
        *state = backup;
        out.push(Directive::error(
            AgentError::Hook {
                hook: hook.name.to_string(),
                error: ActionError::panicked(hook.name, payload.as_ref()),
            },
            ErrorContext::Tick,
        ));
    }
}

/// The error a failed action reports, if any: a plain failure is only the leaf's status
/// ([`ActionNode::conclude`] reports every other kind).
#[inline]
fn reported(error: ActionError) -> Option<Box<ActionError>> {
    (error.kind() != ActionErrorKind::Failed).then(|| Box::new(error))
}

impl<S, A> Node<S> for ActionNode<S, A>
where
    S: Clone + Serialize + DeserializeOwned + 'static,
    A: Action<S>,
{
    type State = ActionState;

    #[inline]
    fn tick(&self, state: &mut ActionState, ctx: &mut Ctx<'_, S>) -> Status {
        // `A::ENTRY` is a constant per action type: the match and the call resolve statically.
        let entry = A::ENTRY;
        match entry.run {
            ActionFn::Sync(_) => {
                // Runs are reported only on the observed path (DEBUG on): unobserved, the flag
                // is a constant of the inlined tick and this test folds away.
                let started = if ctx.observed() { trace::start() } else { None };
                let (blackboard, out) = ctx.parts();
                let ran = run_draft(A::NAME, A::WRITES_STATE, blackboard, out, |draft| {
                    entry.run_sync_args(draft, self.args)
                });
                if started.is_some() {
                    let (outcome, error) = match &ran {
                        Ok(true) => (Ran::Running, None),
                        Ok(false) => (Ran::Success, None),
                        Err(error) => (Ran::Failure, error.as_deref()),
                    };
                    trace::leaf_action_ran(A::NAME, started, outcome, error);
                }
                // An action that never ends in progress does not write its flag (`is_running`
                // does not read it): a store fewer per run.
                match ran {
                    Ok(in_progress) => {
                        let in_progress = A::MAY_BE_IN_PROGRESS && in_progress;
                        if A::MAY_BE_IN_PROGRESS {
                            state.running = in_progress;
                        }
                        if in_progress {
                            Status::Running
                        } else {
                            Status::Success
                        }
                    }
                    Err(Some(error)) => Self::conclude(Err(*error), state, ctx.out()),
                    Err(None) => {
                        if A::MAY_BE_IN_PROGRESS {
                            state.running = false;
                        }
                        Status::Failure
                    }
                }
            }
            ActionFn::Async(_) => {
                if let Some(id) = &state.pending {
                    let Some(done) = ctx.take_completion(id) else {
                        return Status::Running;
                    };
                    state.pending = None;
                    let result = match done.outcome {
                        Some(Ok(outcome)) => {
                            let in_progress = outcome.in_progress;
                            apply_outcome(ctx.state_mut(), outcome).map(|d| (d, in_progress))
                        }
                        Some(Err(error)) => Err(error),
                        None => Err(ActionError::new("the completion carries no outcome")),
                    };
                    // An async action cannot stay in progress: its run is over.
                    let status = Self::conclude(result, state, ctx.out());
                    state.running = false;
                    return if status == Status::Running {
                        Status::Success
                    } else {
                        status
                    };
                }
                let id = ctx.next_instruction_id();
                let instruction = Instruction {
                    id: id.clone(),
                    action: A::NAME.to_string(),
                    params: self.args.to_json(),
                    deadline: None,
                    exec: None,
                    outcome: None,
                };
                if trace::on!(DEBUG) {
                    trace::leaf_action_ran(A::NAME, None, Ran::Started, None);
                }
                ctx.emit(Directive::RunInstruction {
                    instruction,
                    exec: entry.exec,
                });
                state.pending = Some(id);
                state.running = true;
                Status::Running
            }
        }
    }

    #[inline]
    fn halt(&self, state: &mut ActionState, ctx: &mut Ctx<'_, S>) {
        state.running = false;
        // Only an async action's leaf starts instructions (a constant test: a sync leaf's halt
        // has no cancelling path to carry).
        if A::ENTRY.is_async()
            && let Some(id) = state.pending.take()
        {
            // The host aborts the run: it must not overlap the leaf's next activation.
            ctx.emit(Directive::CancelInstruction { id });
        }
        if let Some(hook) = A::ON_HALT {
            let (blackboard, out) = ctx.state_and_out();
            run_halt_hook(hook, blackboard, out);
        }
    }

    /// A sync action that never ends in progress never runs between ticks, whatever a
    /// restored checkpoint says.
    #[inline]
    fn is_running(&self, state: &ActionState) -> bool {
        (A::MAY_BE_IN_PROGRESS || A::ENTRY.is_async()) && state.running
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Action(A::NAME)
    }

    fn visit(&self, state: &ActionState, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Action(A::NAME),
            running: self.is_running(state),
        });
    }
}
