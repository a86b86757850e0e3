//! Errors: what an action reports ([`ActionError`]) and what an agent reports ([`AgentError`]).
//!
//! Both are plain data (serde, `Clone`) because they travel inside [`Directive::Error`] to the host,
//! into logs and checkpoints. The original `std::error::Error` source of an action error is kept
//! for `source()` chains but is not serialized; its message is.
//!
//! [`Directive::Error`]: crate::Directive::Error

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What kind of failure an [`ActionError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ActionErrorKind {
    /// The action ran and reported a failure.
    Failed,
    /// The parameters did not deserialize into the action's parameter type.
    InvalidParams,
    /// The action did not finish within its timeout.
    Timeout,
    /// The action panicked; the panic was caught and the state left as it was.
    Panicked,
    /// A state operation returned by the action could not be applied.
    StateOp,
}

impl fmt::Display for ActionErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActionErrorKind::Failed => "failed",
            ActionErrorKind::InvalidParams => "invalid parameters",
            ActionErrorKind::Timeout => "timeout",
            ActionErrorKind::Panicked => "panicked",
            ActionErrorKind::StateOp => "state operation failed",
        })
    }
}

/// The typed failure of an action.
///
/// Action functions may return any `std::error::Error + Send + Sync + 'static` (for example a
/// `thiserror` enum); it is converted with [`IntoActionError`] and kept as the [`source`]. Only
/// errors marked [`retryable`](ActionError::retryable) are retried by the executor.
///
/// ```
/// use agent_runtime::ActionError;
/// let e = ActionError::new("card declined");
/// assert_eq!(e.to_string(), "card declined");
/// assert!(!e.is_retryable());
/// assert!(ActionError::retryable("gateway busy").is_retryable());
/// ```
///
/// [`source`]: std::error::Error::source
#[derive(Clone, Serialize, Deserialize)]
pub struct ActionError {
    kind: ActionErrorKind,
    // Borrowed for the runtime's fixed messages (a tree action returning `failure`), so a
    // failure that is only a status costs no allocation.
    message: Cow<'static, str>,
    #[serde(default)]
    retryable: bool,
    #[serde(skip)]
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

impl ActionError {
    /// A non-retryable failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self::with_kind(ActionErrorKind::Failed, message)
    }

    /// A failure the executor may retry (a transient fault: a busy service, a dropped connection).
    pub fn retryable(message: impl Into<String>) -> Self {
        Self::new(message).with_retryable(true)
    }

    /// A failure of the given kind.
    pub fn with_kind(kind: ActionErrorKind, message: impl Into<String>) -> Self {
        ActionError {
            kind,
            message: Cow::Owned(message.into()),
            retryable: false,
            source: None,
        }
    }

    /// A failure with a fixed message: nothing is allocated.
    pub const fn fixed(kind: ActionErrorKind, message: &'static str) -> Self {
        ActionError {
            kind,
            message: Cow::Borrowed(message),
            retryable: false,
            source: None,
        }
    }

    /// Wraps a typed error, keeping it as the source and its `Display` as the message.
    pub fn from_error<E: StdError + Send + Sync + 'static>(error: E) -> Self {
        error.into_action_error()
    }

    /// Marks this error retryable or not.
    #[must_use]
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// The parameters of `action` did not deserialize.
    pub fn invalid_params(action: &str, error: impl fmt::Display) -> Self {
        Self::with_kind(
            ActionErrorKind::InvalidParams,
            format!("invalid parameters for `{action}`: {error}"),
        )
    }

    /// The action did not finish within `timeout`. Timeouts are retryable.
    pub fn timeout(action: &str, timeout: std::time::Duration) -> Self {
        Self::with_kind(
            ActionErrorKind::Timeout,
            format!("`{action}` did not finish within {timeout:?}"),
        )
        .with_retryable(true)
    }

    /// The action panicked with this payload.
    pub fn panicked(action: &str, payload: &(dyn std::any::Any + Send)) -> Self {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string payload".to_string());
        Self::with_kind(
            ActionErrorKind::Panicked,
            format!("`{action}` panicked: {}", crate::quote::clip(&detail)),
        )
    }

    /// The kind of failure.
    pub fn kind(&self) -> ActionErrorKind {
        self.kind
    }

    /// The message shown to users.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the executor may retry the action after this error.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }

    /// The original typed error, when the action returned one and it was `E`.
    pub fn downcast_ref<E: StdError + 'static>(&self) -> Option<&E> {
        self.source.as_deref().and_then(|s| s.downcast_ref::<E>())
    }
}

impl fmt::Debug for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("retryable", &self.retryable)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for ActionError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

impl PartialEq for ActionError {
    /// Errors compare by kind, message and retryability; sources are not compared.
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.message == other.message
            && self.retryable == other.retryable
    }
}

/// Conversion of an action function's error type into an [`ActionError`].
///
/// Implemented for every `std::error::Error + Send + Sync + 'static`, so a `thiserror` enum works
/// as is; an `ActionError` converts to itself unchanged.
pub trait IntoActionError {
    /// Performs the conversion.
    fn into_action_error(self) -> ActionError;
}

impl<E: StdError + Send + Sync + 'static> IntoActionError for E {
    fn into_action_error(self) -> ActionError {
        let boxed: Box<dyn StdError + Send + Sync> = Box::new(self);
        match boxed.downcast::<ActionError>() {
            Ok(own) => *own,
            Err(other) => ActionError {
                kind: ActionErrorKind::Failed,
                message: Cow::Owned(other.to_string()),
                retryable: false,
                source: Some(Arc::from(other)),
            },
        }
    }
}

/// A name an [`AgentError`] carries (a state, an event, a guard, an action): borrowed from the
/// agent's generated tables when the error is built, so refusing an event allocates nothing;
/// owned when it comes back from JSON.
pub type Name = Cow<'static, str>;

/// A list of names an [`AgentError`] carries, borrowed from a generated table like [`Name`].
///
/// ```
/// use agent_runtime::error::{Name, Names};
/// let accepted: Names = Names::Borrowed(&[Name::Borrowed("start"), Name::Borrowed("poke")]);
/// assert_eq!(accepted, vec!["start", "poke"]);
/// ```
pub type Names = Cow<'static, [Name]>;

/// Where an error arose; travels with [`Directive::Error`](crate::Directive::Error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorContext {
    /// While running an instruction.
    Instruction {
        /// The instruction's id.
        id: String,
        /// The action (or event) it named.
        action: String,
    },
    /// While routing a signal.
    Signal {
        /// The signal's id.
        id: String,
        /// The signal's type.
        signal_type: String,
    },
    /// While ticking the strategy.
    Tick,
    /// Inside the strategy itself.
    Strategy,
    /// While the host executed a directive.
    Directive {
        /// The directive's kind (`"emit"`, `"spawn_agent"`, a custom kind).
        directive: String,
    },
}

impl ErrorContext {
    /// Running `instruction`; its id and action name are kept cut (see
    /// [`clip`](crate::quote::clip)), since both may come from a caller.
    pub fn instruction(instruction: &crate::Instruction) -> Self {
        ErrorContext::Instruction {
            id: crate::quote::clip(&instruction.id),
            action: crate::quote::clip(&instruction.action),
        }
    }
}

/// An error an agent reports as a [`Directive::Error`](crate::Directive::Error).
///
/// The agent is unchanged whenever one of these is produced.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentError {
    /// An action failed; its changes were discarded.
    #[error("action `{action}` failed: {error}")]
    Action {
        /// The action's name.
        action: Name,
        /// Why it failed.
        error: ActionError,
    },
    /// An instruction named an action this agent does not have.
    #[error(
        "unknown action `{name}`; this agent's actions are: {}",
        list_or_none(known)
    )]
    UnknownAction {
        /// The name that was asked for.
        name: String,
        /// The actions the agent does have.
        known: Vec<String>,
    },
    /// No route matched a signal.
    #[error("no route matches signal type `{signal_type}`")]
    NoRoute {
        /// The signal's type.
        signal_type: String,
    },
    /// The agent's routes are invalid.
    #[error("invalid routes: {message}")]
    InvalidRoutes {
        /// What is wrong.
        message: String,
    },
    /// A completion arrived for an instruction that is not in flight.
    #[error("no instruction `{id}` is in flight (a duplicate or stale completion)")]
    UnexpectedCompletion {
        /// The completion's instruction id.
        id: String,
    },
    /// An FSM event the current state has no row for (a terminal state has none).
    #[error(
        "invalid transition: state `{state}` has no row for event `{event}`; {}",
        accepted_events(accepted)
    )]
    InvalidTransition {
        /// The FSM's current state.
        state: Name,
        /// The event.
        event: Name,
        /// The events the state does accept.
        accepted: Names,
    },
    /// Every row for an FSM event in the current state has a guard, and none holds.
    #[error(
        "guard rejected: no guard holds for event `{event}` in state `{state}` (tried {})",
        list_or_none(guards)
    )]
    GuardRejected {
        /// The FSM's current state.
        state: Name,
        /// The event (`after 30m` for a timer row).
        event: Name,
        /// The guards tried, in order.
        guards: Names,
    },
    /// An FSM guard could not run: its parameters did not deserialize from the event's data,
    /// or it panicked (the error's kind is then `Panicked`).
    #[error("guard `{guard}` failed: {error}")]
    GuardFailed {
        /// The guard's name.
        guard: Name,
        /// Why.
        error: ActionError,
    },
    /// An instruction named neither an event of this FSM nor an action of the agent.
    #[error(
        "unknown event `{name}`; this agent's events are: {}; its actions are: {}",
        list_or_none(events),
        list_or_none(actions)
    )]
    UnknownEvent {
        /// The name that was asked for.
        name: String,
        /// The FSM's events.
        events: Names,
        /// The agent's actions.
        actions: Names,
    },
    /// A strategy-specific failure (used by strategies outside this crate).
    #[error("{message}")]
    Strategy {
        /// What went wrong.
        message: String,
    },
    /// The host could not execute a directive (an unknown child, a bad cron expression, a full
    /// parent mailbox, ...). The agent's state is unaffected: directives never change it.
    #[error("directive `{directive}` failed: {message}")]
    Directive {
        /// The directive's kind.
        directive: String,
        /// What went wrong, with a hint.
        message: String,
    },
    /// A behaviour tree's condition panicked; the tree took it as `Failure`.
    #[error("condition `{condition}` failed: {error}")]
    Condition {
        /// The condition's name.
        condition: String,
        /// Why (kind `Panicked`).
        error: ActionError,
    },
    /// A hook failed or panicked: an action's `on_halt` (its changes were discarded), or an AI
    /// strategy's step hook (the whole call was undone; `hook` is the method, e.g.
    /// `on_step_start`).
    #[error("hook `{hook}` failed: {error}")]
    Hook {
        /// The hook's name.
        hook: String,
        /// Why.
        error: ActionError,
    },
    /// A strategy panicked; the agent was put back as it was before the call.
    #[error("strategy `{strategy}` failed: {error}")]
    StrategyPanicked {
        /// The strategy's type name.
        strategy: String,
        /// The panic (kind `Panicked`).
        error: ActionError,
    },
    /// `resume(id, value)` was refused: an unknown or already answered interrupt, or a value
    /// that is not the interrupt's resume type. Nothing changed.
    #[error("{error}")]
    Interrupt {
        /// Why.
        error: crate::interrupt::InterruptError,
    },
    /// The agent cannot be restarted now (see [`Agent::restart`](crate::Agent::restart)).
    #[error("cannot restart agent `{agent}`: {reason}")]
    NotRestartable {
        /// The agent's name.
        agent: String,
        /// Why, with what would make it possible.
        reason: String,
    },
    /// A plugin's pre-routing hook refused the signal; nothing ran.
    #[error("plugin `{plugin}` refused the signal: {reason}")]
    PluginRefused {
        /// The plugin's state key.
        plugin: String,
        /// Why.
        reason: String,
    },
}

/// "it accepts: `a`, `b`", or for a state that only a timer (or nothing) leaves, "it accepts no
/// events" rather than a bare "none".
fn accepted_events(accepted: &[Name]) -> String {
    if accepted.is_empty() {
        "it accepts no events".to_string()
    } else {
        format!("it accepts: {}", list_or_none(accepted))
    }
}

pub(crate) fn list_or_none<T: AsRef<str>>(items: &[T]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items
            .iter()
            .map(|i| format!("`{}`", i.as_ref()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum PaymentError {
        #[error("card `{0}` declined")]
        Declined(String),
    }

    #[test]
    fn typed_errors_keep_their_source_and_message() {
        let e = PaymentError::Declined("4242".into()).into_action_error();
        assert_eq!(e.to_string(), "card `4242` declined");
        assert_eq!(e.kind(), ActionErrorKind::Failed);
        assert!(matches!(
            e.downcast_ref::<PaymentError>(),
            Some(PaymentError::Declined(card)) if card == "4242"
        ));
        assert!(e.source().is_some());
    }

    #[test]
    fn action_error_converts_to_itself() {
        let e = ActionError::retryable("busy").into_action_error();
        assert!(e.is_retryable());
        assert!(e.source().is_none());
    }

    #[test]
    fn unknown_action_lists_known_ones() {
        let e = AgentError::UnknownAction {
            name: "pay".into(),
            known: vec!["charge".into(), "refund".into()],
        };
        assert_eq!(
            e.to_string(),
            "unknown action `pay`; this agent's actions are: `charge`, `refund`"
        );
    }

    #[test]
    fn panics_become_messages() {
        let payload: Box<dyn std::any::Any + Send> = Box::new("boom");
        let e = ActionError::panicked("explode", payload.as_ref());
        assert_eq!(e.kind(), ActionErrorKind::Panicked);
        assert_eq!(e.message(), "`explode` panicked: boom");
    }
}
