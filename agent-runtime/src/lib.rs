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
pub mod directive;
pub mod error;
pub mod exec;
#[cfg(feature = "http")]
pub mod http;
pub mod inspect;
pub mod instruction;
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

    /// Boxes an action future.
    pub fn box_future<F>(f: F) -> BoxFuture<'static, F::Output>
    where
        F: std::future::Future + Send + 'static,
    {
        Box::pin(f)
    }
}
