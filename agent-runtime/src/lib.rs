//! The runtime of Stratagem agents.
//!
//! An [`Agent<S>`] is a typed state `S` plus its strategy's state. A [`Strategy`] turns
//! [`Instruction`]s into state changes and [`Directive`]s (effects for the host) in a pure `cmd`.
//! Actions ([`Action`]) are the units of work; signals ([`Signal`], CloudEvents) reach actions
//! and events through [`Route`]s. The [`Runner`] executes async actions in-process; the
//! [`server`] runs agents for real on tokio (mailbox, timers, ticks, children, error policies)
//! and [`store`] keeps their checkpoints.
//!
//! Most users reach this crate through the `stratagem` facade and its `#[agent]`/`#[action]`
//! macros; everything here also works by hand.

#![forbid(unsafe_code)]

pub mod action;
pub mod agent;
pub mod ai;
pub mod bt;
pub mod definition;
pub mod directive;
pub mod directives;
pub mod error;
pub mod exec;
#[cfg(feature = "http")]
pub mod http;
pub mod inspect;
pub mod instruction;
pub mod interrupt;
mod isolation;
pub mod journal;
pub mod params;
pub mod plugin;
pub mod quote;
pub mod route;
pub mod runner;
pub mod server;
pub mod signal;
pub mod snapshot;
pub mod state_op;
pub mod store;
pub mod strategy;
mod trace;

#[cfg(test)]
mod testing;

pub use action::{
    Action, ActionEntry, ActionFn, ActionSpec, AsyncAction, HaltHook, IntoOutcome, NoParams,
    Outcome, SyncAction,
};
pub use agent::{Agent, AgentSpec, Command, DynAgent, StrategyState};
pub use directive::{ChildAgent, CustomDirective, CustomDirectiveKind, Directive};
pub use directives::Directives;
pub use error::{ActionError, ActionErrorKind, AgentError, ErrorContext, IntoActionError};
pub use instruction::{ExecOptions, Instruction};
pub use route::{Route, RouteError, RoutePattern, RouteSpec, RouteTarget, Router};
pub use runner::Runner;
pub use signal::{Signal, SignalError};
pub use snapshot::{Snapshot, Status};
pub use state_op::{StateOp, StatePath};
pub use strategy::{
    BehaviorTree, BehaviorTreeState, Direct, DirectState, Fsm, FsmError, FsmSpec, FsmState,
    Strategy, TreeAgent,
};

/// Items generated code relies on; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use futures::future::BoxFuture;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::sync::OnceLock;
    pub use std::time::Duration;

    pub use crate::bt::arg_check::{
        ArgProblem, ParamsOf, ParamsShape, check_arg, check_required, shape as params_shape,
    };

    /// What an action name a macro uses resolves to when it names an action (or any type): the
    /// macros call `Name::__stratagem_resolved()`, which their fallback for a plain function
    /// (a name without a type) answers with an inherent function of its own instead.
    pub trait ResolvedAction {
        /// This impl's answer: [`Resolved`].
        fn __stratagem_resolved() -> Resolved {
            Resolved
        }
    }

    impl<T: ?Sized> ResolvedAction for T {}

    /// The answer of [`ResolvedAction`]: the name is a type.
    pub struct Resolved;

    /// What `#[action]` checks its parameter type against: a type that is not `Deserialize`
    /// and `JsonSchema` is reported with this explanation, at the parameter.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be the parameters of an action",
        label = "taken by value, so read as the action's parameters",
        note = "if `{Self}` is the agent's state, take it by reference: `&mut {Self}`, or `&{Self}` (an async action takes `&{Self}`)",
        note = "parameters are a type that derives `Deserialize` and `JsonSchema`"
    )]
    pub trait ActionParams {}

    #[diagnostic::do_not_recommend]
    impl<T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static> ActionParams for T {}

    /// Names `P` where `#[action]` read its parameter type.
    pub const fn action_params<P: ActionParams>() {}

    /// What a `.agent` file's state field without a default needs of its type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` has no default value",
        label = "a field declared without a default takes its type's `Default`",
        note = "give the field a default in the `.agent` file (`name: Type = value`), or implement `Default` for `{Self}`"
    )]
    pub trait FieldDefault {}

    #[diagnostic::do_not_recommend]
    impl<T: Default> FieldDefault for T {}

    /// Names `T` where a `.agent` file declared a field of it without a default.
    pub const fn field_default<T: FieldDefault>() {}

    /// What an interrupt's payload type needs: built from the agent's state, serialized.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be the payload of an interrupt of `{S}`",
        label = "the payload an interrupt shows is built from the agent's state",
        note = "implement `From<&{S}>` for `{Self}`, and derive `Serialize`"
    )]
    pub trait InterruptPayload<S> {
        /// The payload for this state, as JSON.
        fn build(state: &S) -> Result<serde_json::Value, crate::ActionError>;
    }

    #[diagnostic::do_not_recommend]
    impl<S, P: for<'a> From<&'a S> + serde::Serialize> InterruptPayload<S> for P {
        fn build(state: &S) -> Result<serde_json::Value, crate::ActionError> {
            serde_json::to_value(P::from(state)).map_err(crate::ActionError::from_error)
        }
    }

    /// What an interrupt's resume type needs.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be the resume type of an interrupt",
        label = "the answer to an interrupt is read from JSON",
        note = "derive `Deserialize` for `{Self}`"
    )]
    pub trait ResumeValue {
        /// Whether `value` decodes as `Self` (strictly, as an action's parameters).
        fn check(name: &str, value: &serde_json::Value) -> Result<(), crate::ActionError>;
    }

    #[diagnostic::do_not_recommend]
    impl<T: serde::de::DeserializeOwned> ResumeValue for T {
        fn check(name: &str, value: &serde_json::Value) -> Result<(), crate::ActionError> {
            crate::action::decode_params_ref::<T>(name, value).map(drop)
        }
    }

    /// What the action of an `ask` leaf needs of its parameter type: to be the answer type.
    #[diagnostic::on_unimplemented(
        message = "the action of an `ask` leaf takes `{Self}`, not its answer `{T}`",
        label = "runs with the person's answer, a `{T}`, as its parameters",
        note = "give the action a parameter of type `{T}`, or declare the answer as `-> {Self}`"
    )]
    pub trait IsAnswer<T> {}

    #[diagnostic::do_not_recommend]
    impl<T> IsAnswer<T> for T {}

    /// What the action of an `ask` leaf needs: to run inside the tick.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be the action of an `ask` leaf",
        label = "runs inside the tick that takes the answer",
        note = "an `ask` leaf runs a synchronous `#[action]` (not an `async fn`)"
    )]
    pub trait AnswerAction<S> {}

    #[diagnostic::do_not_recommend]
    impl<S, A: crate::action::SyncAction<S>> AnswerAction<S> for A {}

    /// Names the action `A` of an `ask` leaf whose answer type is `R`.
    pub const fn answer_action<S, R, A>()
    where
        A: AnswerAction<S> + crate::Action<S>,
        <A as crate::Action<S>>::Params: IsAnswer<R>,
    {
    }

    /// Builds interrupt `name`'s payload `P` from `state` (a panic is an error).
    pub fn interrupt_payload<S, P: InterruptPayload<S>>(
        name: &str,
        state: &S,
    ) -> Result<serde_json::Value, crate::ActionError> {
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| P::build(state)));
        built.unwrap_or_else(|payload| Err(crate::ActionError::panicked(name, payload.as_ref())))
    }

    /// Whether `value` decodes as interrupt `name`'s resume type `R`.
    pub fn check_resume<R: ResumeValue>(
        name: &str,
        value: &serde_json::Value,
    ) -> Result<(), crate::ActionError> {
        R::check(name, value)
    }

    /// Boxes an action future.
    pub fn box_future<F>(f: F) -> BoxFuture<'static, F::Output>
    where
        F: std::future::Future + Send + 'static,
    {
        Box::pin(f)
    }
}
