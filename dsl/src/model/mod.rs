//! The one IR both front-ends produce and the checker and code generator consume.
//!
//! Every element keeps its [`Span`]; spans never affect equality, so a model built from a
//! `.agent` file equals the one built from the same agent written with macros.

mod action;
mod agent;
mod ai;
mod chart;
mod fsm;
pub mod ident;
mod literal;
mod migration;
mod plugin;
mod reasoning;
mod route;
mod setting;
mod span;
mod tree;

pub use action::{ActionDef, ActionParam, ExecSettings, ParamKind};
pub use agent::{ActionRef, AgentDef, Field, StateDef, StrategyDef};
pub use ai::{AiDef, AiKind, COMMON_AI_OPTIONS};
pub use chart::{Chart, Declaration, StateId};
pub use fsm::{
    CompoundDef, FinalDef, FsmDef, HistoryDef, HookDef, HookKind, InterruptDef, RowDef,
    TerminalDef, TerminalKind, Trigger, event_variant,
};
pub use literal::{DurationMs, Literal, separated_unit, unit_of_word};
pub use migration::{MigrationDef, Rename};
pub use plugin::{
    BUILTIN_PLUGINS, BuiltinPlugin, DEFAULT_AI_PLUGINS, PluginDef, PluginOption, PluginOptionSpec,
    PluginOptionType, builtin_plugin,
};
pub use reasoning::{
    AGGREGATIONS, OptionSpec, OptionType, OptionValue, REASONING_OPTIONS, ReasoningOption,
    TRAVERSALS, reasoning_option,
};
pub use route::{RouteDef, RouteTargetDef};
pub use setting::Setting;
pub use span::{FileId, Name, Span, Spanned};
pub use tree::{
    ArgDef, AskDef, BehaviorDef, BtDef, NodeDef, NodeKind, TreeRef, TreeStrategyDef,
    behaviors_by_name, find_behavior, group_children,
};
