//! Adaptive: picks a strategy for the question, then the request runs as that strategy.
//!
//! The complexity estimate (0.0..=1.0, no model call) adds: length (up to 0.4 at 40 words),
//! clauses (`?`, `;`, `,`, ` and `, ` then `: up to 0.2 at 6), planning/comparison words (0.15
//! each: compare, design, plan, trade-off, optimize, prove, strategy, alternatives, options,
//! explore, evaluate, combine), explanation words (0.1 each: why, explain, how does), and
//! arithmetic (0.1). Below the first threshold the question is simple, from the second on
//! complex, moderate between. Each class prefers some strategies in an order (simple: cod, cot,
//! aot; moderate: cot, aot, trm, react; complex: tot, got, trm), and a question that asks to
//! look something up prefers `react` first when the agent has tools; the first preference in
//! `available_strategies` wins, or `default_strategy` when none is available.

use serde::{Deserialize, Serialize};

use super::kind::StrategyKind;
use super::options::ReasoningConfig;

/// How hard Adaptive judged the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Complexity {
    /// Below the first threshold.
    Simple,
    /// Between the thresholds.
    Moderate,
    /// From the second threshold on.
    Complex,
}

/// What Adaptive chose and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveChoice {
    /// The strategy that runs the request.
    pub strategy: StrategyKind,
    /// The estimate, 0.0..=1.0.
    pub complexity: f64,
    /// The class the estimate falls in.
    pub class: Complexity,
    /// Why, in words (the signals counted and the preference that decided).
    pub reason: String,
}

const PLANNING: &[&str] = &[
    "compare",
    "design",
    "plan",
    "trade-off",
    "tradeoff",
    "optimiz",
    "optimis",
    "prove",
    "strateg",
    "alternatives",
    "options",
    "explore",
    "evaluate",
    "combine",
];
const EXPLAINING: &[&str] = &["why", "explain", "how does"];
const LOOKUP: &[&str] = &[
    "look up",
    "lookup",
    "find ",
    "check ",
    "search",
    "fetch",
    "status of",
    "where is",
];

/// Estimates the question's complexity and picks a strategy.
pub fn choose(query: &str, config: &ReasoningConfig, has_tools: bool) -> AdaptiveChoice {
    let lower = query.to_ascii_lowercase();
    let words = query.split_whitespace().count();
    let clauses = query.matches(['?', ';', ',']).count()
        + lower.matches(" and ").count()
        + lower.matches(" then ").count();
    let planning: Vec<&str> = PLANNING
        .iter()
        .copied()
        .filter(|k| lower.contains(k))
        .collect();
    let explaining = EXPLAINING.iter().filter(|k| lower.contains(*k)).count();
    let arithmetic =
        query.chars().any(|c| c.is_ascii_digit()) && query.contains(['+', '-', '*', '/', '=', '%']);
    let complexity = ((words as f64 / 40.0).min(1.0) * 0.4
        + (clauses as f64 / 6.0).min(1.0) * 0.2
        + planning.len() as f64 * 0.15
        + explaining as f64 * 0.1
        + if arithmetic { 0.1 } else { 0.0 })
    .clamp(0.0, 1.0);
    let (low, high) = config.complexity_thresholds;
    let class = if complexity < f64::from(low) {
        Complexity::Simple
    } else if complexity >= f64::from(high) {
        Complexity::Complex
    } else {
        Complexity::Moderate
    };
    use StrategyKind::*;
    let mut preference: Vec<StrategyKind> = match class {
        Complexity::Simple => vec![Cod, Cot, Aot],
        Complexity::Moderate => vec![Cot, Aot, Trm, React],
        Complexity::Complex => vec![Tot, Got, Trm],
    };
    let lookup = has_tools && LOOKUP.iter().any(|k| lower.contains(k));
    if lookup && class != Complexity::Complex {
        preference.retain(|k| *k != React);
        preference.insert(0, React);
    }
    let preference = preference;
    let available = |kind: StrategyKind| {
        kind != Adaptive
            && (config.available_strategies.is_empty()
                || config.available_strategies.contains(&kind))
    };
    let picked = preference.iter().copied().find(|k| available(*k));
    let strategy = picked.unwrap_or(match config.default_strategy {
        Adaptive => Cot,
        other => other,
    });
    let mut signals = vec![format!("{words} words"), format!("{clauses} clauses")];
    if !planning.is_empty() {
        signals.push(format!(
            "planning words {}",
            planning
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if explaining > 0 {
        signals.push(format!("{explaining} explanation word(s)"));
    }
    if arithmetic {
        signals.push("arithmetic".to_string());
    }
    if lookup {
        signals.push("asks to look something up".to_string());
    }
    let class_name = match class {
        Complexity::Simple => format!("simple (< {low})"),
        Complexity::Moderate => format!("moderate ({low}..{high})"),
        Complexity::Complex => format!("complex (>= {high})"),
    };
    let how = match picked {
        Some(kind) => format!("`{kind}` is the first available of its preferences"),
        None => format!("no preferred strategy is available, so the default `{strategy}`"),
    };
    AdaptiveChoice {
        strategy,
        complexity,
        class,
        reason: format!(
            "complexity {complexity:.2} is {class_name}: {}; {how}",
            signals.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHOICES: ReasoningConfig = ReasoningConfig {
        available_strategies: &[StrategyKind::Cod, StrategyKind::Cot, StrategyKind::Tot],
        ..ReasoningConfig::DEFAULT
    };

    #[test]
    fn each_class_picks_its_strategy() {
        let simple = choose("What is the capital of France?", &CHOICES, false);
        assert_eq!(
            (simple.class, simple.strategy),
            (Complexity::Simple, StrategyKind::Cod)
        );
        let moderate = choose(
            "Why does ice float on water, and what happens to a lake in winter?",
            &CHOICES,
            false,
        );
        assert_eq!(
            (moderate.class, moderate.strategy),
            (Complexity::Moderate, StrategyKind::Cot),
            "{}",
            moderate.reason
        );
        let complex = choose(
            "Compare three designs for a city bike-sharing system, evaluate the trade-offs of each, and plan a rollout strategy.",
            &CHOICES,
            false,
        );
        assert_eq!(
            (complex.class, complex.strategy),
            (Complexity::Complex, StrategyKind::Tot),
            "{}",
            complex.reason
        );
        assert!(complex.reason.contains("`compare`"), "{}", complex.reason);
    }

    #[test]
    fn lookups_go_to_react_and_the_default_covers_the_rest() {
        let all = ReasoningConfig::DEFAULT;
        let lookup = choose("Where is order 42?", &all, true);
        assert_eq!(lookup.strategy, StrategyKind::React);
        let only_trm = ReasoningConfig {
            available_strategies: &[StrategyKind::Got],
            default_strategy: StrategyKind::Trm,
            ..ReasoningConfig::DEFAULT
        };
        let fallback = choose("Hi?", &only_trm, false);
        assert_eq!(fallback.strategy, StrategyKind::Trm);
        assert!(
            fallback.reason.contains("default `trm`"),
            "{}",
            fallback.reason
        );
    }
}
