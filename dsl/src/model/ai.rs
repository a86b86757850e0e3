//! AI strategies in the model: `strategy = React|ChainOfThought|ChainOfDraft` with `model`,
//! `system`, `tools`, `max_iterations`, `temperature`, `max_tokens` (and, in macros, `hooks`),
//! or `strategy react|cot|cod { ... }` in a `.agent` file.
//!
//! Front-ends fill one [`AiDef`] per agent: every option is a [`Setting`], so an option given
//! twice is reported by the shared "given twice" check; the value checks live in `check/ai.rs`.

use super::agent::ActionRef;
use super::setting::Setting;
use super::span::Span;

/// Which AI strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AiKind {
    /// Reason and act with tools (`React` / `react`).
    React,
    /// One call parsed into steps and a conclusion (`ChainOfThought` / `cot`).
    ChainOfThought,
    /// One call with terse drafts and a `####` answer (`ChainOfDraft` / `cod`).
    ChainOfDraft,
}

impl AiKind {
    /// Every kind, in the order users see them listed.
    pub const ALL: [AiKind; 3] = [AiKind::React, AiKind::ChainOfThought, AiKind::ChainOfDraft];

    /// The name in macros (`React`), which is also the runtime type's name.
    pub fn keyword(self) -> &'static str {
        match self {
            AiKind::React => "React",
            AiKind::ChainOfThought => "ChainOfThought",
            AiKind::ChainOfDraft => "ChainOfDraft",
        }
    }

    /// The name in `.agent` files (`react`, `cot`, `cod`).
    pub fn file_keyword(self) -> &'static str {
        match self {
            AiKind::React => "react",
            AiKind::ChainOfThought => "cot",
            AiKind::ChainOfDraft => "cod",
        }
    }

    /// The kind a macro name (`React`) or a file keyword (`cot`) names.
    pub fn from_keyword(word: &str) -> Option<AiKind> {
        AiKind::ALL
            .into_iter()
            .find(|k| k.keyword() == word || k.file_keyword() == word)
    }

    /// Whether the strategy calls tools (only ReAct does; CoT and CoD make one call).
    pub fn uses_tools(self) -> bool {
        self == AiKind::React
    }
}

/// An AI strategy and its options.
#[derive(Debug, Clone, PartialEq)]
pub struct AiDef {
    /// Which strategy.
    pub kind: AiKind,
    /// Where the strategy is named (`React` in `strategy = React`, `react` in a file).
    pub span: Span,
    /// `model "fast"`: the model alias (default `"fast"`).
    pub model: Setting<String>,
    /// `system "..."`: the system prompt.
    pub system: Setting<String>,
    /// `tools a, b`: actions offered to the model; each also becomes an action of the agent.
    pub tools: Setting<Vec<ActionRef>>,
    /// `max_iterations 8`: the most LLM calls per request (default 10).
    pub max_iterations: Setting<i64>,
    /// `temperature 0.2` (0.0..=2.0).
    pub temperature: Setting<f64>,
    /// `max_tokens 512`.
    pub max_tokens: Setting<i64>,
    /// `hooks = HOOKS` (macros): a `static` implementing `StepHooks<Agent>`.
    pub hooks: Setting<syn::Path>,
}

impl AiDef {
    /// A strategy of this kind with no options given.
    pub fn new(kind: AiKind, span: impl Into<Span>) -> Self {
        AiDef {
            kind,
            span: span.into(),
            model: Setting::default(),
            system: Setting::default(),
            tools: Setting::default(),
            max_iterations: Setting::default(),
            temperature: Setting::default(),
            max_tokens: Setting::default(),
            hooks: Setting::default(),
        }
    }

    /// The tools, in declaration order (none when `tools` is not given).
    pub fn tool_refs(&self) -> &[ActionRef] {
        self.tools.get().map_or(&[], Vec::as_slice)
    }
}
