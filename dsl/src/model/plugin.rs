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

use PluginOptionType::{Bool, Choice, Count, ModelRoutes, Text, Texts};

const CHARS: PluginOptionType = Count {
    min: 1,
    max: 100_000_000,
};

/// Every built-in plugin.
pub const BUILTIN_PLUGINS: &[BuiltinPlugin] = &[
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
        ],
        routes: &["retrieval.upsert", "retrieval.recall", "retrieval.clear"],
    },
];

/// The plugins an AI agent mounts first unless it lists them itself or says
/// `default_plugins = false`.
pub const DEFAULT_AI_PLUGINS: &[&str] = &["ModelRouting", "Policy"];

/// The built-in plugin called `name`.
pub fn builtin_plugin(name: &str) -> Option<&'static BuiltinPlugin> {
    BUILTIN_PLUGINS.iter().find(|p| p.name == name)
}
