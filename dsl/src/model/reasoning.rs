//! The search strategies' options (`branching_factor = 3`, `traversal_strategy bfs`, ...) as
//! both front-ends record them: a name and a value of whatever shape was written, so every
//! check (unknown option, wrong strategy, wrong shape, out of range) lives once in
//! `check/reasoning.rs` with the option's span.

use super::ai::AiKind;
use super::span::Spanned;

/// A value as written.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// `3`.
    Int(i64),
    /// `0.9`.
    Float(f64),
    /// `"..."`.
    Text(String),
    /// `bfs`, `tot`.
    Word(String),
    /// `[cot, tot]` in macros, `cot, tot` in files; `(0.3, 0.6)` in macros, `0.3, 0.6` in files.
    List(Vec<Spanned<OptionValue>>),
}

impl OptionValue {
    /// What kind of value it is, for messages (`a number`, `a word`, ...).
    pub fn describe(&self) -> &'static str {
        match self {
            OptionValue::Int(_) => "a whole number",
            OptionValue::Float(_) => "a decimal number",
            OptionValue::Text(_) => "a string",
            OptionValue::Word(_) => "a name",
            OptionValue::List(_) => "a list",
        }
    }
}

/// One search option as written.
#[derive(Debug, Clone, PartialEq)]
pub struct ReasoningOption {
    /// The option's name.
    pub name: Spanned<String>,
    /// Its value.
    pub value: Spanned<OptionValue>,
}

/// The shape and range an option's value must have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionType {
    /// A whole number in `min..=max`.
    Count {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// A number in 0.0..=1.0.
    Fraction,
    /// A string.
    Text,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Reasoning strategy names (`cot, tot`), each once, not `adaptive`.
    Strategies,
    /// One reasoning strategy name, not `adaptive`.
    Strategy,
    /// Two fractions, the first below the second.
    Thresholds,
}

/// An option: its name, the strategies that use it and its type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptionSpec {
    /// The name, the same in both front-ends.
    pub name: &'static str,
    /// The strategies it configures (Adaptive takes every option of the strategies it may pick).
    pub kinds: &'static [AiKind],
    /// Its shape.
    pub ty: OptionType,
    /// What it means, for help lines.
    pub meaning: &'static str,
}

use AiKind::{Adaptive, GraphOfThoughts as Got, TreeOfThoughts as Tot, Trm};

/// The traversal names.
pub const TRAVERSALS: &[&str] = &["bfs", "dfs", "best_first"];
/// The aggregation names.
pub const AGGREGATIONS: &[&str] = &["synthesis", "weighted", "best"];

/// Every search option.
pub const REASONING_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "branching_factor",
        kinds: &[Tot, Got, Adaptive],
        ty: OptionType::Count { min: 1, max: 16 },
        meaning: "thoughts generated per expanded node",
    },
    OptionSpec {
        name: "max_depth",
        kinds: &[Tot, Got, Adaptive],
        ty: OptionType::Count { min: 1, max: 16 },
        meaning: "the deepest level of the search",
    },
    OptionSpec {
        name: "beam_width",
        kinds: &[Tot, Adaptive],
        ty: OptionType::Count { min: 1, max: 64 },
        meaning: "nodes kept per level",
    },
    OptionSpec {
        name: "traversal_strategy",
        kinds: &[Tot, Adaptive],
        ty: OptionType::Choice(TRAVERSALS),
        meaning: "the expansion order",
    },
    OptionSpec {
        name: "generation_prompt",
        kinds: &[Tot, Got, Adaptive],
        ty: OptionType::Text,
        meaning: "instructions for generating a thought",
    },
    OptionSpec {
        name: "evaluation_prompt",
        kinds: &[Tot, Adaptive],
        ty: OptionType::Text,
        meaning: "instructions for scoring a thought",
    },
    OptionSpec {
        name: "max_nodes",
        kinds: &[Got, Adaptive],
        ty: OptionType::Count { min: 2, max: 1000 },
        meaning: "the most thoughts in the graph",
    },
    OptionSpec {
        name: "aggregation_strategy",
        kinds: &[Got, Adaptive],
        ty: OptionType::Choice(AGGREGATIONS),
        meaning: "how related thoughts are merged",
    },
    OptionSpec {
        name: "connection_prompt",
        kinds: &[Got, Adaptive],
        ty: OptionType::Text,
        meaning: "instructions for relating thoughts",
    },
    OptionSpec {
        name: "aggregation_prompt",
        kinds: &[Got, Adaptive],
        ty: OptionType::Text,
        meaning: "instructions for merging thoughts",
    },
    OptionSpec {
        name: "act_threshold",
        kinds: &[Trm, Adaptive],
        ty: OptionType::Fraction,
        meaning: "the confidence at which refinement stops",
    },
    OptionSpec {
        name: "max_supervision_steps",
        kinds: &[Trm, Adaptive],
        ty: OptionType::Count { min: 1, max: 100 },
        meaning: "the most critique-and-improve rounds",
    },
    OptionSpec {
        name: "available_strategies",
        kinds: &[Adaptive],
        ty: OptionType::Strategies,
        meaning: "the strategies Adaptive may choose",
    },
    OptionSpec {
        name: "complexity_thresholds",
        kinds: &[Adaptive],
        ty: OptionType::Thresholds,
        meaning: "where simple ends and where complex begins",
    },
    OptionSpec {
        name: "default_strategy",
        kinds: &[Adaptive],
        ty: OptionType::Strategy,
        meaning: "what Adaptive runs when no preferred strategy is available",
    },
    OptionSpec {
        name: "max_llm_calls",
        kinds: &[Tot, Got, Trm, Adaptive],
        ty: OptionType::Count {
            min: 1,
            max: 100_000,
        },
        meaning: "the most LLM calls per request",
    },
    OptionSpec {
        name: "token_budget",
        kinds: &[Tot, Got, Trm, Adaptive],
        ty: OptionType::Count {
            min: 1,
            max: i64::MAX,
        },
        meaning: "the most tokens per request",
    },
];

/// The spec of the option called `name`.
pub fn reasoning_option(name: &str) -> Option<&'static OptionSpec> {
    REASONING_OPTIONS.iter().find(|o| o.name == name)
}
