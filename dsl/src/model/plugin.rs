//! Plugins in the model: `plugins = [Quota { max_requests = 50 }, custom(my::Plugin)]` in
//! `#[agent]`, `plugins { Quota { max_requests 50 } custom(my::Plugin) }` in a `.agent` file.
//!
//! The built-in plugins are listed here with their state keys, options and routes, so the
//! checker reports an unknown plugin, option or value and a route collision for them; a custom
//! plugin's options are checked by rustc on the struct literal the generator writes.

use super::reasoning::OptionValue;
use super::span::{Name, Span, Spanned};

/// One mounted plugin as written.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginDef {
    /// The plugin's name (`Quota`), or `custom`.
    pub name: Name,
    /// `custom(path::To::Plugin)`: the plugin type.
    pub custom: Option<Spanned<syn::Path>>,
    /// Its options, in the order written.
    pub options: Vec<PluginOption>,
}

impl PluginDef {
    /// The built-in plugin it names, if it names one.
    pub fn builtin(&self) -> Option<&'static BuiltinPlugin> {
        if self.custom.is_some() {
            return None;
        }
        builtin_plugin(&self.name.value)
    }

    /// What identifies the plugin for "mounted twice": a built-in's state key, or the custom
    /// path as written.
    pub fn identity(&self) -> String {
        match (&self.custom, self.builtin()) {
            (Some(path), _) => {
                let segments: Vec<String> = path
                    .value
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                segments.join("::")
            }
            (None, Some(builtin)) => builtin.key.to_string(),
            (None, None) => self.name.value.clone(),
        }
    }

    /// Where the plugin is named.
    pub fn span(&self) -> Span {
        match &self.custom {
            Some(path) => path.span,
            None => self.name.span,
        }
    }
}

/// One option of a plugin as written.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginOption {
    /// The option's name (the config field).
    pub name: Name,
    /// Its value.
    pub value: Spanned<OptionValue>,
}

/// The shape an option's value must have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PluginOptionType {
    /// A whole number in `min..=max`.
    Count {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// A number in `min..=max` (a whole number is fine).
    Decimal {
        /// Smallest allowed.
        min: f64,
        /// Largest allowed.
        max: f64,
    },
    /// `true` or `false`.
    Bool,
    /// A string.
    Text,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Strings (a list, or one).
    Texts,
    /// `"pattern=alias"` strings: a model alias per signal type.
    ModelRoutes,
}

/// One option of a built-in plugin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PluginOptionSpec {
    /// The name (the config field).
    pub name: &'static str,
    /// Its shape.
    pub ty: PluginOptionType,
    /// What it means, for help lines.
    pub meaning: &'static str,
}

/// A plugin the runtime ships.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltinPlugin {
    /// Its name in both front-ends and its runtime type (`stratagem::ai::plugins::Quota`).
    pub name: &'static str,
    /// Its state key.
    pub key: &'static str,
    /// Its options.
    pub options: &'static [PluginOptionSpec],
    /// The patterns of its routes.
    pub routes: &'static [&'static str],
}

impl BuiltinPlugin {
    /// The option called `name`.
    pub fn option(&self, name: &str) -> Option<&'static PluginOptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }
}

use PluginOptionType::{Bool, Choice, Count, Decimal, ModelRoutes, Text, Texts};

const CHARS: PluginOptionType = Count {
    min: 1,
    max: 100_000_000,
};

const TOKENS: PluginOptionType = Count {
    min: 0,
    max: 10_000_000,
};

const TEMPERATURE: PluginOptionType = Decimal { min: 0.0, max: 2.0 };

/// Every built-in plugin.
pub const BUILTIN_PLUGINS: &[BuiltinPlugin] = &[
    BuiltinPlugin {
        name: "Chat",
        key: "chat",
        options: &[
            PluginOptionSpec {
                name: "default_model",
                ty: Text,
                meaning: "the model alias of requests that name none",
            },
            PluginOptionSpec {
                name: "embedding_model",
                ty: Text,
                meaning: "the model alias of `chat.embed` requests that name none",
            },
            PluginOptionSpec {
                name: "max_tokens",
                ty: TOKENS,
                meaning: "the longest answer, in tokens (0: the provider's)",
            },
            PluginOptionSpec {
                name: "temperature",
                ty: TEMPERATURE,
                meaning: "the sampling temperature",
            },
            PluginOptionSpec {
                name: "system_prompt",
                ty: Text,
                meaning: "the system prompt",
            },
            PluginOptionSpec {
                name: "max_turns",
                ty: Count { min: 1, max: 100 },
                meaning: "model turns of one `chat.message`",
            },
            PluginOptionSpec {
                name: "allow_tools",
                ty: Texts,
                meaning: "the actions offered as tools (none listed: all)",
            },
            PluginOptionSpec {
                name: "deny_tools",
                ty: Texts,
                meaning: "actions never offered as tools",
            },
        ],
        routes: &[
            "chat.message",
            "chat.simple",
            "chat.complete",
            "chat.embed",
            "chat.generate_object",
            "chat.execute_tool",
            "chat.list_tools",
            "chat.llm.response",
            "chat.embed.response",
        ],
    },
    BuiltinPlugin {
        name: "Planning",
        key: "planning",
        options: &[
            PluginOptionSpec {
                name: "default_model",
                ty: Text,
                meaning: "the model alias of requests that name none",
            },
            PluginOptionSpec {
                name: "max_tokens",
                ty: TOKENS,
                meaning: "the longest answer, in tokens (0: the provider's)",
            },
            PluginOptionSpec {
                name: "temperature",
                ty: TEMPERATURE,
                meaning: "the sampling temperature",
            },
            PluginOptionSpec {
                name: "max_steps",
                ty: Count { min: 1, max: 1_000 },
                meaning: "the most steps of a plan",
            },
        ],
        routes: &[
            "planning.plan",
            "planning.decompose",
            "planning.prioritize",
            "planning.llm.response",
        ],
    },
    BuiltinPlugin {
        name: "Reasoning",
        key: "reasoning",
        options: &[
            PluginOptionSpec {
                name: "default_model",
                ty: Text,
                meaning: "the model alias of runs that name none",
            },
            PluginOptionSpec {
                name: "timeout_ms",
                ty: Count {
                    min: 0,
                    max: 86_400_000,
                },
                meaning: "how long a run may take, in milliseconds (0: no limit)",
            },
            PluginOptionSpec {
                name: "max_iterations",
                ty: Count { min: 1, max: 1_000 },
                meaning: "model calls of a ReAct, CoT, CoD or AoT run",
            },
            PluginOptionSpec {
                name: "temperature",
                ty: TEMPERATURE,
                meaning: "the sampling temperature",
            },
            PluginOptionSpec {
                name: "max_tokens",
                ty: TOKENS,
                meaning: "the longest answer, in tokens (0: the provider's)",
            },
            PluginOptionSpec {
                name: "branching_factor",
                ty: Count { min: 1, max: 100 },
                meaning: "candidate thoughts per node (ToT, GoT)",
            },
            PluginOptionSpec {
                name: "max_depth",
                ty: Count { min: 1, max: 100 },
                meaning: "how deep ToT and GoT search",
            },
            PluginOptionSpec {
                name: "beam_width",
                ty: Count { min: 1, max: 100 },
                meaning: "nodes kept per level (ToT)",
            },
            PluginOptionSpec {
                name: "max_llm_calls",
                ty: Count {
                    min: 1,
                    max: 100_000,
                },
                meaning: "the most model calls of a search",
            },
            PluginOptionSpec {
                name: "allow_tools",
                ty: Texts,
                meaning: "the actions a ReAct run offers as tools (none listed: all)",
            },
            PluginOptionSpec {
                name: "deny_tools",
                ty: Texts,
                meaning: "actions never offered as tools",
            },
        ],
        routes: &[
            "reasoning.react.run",
            "reasoning.cot.run",
            "reasoning.cod.run",
            "reasoning.tot.run",
            "reasoning.got.run",
            "reasoning.aot.run",
            "reasoning.trm.run",
            "reasoning.adaptive.run",
            "reasoning.llm.response",
            "reasoning.timeout",
        ],
    },
    BuiltinPlugin {
        name: "ModelRouting",
        key: "model_routing",
        options: &[PluginOptionSpec {
            name: "routes",
            ty: ModelRoutes,
            meaning: "a model alias per signal type, as `\"pattern=alias\"`",
        }],
        routes: &[],
    },
    BuiltinPlugin {
        name: "Policy",
        key: "policy",
        options: &[
            PluginOptionSpec {
                name: "mode",
                ty: Choice(&["enforce", "monitor"]),
                meaning: "refuse violations, or only count them",
            },
            PluginOptionSpec {
                name: "max_prompt_chars",
                ty: CHARS,
                meaning: "the longest prompt",
            },
            PluginOptionSpec {
                name: "block_control_chars",
                ty: Bool,
                meaning: "refuse prompts with control characters",
            },
            PluginOptionSpec {
                name: "deny_patterns",
                ty: Texts,
                meaning: "phrases a prompt may not contain",
            },
            PluginOptionSpec {
                name: "max_delta_chars",
                ty: CHARS,
                meaning: "the longest stream delta kept",
            },
        ],
        routes: &[],
    },
    BuiltinPlugin {
        name: "Quota",
        key: "quota",
        options: &[
            PluginOptionSpec {
                name: "max_requests",
                ty: Count {
                    min: 0,
                    max: 1_000_000_000_000,
                },
                meaning: "requests per window and scope (0: no limit)",
            },
            PluginOptionSpec {
                name: "max_tokens",
                ty: Count {
                    min: 0,
                    max: 1_000_000_000_000,
                },
                meaning: "tokens per window and scope (0: no limit)",
            },
            PluginOptionSpec {
                name: "window_ms",
                // A year.
                ty: Count {
                    min: 1,
                    max: 31_536_000_000,
                },
                meaning: "the rolling window, in milliseconds",
            },
        ],
        routes: &["quota.status", "quota.reset"],
    },
    BuiltinPlugin {
        name: "Retrieval",
        key: "retrieval",
        options: &[
            PluginOptionSpec {
                name: "top_k",
                ty: Count { min: 1, max: 1_000 },
                meaning: "memories recalled per request",
            },
            PluginOptionSpec {
                name: "max_snippet_chars",
                ty: CHARS,
                meaning: "the longest snippet added to a prompt",
            },
            PluginOptionSpec {
                name: "enrich",
                ty: Bool,
                meaning: "add memories to request prompts",
            },
            PluginOptionSpec {
                name: "namespace",
                ty: Text,
                meaning: "the namespace of signals that name none",
            },
            PluginOptionSpec {
                name: "embedding_model",
                ty: Text,
                meaning: "the model alias that embeds memories and queries (none: BM25 only)",
            },
        ],
        routes: &[
            "retrieval.upsert",
            "retrieval.recall",
            "retrieval.clear",
            "retrieval.embed.response",
        ],
    },
];

/// The plugins an AI agent mounts first unless it lists them itself or says
/// `default_plugins = false`.
pub const DEFAULT_AI_PLUGINS: &[&str] = &["ModelRouting", "Policy"];

/// The built-in plugin called `name`.
pub fn builtin_plugin(name: &str) -> Option<&'static BuiltinPlugin> {
    BUILTIN_PLUGINS.iter().find(|p| p.name == name)
}
