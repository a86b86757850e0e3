//! The search strategies' options (Tree and Graph of Thoughts, TRM, Adaptive) and the budget
//! every search request runs under.

use super::kind::StrategyKind;

/// The order in which Tree of Thoughts expands its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Traversal {
    /// Level by level: each step expands the whole beam of the current depth.
    #[default]
    Bfs,
    /// Deepest first: each step expands the best node on top of a stack; the search ends at
    /// the first node that reaches `max_depth`.
    Dfs,
    /// Best score first: each step expands the best open node; the search ends when that node
    /// is at `max_depth`.
    BestFirst,
}

/// How Graph of Thoughts merges related thoughts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// One call merges the group's thoughts into a new one.
    #[default]
    Synthesis,
    /// Like `synthesis`, with each thought's score given to the model as its weight.
    Weighted,
    /// No call: the group's best-scored thought stands for it.
    Best,
}

/// Options of the search strategies; [`ReasoningConfig::DEFAULT`] holds the defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReasoningConfig {
    /// Candidate thoughts generated per expanded node (ToT) or from the question (GoT).
    pub branching_factor: u32,
    /// The deepest level a search reaches (ToT: thoughts on a path; GoT: aggregation rounds).
    pub max_depth: u32,
    /// How many nodes of a level survive pruning (ToT).
    pub beam_width: u32,
    /// The expansion order (ToT).
    pub traversal: Traversal,
    /// Instructions for generating a thought (ToT, GoT).
    pub generation_prompt: Option<&'static str>,
    /// Instructions for scoring a thought (ToT).
    pub evaluation_prompt: Option<&'static str>,
    /// The most thoughts a graph holds (GoT).
    pub max_nodes: u32,
    /// How related thoughts are merged (GoT).
    pub aggregation: Aggregation,
    /// Instructions for relating thoughts (GoT).
    pub connection_prompt: Option<&'static str>,
    /// Instructions for merging thoughts (GoT).
    pub aggregation_prompt: Option<&'static str>,
    /// The confidence at which refinement stops (TRM), 0.0..=1.0.
    pub act_threshold: f32,
    /// The most critique-and-improve rounds (TRM).
    pub max_supervision_steps: u32,
    /// The strategies Adaptive may choose (empty: all but Adaptive).
    pub available_strategies: &'static [StrategyKind],
    /// Adaptive's class boundaries on its 0..1 complexity estimate: below the first is simple,
    /// from the second on is complex, moderate between.
    pub complexity_thresholds: (f32, f32),
    /// What Adaptive runs when none of the available strategies fits the class.
    pub default_strategy: StrategyKind,
    /// The most LLM calls one search request may make.
    pub max_llm_calls: u32,
    /// The most tokens one search request may use; no new calls start once it is spent.
    pub token_budget: Option<u64>,
}

impl ReasoningConfig {
    /// The defaults: 3 branches, depth 3, beam 2, breadth first, 16 nodes, synthesis,
    /// threshold 0.9 with 3 rounds, thresholds 0.3/0.6, Chain of Thought by default, 100 calls.
    pub const DEFAULT: ReasoningConfig = ReasoningConfig {
        branching_factor: 3,
        max_depth: 3,
        beam_width: 2,
        traversal: Traversal::Bfs,
        generation_prompt: None,
        evaluation_prompt: None,
        max_nodes: 16,
        aggregation: Aggregation::Synthesis,
        connection_prompt: None,
        aggregation_prompt: None,
        act_threshold: 0.9,
        max_supervision_steps: 3,
        available_strategies: &[],
        complexity_thresholds: (0.3, 0.6),
        default_strategy: StrategyKind::Cot,
        max_llm_calls: 100,
        token_budget: None,
    };
}

impl Default for ReasoningConfig {
    fn default() -> Self {
        ReasoningConfig::DEFAULT
    }
}
