//! Agents: the top-level model element.

use super::fsm::FsmDef;
use super::literal::{DurationMs, Literal};
use super::route::RouteDef;
use super::setting::Setting;
use super::span::{Name, Spanned};
use super::tree::TreeStrategyDef;

/// An agent definition, from `#[agent(...)]` on a struct or an `agent` item in a `.agent` file.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    /// The agent's (and its state struct's) name.
    pub name: Name,
    /// `description "..."` / `description = "..."`, or the struct's doc comment.
    pub description: Setting<String>,
    /// Where the state struct comes from.
    pub state: StateDef,
    /// The strategy.
    pub strategy: Setting<StrategyDef>,
    /// The agent's actions, in declaration order (repeated `actions` parts append).
    pub actions: Vec<ActionRef>,
    /// The agent's routes, in declaration order (repeated `routes` blocks append).
    pub routes: Vec<RouteDef>,
    /// `tick every 100ms` / `tick = 100ms`: how often the host ticks a `Running` strategy.
    pub tick: Setting<DurationMs>,
    /// `crate = path`: where generated code finds the runtime (default `::stratagem`).
    pub runtime: Setting<syn::Path>,
    /// `plugins = [...]` / `plugins { ... }`: the plugins, in mount order.
    pub plugins: Setting<Vec<super::plugin::PluginDef>>,
    /// `default_plugins = false`: an AI agent without ModelRouting and Policy by default.
    pub default_plugins: Setting<bool>,
    /// The state struct's fields and their types, in declaration order: what its checkpoints
    /// hold (the definition fingerprint reads them). Both front-ends fill it: a macro from the
    /// struct it is on, a file from its `state` block.
    pub schema: Vec<(Name, Spanned<syn::Type>)>,
    /// `migrate "<fingerprint>" { ... }`: migrations from older definitions.
    pub migrations: Vec<super::migration::MigrationDef>,
    /// Older fingerprints whose checkpoints still fit this definition unchanged, as the
    /// build's lock file records them (set by `Builder`, never by a front-end).
    pub accepted_definitions: Vec<String>,
    /// `lock = "agents.lock"` (macro front-end): the lock file to check the definition against,
    /// relative to the file the agent is in.
    pub lock: Setting<String>,
}

impl AgentDef {
    /// An agent with this name and nothing else declared.
    pub fn new(name: Name, state: StateDef) -> Self {
        AgentDef {
            name,
            description: Setting::default(),
            state,
            strategy: Setting::default(),
            actions: Vec::new(),
            routes: Vec::new(),
            tick: Setting::default(),
            runtime: Setting::default(),
            plugins: Setting::default(),
            default_plugins: Setting::default(),
            schema: Vec::new(),
            migrations: Vec::new(),
            accepted_definitions: Vec::new(),
            lock: Setting::default(),
        }
    }

    /// The action declared with this name, if any.
    pub fn action(&self, name: &str) -> Option<&ActionRef> {
        self.actions.iter().find(|a| a.name.value == name)
    }
}

/// The agent's state struct.
#[derive(Debug, Clone, PartialEq)]
pub enum StateDef {
    /// The user's own struct (the macro front-end): emitted as written.
    External,
    /// Fields declared in a `.agent` file: the code generator writes the struct.
    Fields(Vec<Field>),
}

/// A state field declared in a `.agent` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field's name.
    pub name: Name,
    /// Its Rust type.
    pub ty: Spanned<syn::Type>,
    /// Its default; `Default::default()` when absent.
    pub default: Option<Spanned<Literal>>,
}

/// An action listed in `actions`: a Rust path to an `#[action]` marker.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionRef {
    /// The path as written (`charge`, `billing::charge`).
    pub path: Spanned<syn::Path>,
    /// The action's name: the path's last segment.
    pub name: Name,
}

/// The strategy an agent runs.
#[derive(Debug, Clone, PartialEq)]
pub enum StrategyDef {
    /// Run instructions in order.
    Direct,
    /// A user strategy type: `strategy = custom(path::To::Strategy)`.
    Custom(Spanned<syn::Path>),
    /// Declared business transitions: `strategy = Fsm, transitions { ... }`.
    Fsm(FsmDef),
    /// A behaviour tree: `strategy = BehaviorTree, tree = ...` / `strategy behavior ...`.
    BehaviorTree(TreeStrategyDef),
    /// An AI strategy: `strategy = React, model = "fast", tools = [..]` / `strategy react { .. }`.
    Ai(Box<super::ai::AiDef>),
}

impl StrategyDef {
    /// The strategy's name as users write it in macros.
    pub fn keyword(&self) -> &'static str {
        match self {
            StrategyDef::Direct => "Direct",
            StrategyDef::Custom(_) => "custom",
            StrategyDef::Fsm(_) => "Fsm",
            StrategyDef::BehaviorTree(_) => "BehaviorTree",
            StrategyDef::Ai(ai) => ai.kind.keyword(),
        }
    }
}
