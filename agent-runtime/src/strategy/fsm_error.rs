//! [`FsmError`]: why `agent.cmd(event)` took no transition.
//!
//! A device's stream is mostly events the current state does not accept, so a refusal is plain
//! data: the state and the event as the generated enums' values (two bytes, nothing allocated,
//! nothing to drop). Names and the list of accepted events are looked up in the generated
//! tables only when the error is displayed or turned into an [`AgentError`].

use std::fmt;

use super::fsm::{FsmName, FsmSpec};
use crate::error::{AgentError, Name, Names};

/// Why an FSM agent's typed command (`agent.cmd(OrderEvent::Pay)`) took no transition. Either
/// way the agent is exactly as it was.
///
/// Refusals are plain data; failures carry the agent's error. `?` turns it into an
/// [`AgentError`] (what a signal's refusal reports), with the same message. The
/// `stratagem::guide::fsm` chapter shows it on a door:
/// `door.cmd(DoorEvent::Close)` on a closed door is
/// `Err(FsmError::InvalidTransition { state: DoorState::Closed, event: DoorEvent::Close })`,
/// displayed as ``invalid transition: state `Closed` has no row for event `close`; it accepts:
/// `open` ``.
#[non_exhaustive]
pub enum FsmError<S: FsmSpec> {
    /// The current state has no row for the event (a terminal state has none).
    /// [`accepted`](FsmError::accepted) lists the events it does accept.
    InvalidTransition {
        /// The machine's current state.
        state: S::State,
        /// The event.
        event: S::Event,
    },
    /// Every row of the event in the current state has a guard, and none holds.
    /// [`guards`](FsmError::guards) lists the guards tried.
    GuardRejected {
        /// The machine's current state.
        state: S::State,
        /// The event.
        event: S::Event,
    },
    /// A guard could not run ([`AgentError::GuardFailed`]) or an action failed
    /// ([`AgentError::Action`]); its changes were discarded. Boxed: refusals stay two bytes.
    Failed(Box<AgentError>),
}

impl<S: FsmSpec> FsmError<S> {
    /// The events the state accepts, in declaration order (for [`FsmError::InvalidTransition`];
    /// empty otherwise).
    pub fn accepted(&self) -> &'static [Name] {
        match self {
            FsmError::InvalidTransition { state, .. } => S::accepted(*state),
            _ => &[],
        }
    }

    /// The guards tried, in order (for [`FsmError::GuardRejected`]; empty otherwise).
    pub fn guards(&self) -> &'static [Name] {
        match self {
            FsmError::GuardRejected { state, event } => S::guards(*state, Some(*event)),
            _ => &[],
        }
    }

    /// The same error as an [`AgentError`], names borrowed from the generated tables.
    pub fn to_agent_error(&self) -> AgentError {
        match self {
            FsmError::InvalidTransition { state, event } => AgentError::InvalidTransition {
                state: Name::Borrowed(state.name()),
                event: Name::Borrowed(event.name()),
                accepted: Names::Borrowed(self.accepted()),
            },
            FsmError::GuardRejected { state, event } => AgentError::GuardRejected {
                state: Name::Borrowed(state.name()),
                event: Name::Borrowed(event.name()),
                guards: Names::Borrowed(self.guards()),
            },
            FsmError::Failed(error) => (**error).clone(),
        }
    }
}

impl<S: FsmSpec> From<FsmError<S>> for AgentError {
    fn from(error: FsmError<S>) -> Self {
        match error {
            FsmError::Failed(error) => *error,
            refused => refused.to_agent_error(),
        }
    }
}

impl<S: FsmSpec> fmt::Display for FsmError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsmError::Failed(error) => error.fmt(f),
            refused => refused.to_agent_error().fmt(f),
        }
    }
}

impl<S: FsmSpec> fmt::Debug for FsmError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsmError::InvalidTransition { state, event } => f
                .debug_struct("InvalidTransition")
                .field("state", state)
                .field("event", event)
                .finish(),
            FsmError::GuardRejected { state, event } => f
                .debug_struct("GuardRejected")
                .field("state", state)
                .field("event", event)
                .finish(),
            FsmError::Failed(error) => f.debug_tuple("Failed").field(error).finish(),
        }
    }
}

impl<S: FsmSpec> Clone for FsmError<S> {
    fn clone(&self) -> Self {
        match self {
            FsmError::InvalidTransition { state, event } => FsmError::InvalidTransition {
                state: *state,
                event: *event,
            },
            FsmError::GuardRejected { state, event } => FsmError::GuardRejected {
                state: *state,
                event: *event,
            },
            FsmError::Failed(error) => FsmError::Failed(error.clone()),
        }
    }
}

impl<S: FsmSpec> PartialEq for FsmError<S> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                FsmError::InvalidTransition { state, event },
                FsmError::InvalidTransition { state: s, event: e },
            )
            | (
                FsmError::GuardRejected { state, event },
                FsmError::GuardRejected { state: s, event: e },
            ) => state == s && event == e,
            (FsmError::Failed(a), FsmError::Failed(b)) => a == b,
            _ => false,
        }
    }
}

impl<S: FsmSpec> std::error::Error for FsmError<S> {}
