//! `ask name(Payload) -> Answer do action`: a leaf that stops and waits for a person.

use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::leaf::run_draft;
use super::{Ctx, Node, NodeKind, Status, Visit};
use crate::action::{Action, ActionFn};
use crate::directive::Directive;
use crate::error::{ActionError, AgentError, ErrorContext};
use crate::interrupt::InterruptSpec;

/// Progress of an `ask` leaf: the interrupt it waits for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AskState {
    /// The id of the pending interrupt; `None` when the leaf is not waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
}

/// `ask name(P) -> R do action`: raises interrupt `name` and is `Running` until it is
/// answered, then runs the sync action `A` with the answer (an `R`) as its parameters.
/// Generated trees build it with `__private::interrupt_payload::<S, P>` as its payload.
///
/// On its first tick the payload `P` is built from the blackboard (`P: From<&S>`), the
/// interrupt is recorded as pending in the tree's run (so it is in every checkpoint) and a
/// [`Directive::Interrupt`] goes to the host, exactly as an FSM row's `ask` does. The leaf then
/// returns `Running` on every tick until `resume(id, value)` delivers the answer, checked as an
/// `R` before the tree sees it; the action's result is the leaf's status (`Ok` is `Success`, a
/// failure `Failure`; the run is over, so `Running` counts as `Success`). A payload that cannot
/// be built is a `Failure` reported as an action error. Halting the leaf withdraws its
/// interrupt: an answer to it is then refused.
pub struct Ask<S, A> {
    spec: InterruptSpec,
    payload: PayloadFn<S>,
    action: PhantomData<fn() -> A>,
}

/// Builds an interrupt's payload from the blackboard.
pub type PayloadFn<S> = fn(&str, &S) -> Result<serde_json::Value, ActionError>;

impl<S, A> Ask<S, A> {
    /// A leaf raising interrupt `spec` (its payload and resume types as written, for the
    /// interrupt's signal and errors) with the payload `payload` builds, then running `A`.
    pub const fn new(spec: InterruptSpec, payload: PayloadFn<S>) -> Self {
        Ask {
            spec,
            payload,
            action: PhantomData,
        }
    }

    /// The interrupt the leaf raises.
    pub fn spec(&self) -> &InterruptSpec {
        &self.spec
    }
}

impl<S, A> Clone for Ask<S, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, A> Copy for Ask<S, A> {}

impl<S, A> fmt::Debug for Ask<S, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Ask").field(&self.spec).finish()
    }
}

impl<S, A> Node<S> for Ask<S, A>
where
    S: Clone + Serialize + DeserializeOwned + 'static,
    A: Action<S>,
{
    type State = AskState;

    fn tick(&self, state: &mut AskState, ctx: &mut Ctx<'_, S>) -> Status {
        let Some(id) = &state.pending else {
            let name = self.spec.name;
            return match (self.payload)(name, ctx.state()) {
                Ok(payload) => {
                    state.pending = Some(ctx.raise_interrupt(&self.spec, payload));
                    Status::Running
                }
                Err(error) => {
                    ctx.emit(Directive::error(
                        AgentError::Action {
                            action: name.into(),
                            error,
                        },
                        ErrorContext::Tick,
                    ));
                    Status::Failure
                }
            };
        };
        let Some(answer) = ctx.take_answer(id) else {
            return Status::Running;
        };
        state.pending = None;
        let entry = A::ENTRY;
        let (blackboard, out) = ctx.parts();
        let ran = run_draft(
            A::NAME,
            A::WRITES_STATE,
            blackboard,
            out,
            |draft| match entry.run {
                ActionFn::Sync(run) => Some(run(draft, answer)),
                ActionFn::Async(_) => None,
            },
        );
        match ran {
            Ok(_) => Status::Success,
            Err(None) => Status::Failure,
            Err(Some(error)) => {
                ctx.emit(Directive::error(
                    AgentError::Action {
                        action: A::NAME.into(),
                        error: *error,
                    },
                    ErrorContext::Tick,
                ));
                Status::Failure
            }
        }
    }

    fn halt(&self, state: &mut AskState, ctx: &mut Ctx<'_, S>) {
        if let Some(id) = state.pending.take() {
            ctx.withdraw_interrupt(&id);
        }
    }

    #[inline]
    fn is_running(&self, state: &AskState) -> bool {
        state.pending.is_some()
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Ask(self.spec.name)
    }

    fn visit(&self, state: &AskState, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Ask(self.spec.name),
            running: state.pending.is_some(),
        });
    }
}
