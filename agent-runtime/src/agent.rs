//! Agents: a typed state plus the strategy's own state.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{OnceLock, RwLock};

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::action::{ActionEntry, ActionSpec, Outcome};
use crate::ai::LlmReply;
use crate::directive::Directive;
use crate::error::{ActionError, AgentError, ErrorContext};
use crate::instruction::{ExecOptions, Instruction};
use crate::plugin::{AgentTools, Plugin, PluginCall, PluginStack, PluginStates, ToolDone};
use crate::route::{RouteError, RouteSpec, RouteTarget, Router};
use crate::signal::Signal;
use crate::snapshot::{Snapshot, Status};
use crate::state_op::apply_ops;
use crate::strategy::Strategy;

/// The strategy state of agents of type `S`.
pub type StrategyState<S> = <<S as AgentSpec>::Strategy as Strategy<S>>::State;

/// An agent definition: implemented on the state struct by `#[agent]` (or by hand).
///
/// The struct is the agent's typed state; this trait names its strategy, its actions and its
/// routes. The runtime instance is [`Agent<S>`].
pub trait AgentSpec:
    Clone + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The agent's name, as declared.
    const NAME: &'static str;
    /// What the agent is for.
    const DESCRIPTION: &'static str = "";
    /// How often the host ticks the strategy while its snapshot is `Running` (`tick = 100ms`);
    /// `None` leaves it to the host's default.
    const TICK_INTERVAL: Option<std::time::Duration> = None;
    /// The definition this build's checkpoints are taken from: its fingerprint, written into
    /// every checkpoint, and the migrations from older ones ([`crate::definition`]). Generated;
    /// `None` (hand-written agents) checks nothing.
    const DEFINITION: Option<&'static crate::definition::Definition> = None;
    /// The strategy that decides what the agent does.
    type Strategy: Strategy<Self>;

    /// The agent's action table.
    fn actions() -> &'static [ActionEntry<Self>];

    /// The action called `name`. Generated code overrides this with a `match`.
    fn action(name: &str) -> Option<&'static ActionEntry<Self>> {
        Self::actions().iter().find(|e| e.name == name)
    }

    /// The routes declared on the agent (the strategy adds its own).
    fn routes() -> &'static [RouteSpec] {
        &[]
    }

    /// The plugins the agent mounts, in mount order (none by default; `#[agent(plugins =
    /// [...])]` generates this).
    fn plugins() -> &'static PluginStack {
        PluginStack::none()
    }

    /// The agent's router: its routes plus the strategy's and the plugins', validated once.
    ///
    /// The default caches one router per agent type; generated code overrides it with a static.
    fn router() -> Result<&'static Router, &'static RouteError> {
        cached_router::<Self>()
    }

    /// A new agent with the default state (generated agents get `Order::new()` from this).
    fn new() -> Agent<Self>
    where
        Self: Default,
    {
        Agent::new(Self::default())
    }
}

/// Builds the router of `S`: agent routes first, then the strategy's, then the plugins', in
/// declaration order. A plugin mounted twice, or a plugin route with exactly the pattern of an
/// agent route, is an error; a plugin route with exactly the pattern of a strategy route is
/// left out (the strategy's wins).
pub fn build_router<S: AgentSpec>() -> Result<Router, RouteError> {
    let strategy_routes = S::Strategy::signal_routes();
    let mut plugin_routes = S::plugins().route_specs(S::routes())?;
    // A strategy's route wins over a plugin route with exactly its pattern: an AI agent
    // answers `reasoning.<its strategy>.run` itself, even with Reasoning mounted.
    plugin_routes.retain(|p| !strategy_routes.iter().any(|s| s.pattern == p.pattern));
    Router::new(
        S::routes()
            .iter()
            .chain(strategy_routes.iter())
            .chain(plugin_routes.iter()),
    )
}

type CachedRouter = &'static Result<Router, RouteError>;

fn cached_router<S: AgentSpec>() -> Result<&'static Router, &'static RouteError> {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, CachedRouter>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<S>();
    let hit = cache
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .copied();
    let entry = match hit {
        Some(entry) => entry,
        None => *cache
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id)
            // One router per agent type, alive for the program: leaking it is the cache.
            .or_insert_with(|| Box::leak(Box::new(build_router::<S>()))),
    };
    entry.as_ref()
}

/// Something `cmd` accepts: instructions for any strategy, typed events for generated FSMs.
pub trait Command<S: AgentSpec> {
    /// What `cmd` returns for this input.
    type Output;
    /// Runs the command.
    fn run(self, agent: &mut Agent<S>) -> Self::Output;
}

impl<S: AgentSpec> Command<S> for Instruction {
    type Output = Vec<Directive>;
    fn run(self, agent: &mut Agent<S>) -> Vec<Directive> {
        let out = plugin_aware_cmd(agent, vec![self]);
        agent.outbound(out)
    }
}

impl<S: AgentSpec> Command<S> for Vec<Instruction> {
    type Output = Vec<Directive>;
    fn run(self, agent: &mut Agent<S>) -> Vec<Directive> {
        let out = plugin_aware_cmd(agent, self);
        agent.outbound(out)
    }
}

impl<S: AgentSpec, const N: usize> Command<S> for [Instruction; N] {
    type Output = Vec<Directive>;
    fn run(self, agent: &mut Agent<S>) -> Vec<Directive> {
        let out = plugin_aware_cmd(agent, self.into());
        agent.outbound(out)
    }
}

/// `cmd` on an agent: the completions of async tools a plugin started go to that plugin, the
/// rest to the strategy, in order.
fn plugin_aware_cmd<S: AgentSpec>(
    agent: &mut Agent<S>,
    instructions: Vec<Instruction>,
) -> Vec<Directive> {
    let stack = S::plugins();
    if stack.is_empty() || !instructions.iter().any(Instruction::is_completion) {
        return strategy_cmd(agent, instructions);
    }
    let mut out = Vec::new();
    let mut batch = Vec::new();
    for instruction in instructions {
        let owner = instruction
            .is_completion()
            .then(|| stack.tool_owner(&agent.plugins, &instruction.id))
            .flatten();
        let Some(index) = owner else {
            batch.push(instruction);
            continue;
        };
        if !batch.is_empty() {
            out.extend(strategy_cmd(agent, std::mem::take(&mut batch)));
        }
        out.extend(agent.plugin_tool_completed(stack, index, instruction));
    }
    if !batch.is_empty() {
        out.extend(strategy_cmd(agent, batch));
    }
    out
}

/// A strategy call (`call` names it in a panic's error), with a panic caught and the agent
/// put back unless the strategy catches its own.
#[inline(always)]
fn strategy_call<S: AgentSpec>(
    agent: &mut Agent<S>,
    call: &str,
    f: impl FnOnce(&mut Agent<S>) -> Vec<Directive>,
) -> Vec<Directive> {
    if <S::Strategy as Strategy<S>>::CATCHES_PANICS {
        f(agent)
    } else {
        crate::isolation::isolated(agent, call, f)
    }
}

/// `Strategy::cmd`, with a panic caught unless the strategy catches its own.
#[inline]
fn strategy_cmd<S: AgentSpec>(
    agent: &mut Agent<S>,
    instructions: Vec<Instruction>,
) -> Vec<Directive> {
    strategy_call(agent, "cmd", |agent| S::Strategy::cmd(agent, instructions))
}

/// A running agent: id, typed state and strategy state.
///
/// Serializes (for checkpoints) as `{"agent": NAME, "id", "state", "strategy"}`; deserializing a
/// checkpoint of another agent type is an error that names both.
pub struct Agent<S: AgentSpec> {
    id: String,
    state: S,
    strategy: StrategyState<S>,
    plugins: PluginStates,
    /// The state hash's running value after the fields no step changes (type, definition,
    /// id), taken at the first hash (0 until then): a journaled step hashes only the rest.
    hash_prefix: AtomicU64,
    /// Nobody can hear the informational AI events of the step about to run
    /// ([`DynAgent::set_unheard`]); never saved.
    unheard: bool,
}

impl<S: AgentSpec> Agent<S> {
    /// An agent with this state, a fresh id and the strategy's initial state.
    pub fn new(state: S) -> Self {
        Agent {
            id: uuid::Uuid::new_v4().to_string(),
            state,
            strategy: StrategyState::<S>::default(),
            plugins: S::plugins().mount(),
            hash_prefix: AtomicU64::new(0),
            unheard: false,
        }
    }

    /// Sets the id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self.hash_prefix = AtomicU64::new(0);
        self
    }

    /// The agent's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// [`StateHash::of`](crate::journal::StateHash::of) the agent (its checkpoint form), with
    /// the fields no step changes hashed once per agent: the journal hashes after every step.
    pub(crate) fn state_hash(&self) -> crate::journal::StateHash {
        use crate::journal::hash::StructHasher;
        // The fields in the order and form `AgentRef` serializes them.
        let mut prefix = self.hash_prefix.load(Ordering::Relaxed);
        if prefix == 0 {
            // (A prefix that is 0 itself is recomputed every time: as right, only slower.)
            let mut hasher = StructHasher::begin();
            hasher.field("agent", S::NAME);
            if let Some(definition) = S::DEFINITION {
                hasher.field("definition", &Some(definition.fingerprint));
            }
            hasher.field("id", self.id.as_str());
            prefix = hasher.running();
            self.hash_prefix.store(prefix, Ordering::Relaxed);
        }
        let mut hasher = StructHasher::resume(prefix);
        hasher.field("state", &self.state);
        hasher.field("strategy", &self.strategy);
        if !self.plugins.is_empty() {
            hasher.field("plugins", &self.plugins);
        }
        hasher.finish()
    }

    /// The typed state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The typed state, mutably; changes made here bypass the strategy.
    pub fn state_mut(&mut self) -> &mut S {
        &mut self.state
    }

    /// The strategy's state.
    pub fn strategy_state(&self) -> &StrategyState<S> {
        &self.strategy
    }

    /// The strategy's state, mutably.
    pub fn strategy_state_mut(&mut self) -> &mut StrategyState<S> {
        &mut self.strategy
    }

    /// Both states at once, for strategies that update them together.
    pub fn parts_mut(&mut self) -> (&mut S, &mut StrategyState<S>) {
        (&mut self.state, &mut self.strategy)
    }

    /// The state of the mounted plugin `P` (`None` when the agent does not mount it).
    pub fn plugin_state<P: Plugin>(&self) -> Option<&P::State> {
        self.plugins.get(P::STATE_KEY)?.as_any().downcast_ref()
    }

    /// The state of the mounted plugin `P`, mutably.
    pub fn plugin_state_mut<P: Plugin>(&mut self) -> Option<&mut P::State> {
        self.plugins
            .slices
            .iter_mut()
            .find(|(k, _)| *k == P::STATE_KEY)?
            .1
            .as_any_mut()
            .downcast_mut()
    }

    /// Every plugin's state, in mount order.
    pub fn plugin_states(&self) -> &PluginStates {
        &self.plugins
    }

    /// Runs the plugins' outbound hooks on the `Emit` directives of a step. A step without
    /// directives (most ticks) has nothing to hook: the plugin stack is not even looked up.
    #[inline]
    fn outbound(&mut self, mut directives: Vec<Directive>) -> Vec<Directive> {
        if !directives.is_empty() {
            self.outbound_hooks(&mut directives);
        }
        directives
    }

    /// [`outbound`](Agent::outbound) on a non-empty list, out of line: the hooks take the
    /// list's address, which inlined would keep the caller's list (an empty one on most ticks)
    /// in memory instead of registers. The directives are lent as a slice, not moved in and
    /// returned: a list returned from out of line comes back through a return slot in memory,
    /// which the empty list of the common path would share.
    #[inline(never)]
    fn outbound_hooks(&mut self, directives: &mut [Directive]) {
        let stack = S::plugins();
        if !stack.is_empty() {
            stack.after_emit(&mut self.plugins, directives);
        }
    }

    /// Takes the host's word that nobody hears this step's informational AI events
    /// ([`DynAgent::set_unheard`]): the step's first AI machine takes it, so a later one (or
    /// another agent a tool runs inside the step) hears as usual.
    pub(crate) fn take_unheard(&mut self) -> bool {
        std::mem::take(&mut self.unheard)
    }

    /// The id and both states at once: strategies name the agent in their trace events. The
    /// id as `&String`: read only where an event is traced, not on every command.
    pub(crate) fn parts_with_id(&mut self) -> (&String, &mut S, &mut StrategyState<S>) {
        (&self.id, &mut self.state, &mut self.strategy)
    }

    /// The typed state, consuming the agent.
    pub fn into_state(self) -> S {
        self.state
    }

    /// Runs the strategy's `init`; idempotent.
    pub fn init(&mut self) -> Vec<Directive> {
        let out = S::Strategy::init(self);
        self.outbound(out)
    }

    /// Runs instructions (or, for generated FSMs, typed events) through the strategy. Pure.
    pub fn cmd<C: Command<S>>(&mut self, command: C) -> C::Output {
        command.run(self)
    }

    /// Advances a strategy that reported `Running`.
    ///
    /// The directives come back as [`Directives`](crate::Directives), as a typed FSM command's
    /// do: one pointer, null when the tick emitted nothing (most ticks), so a loop that ticks
    /// and reads the [`status`](Agent::status) passes no list around. It derefs to a slice
    /// (`len`, `is_empty`, `iter`, indexing), iterates by value, and
    /// [`into_vec`](crate::Directives::into_vec) gives the `Vec`.
    #[inline]
    pub fn tick(&mut self) -> crate::Directives {
        let out = self.tick_strategy();
        if out.is_empty() {
            return crate::Directives::new();
        }
        self.outbound_boxed(out)
    }

    /// [`outbound`](Agent::outbound) of a non-empty list, boxed as
    /// [`Directives`](crate::Directives), out of line: the common empty tick's result is then
    /// a constant, not a list in memory.
    #[inline(never)]
    fn outbound_boxed(&mut self, mut directives: Vec<Directive>) -> crate::Directives {
        self.outbound_hooks(&mut directives);
        directives.into()
    }

    #[inline]
    fn tick_strategy(&mut self) -> Vec<Directive> {
        strategy_call(self, "tick", S::Strategy::tick)
    }

    /// Starts a finished run over, instead of replacing the strategy's state by hand; the
    /// signal [`RESTART_SIGNAL`](crate::strategy::RESTART_SIGNAL) does the same through routing.
    ///
    /// - A behaviour tree halts whatever still runs (cancelling async actions, calling halt
    ///   hooks) and starts from a fresh tree: its snapshot is `Running` again, so a host ticks
    ///   it. It restarts whether it finished or not.
    /// - An FSM in a terminal state goes back to its initial state, entering it (its `enter`
    ///   action, its timer): the snapshot is `Idle` again. In any other state it refuses.
    /// - Other strategies refuse.
    ///
    /// On `Err` ([`AgentError::NotRestartable`], or the error of a failing `enter` action) the
    /// agent is unchanged.
    pub fn restart(&mut self) -> Result<Vec<Directive>, AgentError> {
        S::Strategy::restart(self)
    }

    /// Where the agent stands: status, result and the strategy's details (built on each call;
    /// to check progress in a loop, read [`status`](Agent::status)).
    pub fn snapshot(&self) -> Snapshot {
        S::Strategy::snapshot(self)
    }

    /// The snapshot's status alone, without building its result and details: what a loop
    /// reads after each `tick` or `cmd` (no allocation for the built-in strategies).
    pub fn status(&self) -> Status {
        S::Strategy::status(self)
    }

    /// Whether the agent's run has ended ([`Status::is_done`] of [`status`](Agent::status)).
    pub fn is_done(&self) -> bool {
        self.status().is_done()
    }

    /// The description of an action, for tools.
    pub fn action_spec(&self, name: &str) -> Option<ActionSpec> {
        S::Strategy::action_spec(name)
    }

    /// Routes a signal and runs every matching target as one `cmd` (then `tick`, if a route
    /// targets it). An unmatched signal or an invalid router yields one `Error` directive.
    pub fn handle_signal(&mut self, signal: &Signal) -> Vec<Directive> {
        match S::router() {
            Ok(router) => self.handle_signal_with(router, signal),
            Err(e) => vec![Directive::error(
                AgentError::InvalidRoutes {
                    message: e.to_string(),
                },
                ErrorContext::Signal {
                    id: signal.id.clone(),
                    signal_type: signal.signal_type.clone(),
                },
            )],
        }
    }

    /// [`handle_signal`](Agent::handle_signal) through another router: a host's, which adds
    /// plugin routes to the agent's own.
    pub fn handle_signal_with(&mut self, router: &Router, signal: &Signal) -> Vec<Directive> {
        let stack = S::plugins();
        if !stack.is_empty() {
            let out = self.handle_with_plugins(stack, router, Incoming::Borrowed(signal));
            return self.outbound(out);
        }
        self.route_and_run(router, signal, None)
    }

    /// [`handle_signal_with`](Agent::handle_signal_with) for a host that has no use for the
    /// signal afterwards: its `data` moves into the instruction it is routed to instead of
    /// being copied (a model's reply, a tool result: the largest payloads an agent gets).
    pub fn handle_owned_signal_with(
        &mut self,
        router: &Router,
        mut signal: Signal,
    ) -> Vec<Directive> {
        let stack = S::plugins();
        if !stack.is_empty() {
            let out = self.handle_with_plugins(stack, router, Incoming::Owned(&mut signal));
            return self.outbound(out);
        }
        let data = std::mem::take(&mut signal.data);
        self.route_and_run(router, &signal, Some(data))
    }

    /// [`handle_owned_signal_with`](Agent::handle_owned_signal_with) of a model's reply that
    /// the host built itself, as `signal` (an `ai.llm.response` without its `data`) and the
    /// typed `reply` it carries. When no plugin changes such replies
    /// ([`Plugin::changes_model_replies`]) and the signal routes only to the strategy, the
    /// strategy gets the reply as it is ([`Strategy::cmd_llm_reply`]); otherwise its JSON is
    /// built and the signal handled as any other. Either way the outcome is the same.
    pub fn handle_llm_reply_with(
        &mut self,
        router: &Router,
        mut signal: Signal,
        reply: LlmReply,
    ) -> Vec<Directive> {
        let stack = S::plugins();
        if !stack.changes_model_replies()
            && let Ok((mut instructions, false)) = route_parts(router, &signal)
            && instructions.len() == 1
            && instructions[0].action == crate::ai::LLM_RESPONSE
            && stack.action(crate::ai::LLM_RESPONSE).is_none()
            && let Some(instruction) = instructions.pop()
        {
            let out = strategy_call(self, "cmd", |agent| {
                S::Strategy::cmd_llm_reply(agent, instruction, reply)
            });
            return self.outbound(out);
        }
        signal.data = reply.to_json();
        self.handle_owned_signal_with(router, signal)
    }

    /// Routes `signal` (whose payload is `data` when the caller moved it out) and runs what it
    /// routes to.
    fn route_and_run(
        &mut self,
        router: &Router,
        signal: &Signal,
        data: Option<Value>,
    ) -> Vec<Directive> {
        let routed = route_parts(router, signal).map(|(mut instructions, tick)| {
            if !instructions.is_empty() {
                give_params(
                    &mut instructions,
                    data.unwrap_or_else(|| signal.data.clone()),
                );
            }
            (instructions, tick)
        });
        match routed {
            Ok((instructions, tick)) => {
                let mut out = if instructions.is_empty() {
                    Vec::new()
                } else {
                    strategy_cmd(self, instructions)
                };
                if tick {
                    out.extend(self.tick_strategy());
                }
                out
            }
            Err(error) => vec![Directive::error(
                error,
                ErrorContext::Signal {
                    id: signal.id.clone(),
                    signal_type: signal.signal_type.clone(),
                },
            )],
        }
    }
}

impl<S: AgentSpec> Agent<S> {
    /// [`handle_signal_with`](Agent::handle_signal_with) for an agent with plugins: the
    /// pre-routing hooks, then the routes, plugin actions run on their state and the others
    /// through the strategy, in route order.
    fn handle_with_plugins(
        &mut self,
        stack: &PluginStack,
        router: &Router,
        mut incoming: Incoming<'_>,
    ) -> Vec<Directive> {
        let (rewritten, mut instructions, tick) = {
            let incoming = incoming.get();
            // Borrowed until a hook rewrites it: most signals are never copied.
            let mut signal = Cow::Borrowed(incoming);
            match stack.before_route(&mut self.plugins, &mut signal) {
                Ok(None) => {}
                // A plugin holds the signal until a model answers.
                Ok(Some(directives)) => return directives,
                Err((plugin, reason)) => {
                    return vec![Directive::error(
                        AgentError::PluginRefused { plugin, reason },
                        signal_context(incoming),
                    )];
                }
            }
            let (instructions, tick) = match route_parts(router, &signal) {
                Ok(routed) => routed,
                // A hook rewrote the signal into one nothing here handles (a refusal as
                // `ai.request.error`): it goes out as it is, to the caller and the subscribers.
                Err(AgentError::NoRoute { .. }) if signal.signal_type != incoming.signal_type => {
                    return vec![Directive::Emit(signal.into_owned())];
                }
                Err(error) => return vec![Directive::error(error, signal_context(&signal))],
            };
            let rewritten = match signal {
                Cow::Owned(signal) => Some(signal),
                Cow::Borrowed(_) => None,
            };
            (rewritten, instructions, tick)
        };
        // A plugin action reads the signal itself: then its data stays where it is.
        if !instructions.is_empty() {
            let data = match (&mut incoming, &rewritten) {
                (Incoming::Owned(signal), None)
                    if !instructions
                        .iter()
                        .any(|i| stack.action(&i.action).is_some()) =>
                {
                    std::mem::take(&mut signal.data)
                }
                _ => rewritten.as_ref().unwrap_or(incoming.get()).data.clone(),
            };
            give_params(&mut instructions, data);
        }
        let signal = rewritten.as_ref().unwrap_or(incoming.get());
        let mut out = Vec::new();
        let mut batch = Vec::new();
        for instruction in instructions {
            let Some((index, action)) = stack.action(&instruction.action) else {
                batch.push(instruction);
                continue;
            };
            if !batch.is_empty() {
                out.extend(strategy_cmd(self, std::mem::take(&mut batch)));
            }
            let tools = AgentTools::new(&mut self.state);
            let call = PluginCall {
                action,
                instruction: &instruction,
                signal,
                agent: S::NAME,
                agent_id: &self.id,
                tools: &tools,
            };
            let ran = stack.run(index, &mut self.plugins, call);
            // What the tools the action ran returned goes out before the action's own answer.
            out.extend(tools.out.into_inner());
            match ran {
                Ok(directives) => out.extend(directives),
                Err(error) => out.push(Directive::error(
                    AgentError::Action {
                        action: instruction.action.clone().into(),
                        error,
                    },
                    ErrorContext::instruction(&instruction),
                )),
            }
        }
        if !batch.is_empty() {
            out.extend(strategy_cmd(self, batch));
        }
        if tick {
            out.extend(self.tick_strategy());
        }
        out
    }
}

impl<S: AgentSpec> Agent<S> {
    /// The completion of an async tool plugin `index` started: its state changes are applied
    /// (as an AI strategy applies a tool's), then the plugin gets the result.
    fn plugin_tool_completed(
        &mut self,
        stack: &PluginStack,
        index: usize,
        mut instruction: Instruction,
    ) -> Vec<Directive> {
        let mut out = Vec::new();
        let result = match instruction.outcome.take() {
            Some(Ok(outcome)) => match apply_ops(&mut self.state, &outcome.ops) {
                Ok(()) => {
                    out.extend(outcome.directives);
                    Ok(outcome.reply.map(|r| *r))
                }
                Err(e) => Err(e.message().to_string()),
            },
            Some(Err(e)) => Err(e.message().to_string()),
            None => Err("the completion carries no outcome".to_string()),
        };
        let done = ToolDone {
            id: &instruction.id,
            name: &instruction.action,
            result: &result,
            agent_id: &self.id,
        };
        out.extend(stack.tool_completed(index, &mut self.plugins, done));
        out
    }
}

fn signal_context(signal: &Signal) -> ErrorContext {
    ErrorContext::Signal {
        id: signal.id.clone(),
        signal_type: signal.signal_type.clone(),
    }
}

/// The instructions a signal becomes (in route order) and whether a route targets `tick`.
pub fn route_signal<S: AgentSpec>(signal: &Signal) -> Result<(Vec<Instruction>, bool), AgentError> {
    let router = S::router().map_err(|e| AgentError::InvalidRoutes {
        message: e.to_string(),
    })?;
    route_with(router, signal)
}

/// [`route_signal`] through any router (a host's, with plugin routes added): the instructions
/// `signal` becomes, in route order, and whether a route targets `tick`. No matching route is
/// [`AgentError::NoRoute`].
pub fn route_with(
    router: &Router,
    signal: &Signal,
) -> Result<(Vec<Instruction>, bool), AgentError> {
    let (mut instructions, tick) = route_parts(router, signal)?;
    if !instructions.is_empty() {
        give_params(&mut instructions, signal.data.clone());
    }
    Ok((instructions, tick))
}

/// [`route_with`] without the payload: the instructions' `params` are left `Null` for
/// [`give_params`], so that a caller done with the signal can move its data instead of
/// copying it.
fn route_parts(router: &Router, signal: &Signal) -> Result<(Vec<Instruction>, bool), AgentError> {
    let mut instructions = Vec::new();
    let mut tick = false;
    for (i, route) in router.matches(&signal.signal_type).enumerate() {
        match &route.target {
            RouteTarget::Tick => tick = true,
            RouteTarget::Action(name) | RouteTarget::Event(name) | RouteTarget::Custom(name) => {
                // Built field by field: `Instruction::new` would draw a fresh UUID (a
                // `getrandom` syscall) only for this id to replace it.
                instructions.push(Instruction {
                    id: format!("{}#{i}", signal.id),
                    action: name.to_string(),
                    params: Value::Null,
                    deadline: None,
                    exec: None,
                    outcome: None,
                });
            }
        }
    }
    if instructions.is_empty() && !tick {
        return Err(AgentError::NoRoute {
            signal_type: crate::quote::clip(&signal.signal_type),
        });
    }
    Ok((instructions, tick))
}

/// Gives every routed instruction the signal's payload: copies to all but the last, which
/// takes `data` itself.
fn give_params(instructions: &mut [Instruction], data: Value) {
    if let Some((last, others)) = instructions.split_last_mut() {
        for instruction in others {
            instruction.params = data.clone();
        }
        last.params = data;
    }
}

/// The signal a host hands to an agent: lent, or given (its data may then move).
enum Incoming<'a> {
    Borrowed(&'a Signal),
    Owned(&'a mut Signal),
}

impl Incoming<'_> {
    fn get(&self) -> &Signal {
        match self {
            Incoming::Borrowed(signal) => signal,
            Incoming::Owned(signal) => signal,
        }
    }
}

impl<S: AgentSpec> Clone for Agent<S> {
    fn clone(&self) -> Self {
        Agent {
            id: self.id.clone(),
            state: self.state.clone(),
            strategy: self.strategy.clone(),
            plugins: self.plugins.clone(),
            hash_prefix: AtomicU64::new(self.hash_prefix.load(Ordering::Relaxed)),
            // The word is for this agent's step, not a copy's.
            unheard: false,
        }
    }
}

impl<S: AgentSpec> fmt::Debug for Agent<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Agent");
        debug
            .field("agent", &S::NAME)
            .field("id", &self.id)
            .field("state", &self.state)
            .field("strategy", &self.strategy);
        if !self.plugins.is_empty() {
            debug.field("plugins", &self.plugins);
        }
        debug.finish()
    }
}

impl<S: AgentSpec> PartialEq for Agent<S>
where
    S: PartialEq,
    StrategyState<S>: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.state == other.state
            && self.strategy == other.strategy
            && self.plugins == other.plugins
    }
}

#[derive(Serialize)]
struct AgentRef<'a, S, T> {
    agent: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    definition: Option<&'a str>,
    id: &'a str,
    state: &'a S,
    strategy: &'a T,
    #[serde(skip_serializing_if = "PluginStates::is_empty")]
    plugins: &'a PluginStates,
}

#[derive(Deserialize)]
struct AgentOwned<S, T> {
    agent: String,
    id: String,
    state: S,
    strategy: T,
    #[serde(default)]
    plugins: crate::plugin::SavedStates,
}

impl<S: AgentSpec> Serialize for Agent<S> {
    fn serialize<Ser: Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        AgentRef {
            agent: S::NAME,
            definition: S::DEFINITION.map(|d| d.fingerprint),
            id: &self.id,
            state: &self.state,
            strategy: &self.strategy,
            plugins: &self.plugins,
        }
        .serialize(s)
    }
}

impl<'de, S: AgentSpec> Deserialize<'de> for Agent<S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = AgentOwned::<S, StrategyState<S>>::deserialize(d)?;
        if wire.agent != S::NAME {
            return Err(serde::de::Error::custom(format!(
                "this checkpoint holds agent `{}`, not `{}`",
                wire.agent,
                S::NAME
            )));
        }
        let plugins = S::plugins()
            .restore(wire.plugins)
            .map_err(serde::de::Error::custom)?;
        Ok(Agent {
            id: wire.id,
            state: wire.state,
            strategy: wire.strategy,
            plugins,
            hash_prefix: AtomicU64::new(0),
            unheard: false,
        })
    }
}

/// An agent of any type, for hosts that keep different agents side by side (a parent's children).
pub trait DynAgent: Send + Sync + fmt::Debug {
    /// The agent type's name.
    fn agent_name(&self) -> &'static str;
    /// The instance id.
    fn id(&self) -> &str;
    /// See [`Agent::init`].
    fn init(&mut self) -> Vec<Directive>;
    /// See [`Agent::cmd`].
    fn cmd(&mut self, instructions: Vec<Instruction>) -> Vec<Directive>;
    /// See [`Agent::handle_signal`].
    fn handle_signal(&mut self, signal: &Signal) -> Vec<Directive>;
    /// See [`Agent::handle_signal_with`].
    fn handle_signal_with(&mut self, router: &Router, signal: &Signal) -> Vec<Directive>;
    /// See [`Agent::handle_owned_signal_with`].
    fn handle_owned_signal_with(&mut self, router: &Router, signal: Signal) -> Vec<Directive> {
        self.handle_signal_with(router, &signal)
    }
    /// See [`Agent::handle_llm_reply_with`].
    fn handle_llm_reply_with(
        &mut self,
        router: &Router,
        mut signal: Signal,
        reply: LlmReply,
    ) -> Vec<Directive> {
        signal.data = reply.to_json();
        self.handle_owned_signal_with(router, signal)
    }
    /// See [`Agent::tick`].
    fn tick(&mut self) -> Vec<Directive>;
    /// See [`Agent::snapshot`].
    fn snapshot(&self) -> Snapshot;
    /// See [`Agent::status`].
    fn status(&self) -> Status;
    /// The agent as checkpoint JSON.
    fn to_json(&self) -> Result<Value, serde_json::Error>;
    /// The stable hash of the agent (what the journal records after each step).
    fn state_hash(&self) -> crate::journal::StateHash;
    /// Runs the async action an instruction names against a snapshot of the state, with the
    /// execution policy (timeout, retries, backoff). The future owns everything it needs.
    fn execute(
        &self,
        instruction: &Instruction,
        exec: ExecOptions,
    ) -> BoxFuture<'static, Result<Outcome, ActionError>>;
    /// The agent type's validated router (its routes plus its strategy's).
    fn router(&self) -> Result<&'static Router, &'static RouteError>;
    /// How often a host ticks the agent while it is `Running` ([`AgentSpec::TICK_INTERVAL`]).
    fn tick_interval(&self) -> Option<std::time::Duration>;
    /// The model aliases its strategy calls ([`Strategy::required_models`]).
    fn required_models(&self) -> Vec<&'static str>;
    /// See [`Strategy::shape`].
    fn shape(&self) -> crate::inspect::Shape {
        crate::inspect::Shape::Opaque
    }
    /// See [`Strategy::progress`].
    fn progress(&self) -> crate::inspect::Progress {
        crate::inspect::Progress::Opaque
    }
    /// See [`Strategy::watched`].
    fn watched(&mut self, watched: bool) {
        let _ = watched;
    }
    /// Keywords its tools' schemas use that the argument validator does not enforce
    /// ([`Strategy::tool_schema_problems`]).
    fn tool_schema_problems(&self) -> Vec<String>;
    /// See [`Strategy::interrupts`].
    fn interrupts(&self) -> Vec<crate::interrupt::PendingInterrupt> {
        Vec::new()
    }
    /// A copy of the agent (a host keeps one to restore after a panicking strategy).
    fn clone_box(&self) -> Box<dyn DynAgent>;
    /// The concrete `Agent<S>`, for downcasting.
    fn as_any(&self) -> &dyn Any;
    /// The concrete `Agent<S>`, mutably.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The host's word that nobody can hear the informational AI events (`ai.usage`,
    /// `ai.tool.started`, `ai.tool.result`) of the step it runs next: no subscriber,
    /// watcher, parent, transport or journal, no caller waiting for the step's directives,
    /// no debug trace. An AI strategy then leaves those events out instead of building,
    /// checking and dropping them (`ai.request.*` always go out). A host that gives it
    /// withdraws it after the step (`false`); the agent server does, only for steps no
    /// journal records, so replay never depends on it. Ignored by other strategies and,
    /// by default, by other implementations.
    fn set_unheard(&mut self, unheard: bool) {
        let _ = unheard;
    }
}

impl<S: AgentSpec> DynAgent for Agent<S> {
    fn agent_name(&self) -> &'static str {
        S::NAME
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn init(&mut self) -> Vec<Directive> {
        Agent::init(self)
    }
    fn cmd(&mut self, instructions: Vec<Instruction>) -> Vec<Directive> {
        Agent::cmd(self, instructions)
    }
    fn handle_signal(&mut self, signal: &Signal) -> Vec<Directive> {
        Agent::handle_signal(self, signal)
    }
    fn handle_signal_with(&mut self, router: &Router, signal: &Signal) -> Vec<Directive> {
        Agent::handle_signal_with(self, router, signal)
    }
    fn handle_owned_signal_with(&mut self, router: &Router, signal: Signal) -> Vec<Directive> {
        Agent::handle_owned_signal_with(self, router, signal)
    }
    fn handle_llm_reply_with(
        &mut self,
        router: &Router,
        signal: Signal,
        reply: LlmReply,
    ) -> Vec<Directive> {
        Agent::handle_llm_reply_with(self, router, signal, reply)
    }
    fn tick(&mut self) -> Vec<Directive> {
        Agent::tick(self).into_vec()
    }
    fn snapshot(&self) -> Snapshot {
        Agent::snapshot(self)
    }
    fn status(&self) -> Status {
        Agent::status(self)
    }
    fn to_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn state_hash(&self) -> crate::journal::StateHash {
        Agent::state_hash(self)
    }
    fn execute(
        &self,
        instruction: &Instruction,
        exec: ExecOptions,
    ) -> BoxFuture<'static, Result<Outcome, ActionError>> {
        Box::pin(crate::exec::execute::<S>(
            self.state.clone(),
            instruction.clone(),
            exec,
        ))
    }
    fn router(&self) -> Result<&'static Router, &'static RouteError> {
        S::router()
    }
    fn tick_interval(&self) -> Option<std::time::Duration> {
        S::TICK_INTERVAL
    }
    fn required_models(&self) -> Vec<&'static str> {
        S::Strategy::required_models()
    }
    fn shape(&self) -> crate::inspect::Shape {
        S::Strategy::shape()
    }
    fn progress(&self) -> crate::inspect::Progress {
        S::Strategy::progress(self)
    }
    fn watched(&mut self, watched: bool) {
        S::Strategy::watched(self, watched)
    }
    fn tool_schema_problems(&self) -> Vec<String> {
        S::Strategy::tool_schema_problems()
    }
    fn interrupts(&self) -> Vec<crate::interrupt::PendingInterrupt> {
        S::Strategy::interrupts(self)
    }
    fn clone_box(&self) -> Box<dyn DynAgent> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn set_unheard(&mut self, unheard: bool) {
        self.unheard = unheard;
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
