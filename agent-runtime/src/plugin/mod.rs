//! Plugins: capabilities mounted on an agent, whatever its strategy.
//!
//! A plugin brings a slice of state (created by [`Plugin::mount`] from its configuration and
//! kept in the agent's checkpoint under [`Plugin::STATE_KEY`]), routes from signal patterns to
//! its own actions (at [`priority::PLUGIN`], below the agent's
//! and the strategy's routes), a pre-routing hook that may rewrite or refuse each incoming
//! signal, and an outbound hook that sees every signal the agent emits.
//!
//! An agent lists its plugins in [`AgentSpec::plugins`](crate::AgentSpec::plugins) (`#[agent(
//! plugins = [...])]` generates it). [`Agent::handle_signal`](crate::Agent::handle_signal)
//! runs them, so they work for every strategy, in process and in the server:
//!
//! 1. the pre-routing hooks, in mount order; a hook may change the signal (the next hook sees
//!    the change), refuse it ([`AgentError::PluginRefused`](crate::AgentError::PluginRefused),
//!    nothing else runs) or hold it until a model answers ([`Flow::Defer`]);
//! 2. routing: the agent's, the strategy's and the plugins' routes; a route to a plugin action
//!    runs [`Plugin::run`] on the plugin's state, the others run through the strategy, in route
//!    order. A signal a hook rewrote to a type nothing routes is emitted as it is (a refusal
//!    rewritten to `ai.request.error` reaches the caller and the subscribers);
//! 3. the outbound hooks, in mount order, on every `Emit` directive the step produced (also
//!    after `cmd`, `tick` and `init`).
//!
//! A plugin action may start the agent's async actions as tools ([`PluginTools::start`]); when
//! the host's completion of one comes back through `cmd`, the plugin that
//! [awaits](Plugin::awaits_tool) it gets the result ([`Plugin::tool_completed`]) and the
//! strategy never sees it.

mod slice;
mod stack;
#[cfg(test)]
mod tests;
mod tools;

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::directive::Directive;
use crate::error::ActionError;
use crate::instruction::Instruction;
use crate::route::priority;
use crate::signal::Signal;

pub(crate) use slice::SavedStates;
pub use slice::{PluginSlice, PluginStates};
pub use stack::{DynPlugin, PluginStack};
pub(crate) use tools::{AgentTools, checked_arguments, run_sync_tool, unknown_tool};
pub use tools::{NoTools, PluginTools, ToolDone, ToolRun};

/// A capability an agent mounts. The implementing type is the plugin's configuration: its
/// fields are the options (`Quota { max_requests = 50 }` sets one, [`Default`] gives the
/// others), and serde reads it from JSON ([`configure`]).
///
/// ```
/// use agent_runtime::plugin::{Plugin, PluginCall, PluginRoute};
/// use agent_runtime::{ActionError, Directive, Signal};
/// use serde::{Deserialize, Serialize};
///
/// /// Counts the signals the agent receives.
/// #[derive(Debug, Clone, Default, Serialize, Deserialize)]
/// #[serde(default, deny_unknown_fields)]
/// pub struct Counter {
///     pub start: u64,
/// }
///
/// impl Plugin for Counter {
///     const NAME: &'static str = "Counter";
///     const STATE_KEY: &'static str = "counter";
///     type State = u64;
///
///     fn mount(&self) -> u64 {
///         self.start
///     }
///     fn routes(&self) -> Vec<PluginRoute> {
///         vec![PluginRoute::new("counter.get", "get")]
///     }
///     fn before_route(
///         &self,
///         seen: &mut u64,
///         _signal: &mut std::borrow::Cow<'_, Signal>,
///     ) -> agent_runtime::plugin::Flow {
///         *seen += 1;
///         agent_runtime::plugin::Flow::Continue
///     }
///     fn run(&self, seen: &mut u64, _call: PluginCall<'_>) -> Result<Vec<Directive>, ActionError> {
///         Ok(vec![Directive::Emit(Signal::new("counter.value", serde_json::json!(*seen)))])
///     }
/// }
/// ```
pub trait Plugin:
    Clone + fmt::Debug + Default + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The plugin's name as declared (`Quota`).
    const NAME: &'static str;
    /// Where its state lives in the checkpoint (`quota`); also the prefix of its actions'
    /// names (`quota.status`). Two plugins of one agent never share a key.
    const STATE_KEY: &'static str;
    /// The plugin's slice of the agent's state.
    type State: Clone + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// The state a freshly created agent starts with. A thawed agent keeps its saved state.
    fn mount(&self) -> Self::State;

    /// The plugin's routes (pattern -> one of its actions).
    fn routes(&self) -> Vec<PluginRoute> {
        Vec::new()
    }

    /// Sees each incoming signal before routing (in mount order): may rewrite it, refuse it
    /// or hold it. The signal is borrowed until a hook rewrites it: call
    /// [`Cow::to_mut`] only to change it (that copies it once per step, for every later
    /// hook), so a step no hook changes copies nothing.
    fn before_route(&self, state: &mut Self::State, signal: &mut Cow<'_, Signal>) -> Flow {
        let _ = (state, signal);
        Flow::Continue
    }

    /// Whether [`before_route`](Plugin::before_route) may change anything (the signal, the
    /// plugin's state, the flow) when it sees a model's reply built by the host: an
    /// `ai.llm.response` signal carrying a response or an error. `true` unless the plugin says
    /// otherwise; when every plugin of an agent says `false`, a host may hand such replies to
    /// the strategy typed, without building their JSON and without calling this hook.
    fn changes_model_replies(&self) -> bool {
        true
    }

    /// Whether [`after_emit`](Plugin::after_emit) needs to see the AI strategies'
    /// informational events (`ai.usage`, `ai.tool.started`, `ai.tool.result`). `true` unless
    /// the plugin says otherwise; when no plugin of an agent does and nothing else can hear
    /// them (no subscriber, watcher, parent, transport or journal), the agent server lets the
    /// strategy leave them out.
    fn hears_ai_events(&self) -> bool {
        true
    }

    /// Sees each signal the agent emits (in mount order) and may rewrite it.
    fn after_emit(&self, state: &mut Self::State, signal: &mut Signal) {
        let _ = (state, signal);
    }

    /// Whether `id` is an async tool this plugin started ([`PluginTools::start`]) and still
    /// waits for: its completion then goes to [`tool_completed`](Plugin::tool_completed)
    /// instead of the strategy.
    fn awaits_tool(&self, state: &Self::State, id: &str) -> bool {
        let _ = (state, id);
        false
    }

    /// Takes the result of an async tool the plugin started, once the host ran it (its state
    /// changes and directives already applied to the agent).
    fn tool_completed(&self, state: &mut Self::State, done: ToolDone<'_>) -> Vec<Directive> {
        let _ = (state, done);
        Vec::new()
    }

    /// Runs one of the plugin's actions (a route of [`routes`](Plugin::routes) matched). The
    /// runtime does not copy the state around the call (it may be large): check the
    /// parameters before changing anything, so that an `Err` leaves the state as it was.
    fn run(
        &self,
        state: &mut Self::State,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        let _ = state;
        Err(ActionError::new(format!(
            "plugin `{}` has no action `{}`",
            Self::NAME,
            call.action
        )))
    }
}

/// A plugin's configuration read from JSON: missing options take their defaults, as serde
/// reads them.
pub fn configure<P: Plugin>(options: Value) -> Result<P, serde_json::Error> {
    serde_json::from_value(options)
}

/// What a pre-routing hook decided.
#[derive(Debug, Clone)]
pub enum Flow {
    /// Go on with the (possibly rewritten) signal.
    Continue,
    /// Drop it: the step reports [`AgentError::PluginRefused`](crate::AgentError::PluginRefused).
    Refuse {
        /// Why.
        reason: String,
    },
    /// Hold it: the hooks after this one and the routes do not run, and the step returns
    /// `directives` (a model call the plugin waits for). The plugin keeps the signal in its
    /// state and brings it back when the answer arrives: its hook rewrites that answer into
    /// the held signal, which the hooks after it and the routes then see as if it had just
    /// arrived (Retrieval's enrichment by embeddings).
    Defer {
        /// What the step returns instead.
        directives: Vec<Directive>,
    },
}

/// A route a plugin contributes: a signal pattern to one of its actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRoute {
    /// The signal pattern.
    pub pattern: Cow<'static, str>,
    /// The plugin's action ([`PluginCall::action`]).
    pub action: Cow<'static, str>,
    /// The priority; [`priority::PLUGIN`] (-10) unless said otherwise.
    pub priority: i32,
}

impl PluginRoute {
    /// A route from `pattern` to `action` at the plugin priority.
    pub fn new(
        pattern: impl Into<Cow<'static, str>>,
        action: impl Into<Cow<'static, str>>,
    ) -> Self {
        PluginRoute {
            pattern: pattern.into(),
            action: action.into(),
            priority: priority::PLUGIN,
        }
    }
}

/// One run of a plugin action.
#[derive(Debug, Clone, Copy)]
pub struct PluginCall<'a> {
    /// The action's name, as the plugin's route names it (`status`).
    pub action: &'a str,
    /// The instruction (id, parameters: the signal's data).
    pub instruction: &'a Instruction,
    /// The signal that matched (after the pre-routing hooks).
    pub signal: &'a Signal,
    /// The agent's type name.
    pub agent: &'static str,
    /// The agent's id.
    pub agent_id: &'a str,
    /// The agent's actions, as tools the plugin may list and run.
    pub tools: &'a dyn PluginTools,
}

impl PluginCall<'_> {
    /// The parameters (the signal's data).
    pub fn params(&self) -> &Value {
        &self.instruction.params
    }
}
