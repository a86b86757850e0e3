//! The search strategies' options (E0507-E0510, and E0101/E0506 shared with the other AI
//! options): every option is known, given once, meant for this strategy, of the right shape
//! and in range; Adaptive's strategy names exist.

use std::collections::HashMap;

use crate::model::{
    AiDef, AiKind, COMMON_AI_OPTIONS, OptionType, OptionValue, REASONING_OPTIONS, ReasoningOption,
    Span, Spanned, reasoning_option,
};

use super::codes;
use super::ctxt::Ctxt;
use super::diagnostic::Diagnostic;
use super::suggest::{did_you_mean, list};

/// Checks `ai.reasoning`, collecting every diagnostic in `cx`.
pub fn check_reasoning(cx: &Ctxt, ai: &AiDef) {
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for option in &ai.reasoning {
        let name = option.name.value.as_str();
        let Some(spec) = reasoning_option(name) else {
            unknown(cx, ai, option);
            continue;
        };
        if let Some(first) = seen.get(name) {
            super::settings::repeated(cx, name, option.name.span, *first);
            continue;
        }
        seen.insert(spec.name, option.name.span);
        if !spec.kinds.contains(&ai.kind) {
            let users: Vec<&str> = spec
                .kinds
                .iter()
                .filter(|k| **k != AiKind::Adaptive)
                .map(|k| k.keyword())
                .collect();
            cx.push(
                Diagnostic::error(
                    codes::AI_OPTION_UNUSED,
                    option.name.span,
                    format!(
                        "`{name}` has no effect on `{}`: it sets {} for {}",
                        ai.kind.keyword(),
                        spec.meaning,
                        list(&users)
                    ),
                )
                .label("never used")
                .help(format!(
                    "remove `{name}`, or choose a strategy that uses it ({})",
                    list(&users)
                )),
            );
            continue;
        }
        check_value(cx, name, spec.ty, &option.value);
    }
}

fn unknown(cx: &Ctxt, ai: &AiDef, option: &ReasoningOption) {
    let name = option.name.value.as_str();
    let candidates = COMMON_AI_OPTIONS
        .iter()
        .copied()
        .chain(REASONING_OPTIONS.iter().map(|o| o.name));
    let own: Vec<&str> = COMMON_AI_OPTIONS
        .iter()
        .copied()
        .filter(|o| ai.kind.uses_tools() || !matches!(*o, "tools" | "approve" | "max_iterations"))
        .chain(
            REASONING_OPTIONS
                .iter()
                .filter(|o| o.kinds.contains(&ai.kind))
                .map(|o| o.name),
        )
        .collect();
    let help = did_you_mean(name, candidates)
        .unwrap_or_else(|| format!("`{}` takes {}", ai.kind.file_keyword(), list(&own)));
    cx.push(
        Diagnostic::error(
            codes::UNKNOWN_AI_OPTION,
            option.name.span,
            format!("unknown option `{name}` for `{}`", ai.kind.keyword()),
        )
        .label("not an option")
        .help(help),
    );
}

fn wrong_shape(cx: &Ctxt, name: &str, value: &Spanned<OptionValue>, expected: &str) {
    cx.push(
        Diagnostic::error(
            codes::AI_OPTION_VALUE,
            value.span,
            format!(
                "`{name}` takes {expected}, found {}",
                value.value.describe()
            ),
        )
        .label(format!("expected {expected}"))
        .help(format!("write `{name}` as {expected}")),
    );
}

fn out_of_range(cx: &Ctxt, span: Span, message: String, help: String) {
    cx.push(
        Diagnostic::error(codes::AI_OPTION_RANGE, span, message)
            .label("out of range")
            .help(help),
    );
}

/// A number as a float (integers too).
fn number(value: &OptionValue) -> Option<f64> {
    match value {
        OptionValue::Int(i) => Some(*i as f64),
        OptionValue::Float(f) => Some(*f),
        _ => None,
    }
}

fn check_value(cx: &Ctxt, name: &str, ty: OptionType, value: &Spanned<OptionValue>) {
    match ty {
        OptionType::Count { min, max } => match value.value {
            OptionValue::Int(n) if (min..=max).contains(&n) => {}
            OptionValue::Int(n) => out_of_range(
                cx,
                value.span,
                format!("`{name}` is {n}, outside {min}..={max}"),
                format!("use a count from {min} to {max}"),
            ),
            _ => wrong_shape(cx, name, value, "a whole number"),
        },
        OptionType::Fraction => match number(&value.value) {
            Some(f) if (0.0..=1.0).contains(&f) => {}
            Some(f) => out_of_range(
                cx,
                value.span,
                format!("`{name}` is {f}, outside 0.0..=1.0"),
                "use a fraction such as `0.9`".to_string(),
            ),
            None => wrong_shape(cx, name, value, "a number from 0.0 to 1.0"),
        },
        OptionType::Text => {
            if !matches!(value.value, OptionValue::Text(_)) {
                wrong_shape(cx, name, value, "a string");
            }
        }
        OptionType::Choice(choices) => match &value.value {
            OptionValue::Word(w) if choices.contains(&w.as_str()) => {}
            OptionValue::Word(w) => {
                let help = did_you_mean(w, choices.iter().copied())
                    .unwrap_or_else(|| format!("use {}", list(choices)));
                cx.push(
                    Diagnostic::error(
                        codes::AI_OPTION_VALUE,
                        value.span,
                        format!("`{w}` is not a `{name}`; expected {}", list(choices)),
                    )
                    .label("unknown value")
                    .help(help),
                );
            }
            _ => wrong_shape(cx, name, value, &format!("one of {}", list(choices))),
        },
        OptionType::Strategy => strategy_name(cx, name, value),
        OptionType::Strategies => {
            let items: Vec<&Spanned<OptionValue>> = match &value.value {
                OptionValue::List(items) => items.iter().collect(),
                _ => vec![value],
            };
            let mut seen: HashMap<&str, Span> = HashMap::new();
            for item in items {
                strategy_name(cx, name, item);
                let kind = match &item.value {
                    OptionValue::Word(w) => AiKind::from_keyword(w),
                    _ => None,
                };
                if let Some(kind) = kind {
                    let w = kind.file_keyword();
                    if let Some(first) = seen.get(w) {
                        cx.push(
                            Diagnostic::error(
                                codes::ADAPTIVE_STRATEGY,
                                item.span,
                                format!("`{w}` is listed twice in `{name}`"),
                            )
                            .label("listed again here")
                            .secondary(*first, "first listed")
                            .help("list each strategy once"),
                        );
                    } else {
                        seen.insert(w, item.span);
                    }
                }
            }
        }
        OptionType::Thresholds => {
            let pair = match &value.value {
                OptionValue::List(items) if items.len() == 2 => {
                    number(&items[0].value).zip(number(&items[1].value))
                }
                _ => None,
            };
            match pair {
                None => wrong_shape(cx, name, value, "two numbers such as `0.3, 0.6`"),
                Some((low, high)) if (0.0..=1.0).contains(&low)
                    && (0.0..=1.0).contains(&high)
                    && low < high => {}
                Some((low, high)) => out_of_range(
                    cx,
                    value.span,
                    format!(
                        "`{name}` is {low}, {high}; it needs two fractions in 0.0..=1.0, the first below the second"
                    ),
                    "below the first the question is simple, from the second on complex: write them as `0.3, 0.6`".to_string(),
                ),
            }
        }
    }
}

/// A reasoning strategy's name (`cot` or `ChainOfThought`) other than Adaptive.
fn strategy_name(cx: &Ctxt, option: &str, value: &Spanned<OptionValue>) {
    let names: Vec<&str> = AiKind::ALL
        .iter()
        .filter(|k| **k != AiKind::Adaptive)
        .map(|k| k.file_keyword())
        .collect();
    let OptionValue::Word(word) = &value.value else {
        return wrong_shape(cx, option, value, "a strategy name such as `cot`");
    };
    let kind = AiKind::from_keyword(word);
    if kind.is_some_and(|k| k != AiKind::Adaptive) {
        return;
    }
    let (message, help) = if kind == Some(AiKind::Adaptive) {
        (
            format!("`{option}` cannot name `adaptive`: Adaptive chooses among the others"),
            format!("name strategies Adaptive may run: {}", list(&names)),
        )
    } else {
        let candidates = names
            .iter()
            .copied()
            .chain(AiKind::ALL.map(AiKind::keyword));
        let help = match did_you_mean(word, candidates) {
            Some(hint) => hint,
            None => format!("the strategies are {}", list(&names)),
        };
        (format!("unknown strategy `{word}` in `{option}`"), help)
    };
    cx.push(
        Diagnostic::error(codes::ADAPTIVE_STRATEGY, value.span, message)
            .label("not a strategy Adaptive can run")
            .help(help),
    );
}
