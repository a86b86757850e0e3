//! AI strategies in the model: `strategy = React|ChainOfThought|ChainOfDraft|TreeOfThoughts|
//! GraphOfThoughts|AlgorithmOfThoughts|Trm|Adaptive` with `model`, `system`, `tools`,
//! `max_iterations`, `temperature`, `max_tokens` (and, in macros, `hooks`) plus the search
//! options of `model/reasoning.rs`, or `strategy react|cot|cod|tot|got|aot|trm|adaptive { ... }`
//! in a `.agent` file.
//!
//! Front-ends fill one [`AiDef`] per agent: every option is a [`Setting`], so an option given
//! twice is reported by the shared "given twice" check; the value checks live in `check/ai.rs`.

use super::agent::ActionRef;
use super::reasoning::ReasoningOption;
use super::setting::Setting;
use super::span::Span;

/// The options every AI strategy block may hold besides the search options (and, in macros,
/// `hooks`).
pub const COMMON_AI_OPTIONS: &[&str] = &[
    "model",
    "system",
    "tools",
    "approve",
    "max_iterations",
    "temperature",
    "max_tokens",
];

/// Which AI strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AiKind {
    /// Reason and act with tools (`React` / `react`).
    React,
    /// One call parsed into steps and a conclusion (`ChainOfThought` / `cot`).
    ChainOfThought,
    /// One call with terse drafts and a `####` answer (`ChainOfDraft` / `cod`).
    ChainOfDraft,
    /// A scored search over candidate thoughts (`TreeOfThoughts` / `tot`).
    TreeOfThoughts,
    /// Thoughts generated, connected and aggregated (`GraphOfThoughts` / `got`).
    GraphOfThoughts,
    /// One call that searches in its text (`AlgorithmOfThoughts` / `aot`).
    AlgorithmOfThoughts,
    /// An answer refined by critique until confident (`Trm` / `trm`).
    Trm,
    /// Picks one of the others by the question (`Adaptive` / `adaptive`).
    Adaptive,
}

impl AiKind {
    /// Every kind, in the order users see them listed.
    pub const ALL: [AiKind; 8] = [
        AiKind::React,
        AiKind::ChainOfThought,
        AiKind::ChainOfDraft,
        AiKind::TreeOfThoughts,
        AiKind::GraphOfThoughts,
        AiKind::AlgorithmOfThoughts,
        AiKind::Trm,
        AiKind::Adaptive,
    ];

    /// The name in macros (`React`), which is also the runtime type's name.
    pub fn keyword(self) -> &'static str {
        match self {
            AiKind::React => "React",
            AiKind::ChainOfThought => "ChainOfThought",
            AiKind::ChainOfDraft => "ChainOfDraft",
            AiKind::TreeOfThoughts => "TreeOfThoughts",
            AiKind::GraphOfThoughts => "GraphOfThoughts",
            AiKind::AlgorithmOfThoughts => "AlgorithmOfThoughts",
            AiKind::Trm => "Trm",
            AiKind::Adaptive => "Adaptive",
        }
    }

    /// The name in `.agent` files (`react`, `cot`, `cod`, `tot`, ...), which is also the
    /// strategy's short name at run time (`reasoning.tot.run`, Adaptive's options).
    pub fn file_keyword(self) -> &'static str {
        match self {
            AiKind::React => "react",
            AiKind::ChainOfThought => "cot",
            AiKind::ChainOfDraft => "cod",
            AiKind::TreeOfThoughts => "tot",
            AiKind::GraphOfThoughts => "got",
            AiKind::AlgorithmOfThoughts => "aot",
            AiKind::Trm => "trm",
            AiKind::Adaptive => "adaptive",
        }
    }

    /// What the strategy is, in words, for messages.
    pub fn title(self) -> &'static str {
        match self {
            AiKind::React => "ReAct",
            AiKind::ChainOfThought => "Chain of Thought",
            AiKind::ChainOfDraft => "Chain of Draft",
            AiKind::TreeOfThoughts => "Tree of Thoughts",
            AiKind::GraphOfThoughts => "Graph of Thoughts",
            AiKind::AlgorithmOfThoughts => "Algorithm of Thoughts",
            AiKind::Trm => "TRM",
            AiKind::Adaptive => "Adaptive",
        }
    }

    /// The kind a macro name (`React`) or a file keyword (`cot`) names.
    pub fn from_keyword(word: &str) -> Option<AiKind> {
        AiKind::ALL
            .into_iter()
            .find(|k| k.keyword() == word || k.file_keyword() == word)
    }

    /// Whether the strategy calls tools (ReAct, and Adaptive when it picks ReAct).
    pub fn uses_tools(self) -> bool {
        matches!(self, AiKind::React | AiKind::Adaptive)
    }

    /// Whether the strategy makes a single LLM call (CoT, CoD, AoT).
    pub fn is_single_call(self) -> bool {
        matches!(
            self,
            AiKind::ChainOfThought | AiKind::ChainOfDraft | AiKind::AlgorithmOfThoughts
        )
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
    /// `approve a, b`: tools whose every call waits for a person's approval.
    pub approve: Setting<Vec<super::span::Name>>,
    /// `max_iterations 8`: the most LLM calls per request (default 10).
    pub max_iterations: Setting<i64>,
    /// `temperature 0.2` (0.0..=2.0).
    pub temperature: Setting<f64>,
    /// `max_tokens 512`.
    pub max_tokens: Setting<i64>,
    /// `hooks = HOOKS` (macros): a `static` implementing `StepHooks<Agent>`.
    pub hooks: Setting<syn::Path>,
    /// The search options (`branching_factor`, ...), in the order written.
    pub reasoning: Vec<ReasoningOption>,
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
            approve: Setting::default(),
            max_iterations: Setting::default(),
            temperature: Setting::default(),
            max_tokens: Setting::default(),
            hooks: Setting::default(),
            reasoning: Vec::new(),
        }
    }

    /// The tools that need approval, in declaration order.
    pub fn approved_tools(&self) -> &[super::span::Name] {
        self.approve.get().map_or(&[], Vec::as_slice)
    }

    /// The tools, in declaration order (none when `tools` is not given).
    pub fn tool_refs(&self) -> &[ActionRef] {
        self.tools.get().map_or(&[], Vec::as_slice)
    }
}
