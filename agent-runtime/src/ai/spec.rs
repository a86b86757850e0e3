//! What an AI agent declares: its model alias, system prompt, tools and limits, and its hooks.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use crate::agent::AgentSpec;
use crate::strategy::Strategy;

use super::hooks::{NoHooks, StepHooks};
use super::model::ToolSpec;
use super::options::ReasoningConfig;

/// An AI strategy's configuration, as `#[agent(strategy = React, model = .., ..)]` or
/// `strategy react { .. }` declares it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AiConfig {
    /// The model alias (`"fast"`, `"capable"`, your own), resolved by the host's model table.
    pub model: &'static str,
    /// The system prompt.
    pub system: Option<&'static str>,
    /// The actions offered to the model as tools (ReAct).
    pub tools: &'static [&'static str],
    /// The tools a person must approve before each call runs ([`Approval`](super::Approval)).
    pub approve: &'static [&'static str],
    /// The most LLM calls one request may make.
    pub max_iterations: u32,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// The longest answer, in tokens.
    pub max_tokens: Option<u32>,
    /// The search strategies' options and budget (ToT, GoT, TRM, Adaptive).
    pub reasoning: ReasoningConfig,
}

impl AiConfig {
    /// The default limit on LLM calls per request.
    pub const DEFAULT_MAX_ITERATIONS: u32 = 10;

    /// Model `"fast"`, no system prompt, no tools, 10 iterations.
    pub const DEFAULT: AiConfig = AiConfig::new("fast");

    /// A configuration for this model alias with the defaults otherwise.
    pub const fn new(model: &'static str) -> Self {
        AiConfig {
            model,
            system: None,
            tools: &[],
            approve: &[],
            max_iterations: Self::DEFAULT_MAX_ITERATIONS,
            temperature: None,
            max_tokens: None,
            reasoning: ReasoningConfig::DEFAULT,
        }
    }

    /// Sets the system prompt.
    #[must_use]
    pub const fn system(mut self, system: &'static str) -> Self {
        self.system = Some(system);
        self
    }

    /// Sets the tools.
    #[must_use]
    pub const fn tools(mut self, tools: &'static [&'static str]) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the tools whose calls wait for a person's approval.
    #[must_use]
    pub const fn approve(mut self, tools: &'static [&'static str]) -> Self {
        self.approve = tools;
        self
    }

    /// Sets the iteration limit.
    #[must_use]
    pub const fn max_iterations(mut self, max: u32) -> Self {
        self.max_iterations = max;
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub const fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the answer length limit.
    #[must_use]
    pub const fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the search strategies' options.
    #[must_use]
    pub const fn reasoning(mut self, reasoning: ReasoningConfig) -> Self {
        self.reasoning = reasoning;
        self
    }
}

impl Default for AiConfig {
    fn default() -> Self {
        AiConfig::DEFAULT
    }
}

/// An agent run by an AI strategy. `#[agent(strategy = React, ..)]` implements it.
pub trait AiAgent: AgentSpec {
    /// The configuration.
    const AI: AiConfig;

    /// The configuration a request of this agent runs with: [`AI`](AiAgent::AI) (what
    /// `#[agent]` declares). A host type whose configuration is known only at run time (the
    /// Reasoning plugin's, from its options) returns it from its state.
    fn config(&self) -> AiConfig {
        Self::AI
    }

    /// The step hooks (none by default). Return a `static`: a [`Hooks`](super::Hooks) built
    /// from functions, or your own [`StepHooks`] type.
    fn hooks() -> &'static dyn StepHooks<Self> {
        &NoHooks
    }

    /// The tools offered to the model: the configured actions' specs, built once per agent
    /// type. A configured name that is not an action is left out (the compiler rejects it).
    fn tool_specs() -> Arc<[ToolSpec]> {
        cached_tools::<Self>()
    }

    /// Tools a host type decides at run time and runs itself (the Reasoning plugin's host: the
    /// agent's actions its policy allows). When `Some`, a request offers these instead of
    /// [`tool_specs`](AiAgent::tool_specs), and every call of one (checked against its schema)
    /// becomes a `RunInstruction` with the tool call's id, which the host answers with a
    /// completion through the machine. `None` (agents): the machine runs the agent's actions.
    fn hosted_tools(&self) -> Option<Arc<[ToolSpec]>> {
        None
    }
}

fn cached_tools<S: AiAgent>() -> Arc<[ToolSpec]> {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, Arc<[ToolSpec]>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<S>();
    if let Some(hit) = cache.read().unwrap_or_else(|p| p.into_inner()).get(&id) {
        return hit.clone();
    }
    let specs: Arc<[ToolSpec]> = S::AI
        .tools
        .iter()
        .filter_map(|name| S::Strategy::action_spec(name))
        .collect();
    cache
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .entry(id)
        .or_insert(specs)
        .clone()
}
