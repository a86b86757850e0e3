//! How a server runs its agent: mailbox, error policy, tick interval, plugins, executors.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::directive::{CustomDirective, Directive};
use crate::error::AgentError;
use crate::route::{RouteSpec, RouteTarget, priority};

use super::executor::{Executor, ExecutorContext};
use super::transport::Transport;

/// The type of the signal [`ErrorPolicy::EmitSignal`] emits by default.
pub const ERROR_SIGNAL: &str = "stratagem.agent.error";

/// What a server does with an `Error` directive. Every policy logs the error (`tracing`, level
/// `error`) and counts it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ErrorPolicy {
    /// Log and carry on.
    #[default]
    LogOnly,
    /// Log and stop the agent.
    StopOnError,
    /// Log and emit a signal of this type (to subscribers, the parent and transports) whose
    /// data is `{"agent", "id", "message", "error", "context"}`.
    EmitSignal {
        /// The signal's type ([`ERROR_SIGNAL`] by default).
        signal_type: String,
    },
    /// Log, and stop the agent at the `errors`-th error (counted over its whole run).
    StopAfter {
        /// How many errors stop the agent (at least 1).
        errors: u32,
    },
}

impl ErrorPolicy {
    /// [`ErrorPolicy::EmitSignal`] with the type [`ERROR_SIGNAL`].
    pub fn emit_signal() -> Self {
        ErrorPolicy::EmitSignal {
            signal_type: ERROR_SIGNAL.to_string(),
        }
    }

    /// [`ErrorPolicy::StopAfter`] `errors` errors.
    pub fn stop_after(errors: u32) -> Self {
        ErrorPolicy::StopAfter { errors }
    }
}

/// How a server runs its agent. Children spawned by the agent run with the same options.
///
/// ```
/// use agent_runtime::server::{ErrorPolicy, Options};
/// use std::time::Duration;
/// let options = Options::new()
///     .mailbox_capacity(1_000)
///     .error_policy(ErrorPolicy::stop_after(3))
///     .tick_interval(Duration::from_millis(50));
/// assert_eq!(options.get_mailbox_capacity(), 1_000);
/// ```
#[derive(Clone)]
pub struct Options {
    pub(crate) mailbox_capacity: usize,
    pub(crate) max_signal_bytes: usize,
    pub(crate) error_policy: ErrorPolicy,
    pub(crate) tick_interval: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) event_capacity: usize,
    pub(crate) isolate_strategy_panics: bool,
    pub(crate) plugin_routes: Vec<RouteSpec>,
    pub(crate) executors: BTreeMap<String, Executor>,
    pub(crate) transports: Vec<Arc<dyn Transport>>,
    pub(crate) models: Option<crate::ai::ModelTable>,
    pub(crate) record_model_content: bool,
    pub(crate) trace_link: Option<Arc<dyn super::TraceLink>>,
    pub(crate) checkpoint_store: Option<Arc<dyn crate::store::Store>>,
    pub(crate) journal: Option<crate::journal::JournalOptions>,
}

impl Options {
    /// How many signals may wait in a mailbox by default.
    pub const DEFAULT_MAILBOX_CAPACITY: usize = 10_000;
    /// How often a `Running` agent is ticked when it declares no interval.
    pub const DEFAULT_TICK_INTERVAL: Duration = Duration::from_millis(100);
    /// How long `call` waits for an answer by default.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(5);
    /// The largest signal a mailbox takes by default: 2 MB as compact JSON.
    pub const DEFAULT_MAX_SIGNAL_BYTES: usize = 2_000_000;
    /// How many emitted signals a subscriber may fall behind by default.
    pub const DEFAULT_EVENT_CAPACITY: usize = 1_024;

    /// The defaults: a 10,000-signal mailbox taking signals of up to 2 MB, log-only errors, 100 ms ticks, 5 s calls,
    /// 1,024 buffered events per subscriber, strategy panics isolated.
    pub fn new() -> Self {
        Options {
            mailbox_capacity: Self::DEFAULT_MAILBOX_CAPACITY,
            max_signal_bytes: Self::DEFAULT_MAX_SIGNAL_BYTES,
            error_policy: ErrorPolicy::LogOnly,
            tick_interval: Self::DEFAULT_TICK_INTERVAL,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            event_capacity: Self::DEFAULT_EVENT_CAPACITY,
            isolate_strategy_panics: true,
            plugin_routes: Vec::new(),
            executors: BTreeMap::new(),
            transports: Vec::new(),
            models: None,
            record_model_content: false,
            trace_link: None,
            checkpoint_store: None,
            journal: None,
        }
    }

    /// Parks agents in `store`: when an agent raises an interrupt
    /// ([`crate::interrupt`]), the server writes its checkpoint (under its id) before the
    /// interrupt's signal goes out, and again after each answer, so a process killed while
    /// agents wait for people loses no interrupt and repeats no answered one. Thaw the agents
    /// from the same store with `AgentServer::thaw`. A failed write goes to the error policy
    /// (the signal still goes out).
    pub fn checkpoint_store(mut self, store: Arc<dyn crate::store::Store>) -> Self {
        self.checkpoint_store = Some(store);
        self
    }

    /// How many signals (`cast`, `call`, a child's emits) may wait in the mailbox; a signal
    /// beyond that is refused with [`ServerError::MailboxFull`](super::ServerError::MailboxFull).
    /// At least 1.
    #[must_use]
    pub fn mailbox_capacity(mut self, capacity: usize) -> Self {
        self.mailbox_capacity = capacity;
        self
    }

    /// The largest signal the mailbox takes, as compact JSON (its data, type, id and the other
    /// attributes), which also bounds the parameters an action reached through a route gets. A
    /// larger signal is refused at the door with
    /// [`ServerError::SignalTooLarge`](super::ServerError::SignalTooLarge): nothing of it is
    /// processed, and measuring it stops at the limit. At least 1; default 2 MB.
    #[must_use]
    pub fn max_signal_bytes(mut self, bytes: usize) -> Self {
        self.max_signal_bytes = bytes;
        self
    }

    /// What to do with errors.
    #[must_use]
    pub fn error_policy(mut self, policy: ErrorPolicy) -> Self {
        self.error_policy = policy;
        self
    }

    /// How often to tick a `Running` agent whose type declares no interval
    /// ([`AgentSpec::TICK_INTERVAL`](crate::AgentSpec::TICK_INTERVAL) wins when set).
    #[must_use]
    pub fn tick_interval(mut self, interval: Duration) -> Self {
        self.tick_interval = interval;
        self
    }

    /// How long `call` waits for the outcome.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How many emitted signals a subscriber may fall behind before it starts missing some
    /// (it is told how many it missed).
    #[must_use]
    pub fn event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity;
        self
    }

    /// Whether to keep a copy of the agent before each strategy call (`cmd`, `tick`), so that
    /// a panicking strategy leaves the agent exactly as it was (on by default). Panics are caught
    /// either way. It is a last line of defence: the built-in strategies catch the panics of
    /// user code where they happen, and `Agent::cmd`/`tick` keep their own copy for strategies
    /// that do not ([`Strategy::CATCHES_PANICS`](crate::Strategy::CATCHES_PANICS)), so turning
    /// it off leaves half-updated only an agent whose strategy claims to catch its panics and
    /// does not.
    #[must_use]
    pub fn isolate_strategy_panics(mut self, isolate: bool) -> Self {
        self.isolate_strategy_panics = isolate;
        self
    }

    /// Whether the `chat` spans of model calls record the prompt and the answer
    /// (`gen_ai.input.messages`, `gen_ai.output.messages`, as JSON). Off by default: prompts
    /// and answers may hold personal data, and they are large.
    #[must_use]
    pub fn record_model_content(mut self, record: bool) -> Self {
        self.record_model_content = record;
        self
    }

    /// Joins the server's `signal` spans to the trace context signals carry, and makes the
    /// signals emitted while handling them carry the step's own context (see
    /// [`TraceLink`](super::TraceLink)). Without one, the received context is passed on as is.
    #[must_use]
    pub fn trace_link(mut self, link: Arc<dyn super::TraceLink>) -> Self {
        self.trace_link = Some(link);
        self
    }

    /// Journals every input of the agents started with these options (not their children) to
    /// a store, for exact replay and time travel (see [`journal`](crate::journal)). Off by
    /// default.
    #[must_use]
    pub fn journal(mut self, journal: crate::journal::JournalOptions) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Adds a plugin route (priority [`priority::PLUGIN`], -10, unless `spec` says otherwise):
    /// it runs together with the agent's and the strategy's routes.
    #[must_use]
    pub fn route(mut self, spec: RouteSpec) -> Self {
        self.plugin_routes.push(spec);
        self
    }

    /// Adds a plugin route from `pattern` to an action, at the plugin priority.
    #[must_use]
    pub fn plugin_route(self, pattern: impl Into<String>, action: impl Into<String>) -> Self {
        self.route(RouteSpec {
            pattern: pattern.into().into(),
            target: RouteTarget::Action(action.into().into()),
            priority: priority::PLUGIN,
        })
    }

    /// Registers the executor of custom directives of `kind`. It returns directives to run in
    /// its place (built-in ones, typically), or an error for the error policy; to do async
    /// work it spawns a task and reports back with
    /// [`ExecutorContext::handle`]. A panic in it becomes an `Error` directive.
    ///
    /// ```
    /// use agent_runtime::server::Options;
    /// use agent_runtime::{Directive, Signal};
    /// let options = Options::new().executor("notify", |directive, _context| {
    ///     let data = directive.to_json();
    ///     Ok(vec![Directive::Emit(Signal::new("notified", data))])
    /// });
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn executor<F>(mut self, kind: impl Into<String>, executor: F) -> Self
    where
        F: Fn(&CustomDirective, &ExecutorContext<'_>) -> Result<Vec<Directive>, AgentError>
            + Send
            + Sync
            + 'static,
    {
        self.executors.insert(kind.into(), Arc::new(executor));
        self
    }

    /// Adds a transport every emitted signal is also published to.
    #[must_use]
    pub fn transport(mut self, transport: Arc<dyn Transport>) -> Self {
        self.transports.push(transport);
        self
    }

    /// The model table AI agents' model aliases resolve through. An agent whose alias is not
    /// in it is refused at start, with the list of known aliases.
    #[must_use]
    pub fn models(mut self, models: crate::ai::ModelTable) -> Self {
        self.models = Some(models);
        self
    }

    /// The mailbox capacity.
    pub fn get_mailbox_capacity(&self) -> usize {
        self.mailbox_capacity
    }

    /// The error policy.
    pub fn get_error_policy(&self) -> &ErrorPolicy {
        &self.error_policy
    }

    /// The largest signal a mailbox takes.
    pub fn get_max_signal_bytes(&self) -> usize {
        self.max_signal_bytes
    }

    /// The default tick interval.
    pub fn get_tick_interval(&self) -> Duration {
        self.tick_interval
    }

    /// The call timeout.
    pub fn get_call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// Why these options cannot run an agent, if they cannot.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.mailbox_capacity == 0 {
            return Err("`mailbox_capacity` is 0; a mailbox holds at least one signal".into());
        }
        if self.max_signal_bytes == 0 {
            return Err("`max_signal_bytes` is 0; no signal would fit".into());
        }
        if self.event_capacity == 0 {
            return Err(
                "`event_capacity` is 0; subscribers need room for at least one signal".into(),
            );
        }
        if let ErrorPolicy::StopAfter { errors: 0 } = self.error_policy {
            return Err("`ErrorPolicy::StopAfter { errors: 0 }` can never trigger; use 1 or more (1 is `StopOnError`)".into());
        }
        if self.tick_interval.is_zero() {
            return Err(
                "`tick_interval` is 0; a Running agent would be ticked in a busy loop".into(),
            );
        }
        Ok(())
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("mailbox_capacity", &self.mailbox_capacity)
            .field("max_signal_bytes", &self.max_signal_bytes)
            .field("error_policy", &self.error_policy)
            .field("tick_interval", &self.tick_interval)
            .field("call_timeout", &self.call_timeout)
            .field("event_capacity", &self.event_capacity)
            .field("isolate_strategy_panics", &self.isolate_strategy_panics)
            .field("plugin_routes", &self.plugin_routes)
            .field("executors", &self.executors.keys().collect::<Vec<_>>())
            .field("transports", &self.transports)
            .field("models", &self.models)
            .field("record_model_content", &self.record_model_content)
            .field("trace_link", &self.trace_link.is_some())
            .field("checkpoint_store", &self.checkpoint_store)
            .field("journal", &self.journal)
            .finish()
    }
}
