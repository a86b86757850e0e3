//! The eight reasoning strategies by name, as results, `reasoning.<name>.run` signals and
//! Adaptive's configuration name them.

use serde::{Deserialize, Serialize};

/// One of the reasoning strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    /// [`React`](super::React): reason and act with tools.
    React,
    /// [`ChainOfThought`](super::ChainOfThought): one call, numbered steps and a conclusion.
    Cot,
    /// [`ChainOfDraft`](super::ChainOfDraft): one call, terse drafts and a `####` answer.
    Cod,
    /// [`TreeOfThoughts`](super::TreeOfThoughts): a scored search over candidate thoughts.
    Tot,
    /// [`GraphOfThoughts`](super::GraphOfThoughts): thoughts generated, connected and aggregated.
    Got,
    /// [`AlgorithmOfThoughts`](super::AlgorithmOfThoughts): one call that searches in its text.
    Aot,
    /// [`Trm`](super::Trm): an answer refined by critique until confident.
    Trm,
    /// [`Adaptive`](super::Adaptive): picks one of the others by the question.
    Adaptive,
}

impl StrategyKind {
    /// Every kind, in the order users see them listed.
    pub const ALL: [StrategyKind; 8] = [
        StrategyKind::React,
        StrategyKind::Cot,
        StrategyKind::Cod,
        StrategyKind::Tot,
        StrategyKind::Got,
        StrategyKind::Aot,
        StrategyKind::Trm,
        StrategyKind::Adaptive,
    ];

    /// The short name (`"tot"`), as in `reasoning.tot.run` and `.agent` files.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::React => "react",
            StrategyKind::Cot => "cot",
            StrategyKind::Cod => "cod",
            StrategyKind::Tot => "tot",
            StrategyKind::Got => "got",
            StrategyKind::Aot => "aot",
            StrategyKind::Trm => "trm",
            StrategyKind::Adaptive => "adaptive",
        }
    }

    /// The signal that starts a request with this strategy (`reasoning.tot.run`), routed like
    /// `ai.query`.
    pub fn run_signal(self) -> &'static str {
        match self {
            StrategyKind::React => "reasoning.react.run",
            StrategyKind::Cot => "reasoning.cot.run",
            StrategyKind::Cod => "reasoning.cod.run",
            StrategyKind::Tot => "reasoning.tot.run",
            StrategyKind::Got => "reasoning.got.run",
            StrategyKind::Aot => "reasoning.aot.run",
            StrategyKind::Trm => "reasoning.trm.run",
            StrategyKind::Adaptive => "reasoning.adaptive.run",
        }
    }

    /// The kind a short name names.
    pub fn from_name(name: &str) -> Option<StrategyKind> {
        StrategyKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the strategy makes several model calls that depend on each other's answers
    /// (a search), rather than one conversation.
    pub fn is_search(self) -> bool {
        matches!(
            self,
            StrategyKind::Tot | StrategyKind::Got | StrategyKind::Trm
        )
    }
}

impl std::fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
