//! Directives: effects for the host to perform. A directive never changes the agent's state.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::agent::{Agent, AgentSpec, DynAgent};
use crate::ai::{EmbedCall, LlmCall};
use crate::error::{AgentError, ErrorContext};
use crate::instruction::{ExecOptions, Instruction};
use crate::signal::Signal;

/// An effect a strategy asks the host to perform, in order.
///
/// Directives serialize to JSON (for logs, snapshots and tests); a spawned child serializes as its
/// agent name and a custom directive as its kind plus its own JSON.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Directive {
    /// Send a signal to subscribers (and to the parent agent, if any).
    Emit(Signal),
    /// Report an error; the host applies its error policy.
    Error {
        /// What went wrong.
        error: AgentError,
        /// Where.
        context: ErrorContext,
    },
    /// Deliver `signal` back to this agent after `delay`.
    Schedule {
        /// How long to wait.
        delay: Duration,
        /// What to deliver.
        signal: Signal,
    },
    /// Start a child agent under this one.
    SpawnAgent {
        /// How the parent names the child.
        tag: String,
        /// The child to start.
        agent: ChildAgent,
    },
    /// Stop the child with this tag.
    StopChild {
        /// The child's tag.
        tag: String,
    },
    /// Run an async action outside `cmd` and feed its outcome back as an instruction result.
    RunInstruction {
        /// What to run.
        instruction: Instruction,
        /// How (timeout, retries, backoff).
        exec: ExecOptions,
    },
    /// Abort the async instruction `id` started by an earlier `RunInstruction`, if it still
    /// runs: the strategy no longer waits for it (a behaviour tree halted its leaf, an FSM left
    /// the state that started it, an AI request was cancelled while its tools ran). The host
    /// aborts the task, so the work stops and never overlaps a later run of the same action;
    /// a completion that comes back anyway is not delivered. Cancelling an instruction that is
    /// not running (it finished, or was never started) does nothing.
    CancelInstruction {
        /// The instruction's id.
        id: String,
    },
    /// Stop this agent.
    Stop {
        /// Why.
        reason: String,
    },
    /// Deliver `signal` to this agent on a cron schedule.
    Cron {
        /// Names the job, for [`Directive::CronCancel`].
        id: String,
        /// A cron expression.
        expression: String,
        /// What to deliver on each firing.
        signal: Signal,
    },
    /// Cancel a cron job.
    CronCancel {
        /// The job's id.
        id: String,
    },
    /// Call a language model (an AI strategy's turn); the host routes the answer back as
    /// `ai.llm.response` and streams `ai.llm.delta` to subscribers.
    Llm(Box<LlmCall>),
    /// Compute embeddings; the host routes the answer back as `ai.embed.response`.
    Embed(Box<EmbedCall>),
    /// A directive defined outside this crate, executed by an executor the host registers for its
    /// kind.
    Custom(CustomDirective),
}

impl Directive {
    /// An error directive.
    pub fn error(error: AgentError, context: ErrorContext) -> Self {
        Directive::Error { error, context }
    }

    /// A short name of the variant (`"emit"`, `"error"`, ...; a custom directive's kind).
    pub fn kind(&self) -> &str {
        match self {
            Directive::Emit(_) => "emit",
            Directive::Error { .. } => "error",
            Directive::Schedule { .. } => "schedule",
            Directive::SpawnAgent { .. } => "spawn_agent",
            Directive::StopChild { .. } => "stop_child",
            Directive::RunInstruction { .. } => "run_instruction",
            Directive::CancelInstruction { .. } => "cancel_instruction",
            Directive::Stop { .. } => "stop",
            Directive::Cron { .. } => "cron",
            Directive::CronCancel { .. } => "cron_cancel",
            Directive::Llm(_) => "llm_call",
            Directive::Embed(_) => "embed_call",
            Directive::Custom(c) => c.kind(),
        }
    }

    /// The error, if this is an error directive.
    pub fn as_error(&self) -> Option<&AgentError> {
        match self {
            Directive::Error { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl Serialize for Directive {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Directive", 2)?;
        st.serialize_field("directive", self.kind())?;
        match self {
            Directive::Emit(signal) => st.serialize_field("signal", signal)?,
            Directive::Error { error, context } => {
                st.serialize_field("message", &error.to_string())?;
                st.serialize_field("error", error)?;
                st.serialize_field("context", context)?;
            }
            Directive::Schedule { delay, signal } => {
                st.serialize_field("delay_ms", &delay.as_millis())?;
                st.serialize_field("signal", signal)?;
            }
            Directive::SpawnAgent { tag, agent } => {
                st.serialize_field("tag", tag)?;
                st.serialize_field("agent", agent.name())?;
            }
            Directive::StopChild { tag } => st.serialize_field("tag", tag)?,
            Directive::RunInstruction { instruction, exec } => {
                st.serialize_field("instruction", instruction)?;
                st.serialize_field("exec", exec)?;
            }
            Directive::CancelInstruction { id } => st.serialize_field("id", id)?,
            Directive::Stop { reason } => st.serialize_field("reason", reason)?,
            Directive::Cron {
                id,
                expression,
                signal,
            } => {
                st.serialize_field("id", id)?;
                st.serialize_field("expression", expression)?;
                st.serialize_field("signal", signal)?;
            }
            Directive::CronCancel { id } => st.serialize_field("id", id)?,
            Directive::Llm(call) => st.serialize_field("call", call)?,
            Directive::Embed(call) => st.serialize_field("call", call)?,
            Directive::Custom(c) => st.serialize_field("data", &c.0.to_json())?,
        }
        st.end()
    }
}

/// A child agent to spawn: a factory, so the directive can be cloned and each execution starts a
/// fresh copy of the agent as it was when the directive was made.
#[derive(Clone)]
pub struct ChildAgent {
    name: &'static str,
    make: Arc<dyn Fn() -> Box<dyn DynAgent> + Send + Sync>,
}

impl ChildAgent {
    /// A child that starts as a copy of `agent`.
    pub fn new<S: AgentSpec>(agent: Agent<S>) -> Self {
        ChildAgent {
            name: S::NAME,
            make: Arc::new(move || Box::new(agent.clone())),
        }
    }

    /// The child's agent type name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A fresh instance of the child.
    pub fn instantiate(&self) -> Box<dyn DynAgent> {
        (self.make)()
    }
}

impl fmt::Debug for ChildAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildAgent")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The behaviour of a user-defined directive.
pub trait CustomDirectiveKind: fmt::Debug + Send + Sync + Any {
    /// The kind an executor is registered for (`"notify.slack"`).
    fn kind(&self) -> &str;
    /// The directive as JSON, for logs.
    fn to_json(&self) -> Value;
}

/// A user-defined directive, cheap to clone.
#[derive(Debug, Clone)]
pub struct CustomDirective(Arc<dyn CustomDirectiveKind>);

impl CustomDirective {
    /// Wraps a user directive.
    pub fn new(directive: impl CustomDirectiveKind) -> Self {
        CustomDirective(Arc::new(directive))
    }

    /// The kind an executor is registered for.
    pub fn kind(&self) -> &str {
        self.0.kind()
    }

    /// The directive as JSON.
    pub fn to_json(&self) -> Value {
        self.0.to_json()
    }

    /// The user's directive, if it is a `T`.
    pub fn downcast_ref<T: CustomDirectiveKind>(&self) -> Option<&T> {
        let any: &dyn Any = self.0.as_ref();
        any.downcast_ref::<T>()
    }
}

impl From<CustomDirective> for Directive {
    fn from(c: CustomDirective) -> Self {
        Directive::Custom(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug)]
    struct Notify {
        channel: String,
    }

    impl CustomDirectiveKind for Notify {
        fn kind(&self) -> &str {
            "notify"
        }
        fn to_json(&self) -> Value {
            json!({"channel": self.channel})
        }
    }

    #[test]
    fn custom_directives_keep_their_type() {
        let d: Directive = CustomDirective::new(Notify {
            channel: "ops".into(),
        })
        .into();
        assert_eq!(d.kind(), "notify");
        let Directive::Custom(c) = &d else {
            unreachable!()
        };
        assert_eq!(c.downcast_ref::<Notify>().unwrap().channel, "ops");
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"directive": "notify", "data": {"channel": "ops"}})
        );
    }

    #[test]
    fn errors_serialize_with_their_message() {
        let d = Directive::error(
            AgentError::NoRoute {
                signal_type: "a.b".into(),
            },
            ErrorContext::Tick,
        );
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["directive"], "error");
        assert_eq!(v["message"], "no route matches signal type `a.b`");
        assert_eq!(v["context"], json!({"kind": "tick"}));
    }
}
