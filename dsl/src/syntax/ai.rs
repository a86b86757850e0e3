//! `strategy react|cot|cod|tot|got|aot|trm|adaptive { ... }` -> [`AiDef`], the model `#[agent(strategy = React, ...)]`
//! builds, so the E05xx checks and the generator run unchanged.

use pest::iterators::Pair;

use super::literal::{Number, int, name, number, path, string};
use super::{Rule, children, span};
use crate::check::Ctxt;
use crate::model::{ActionRef, AiDef, AiKind, FileId, OptionValue, ReasoningOption, Span, Spanned};

/// Lowers a `strategy_ai` pair.
pub fn ai(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<AiDef> {
    let mut parts = pair.into_inner();
    let kind_pair = parts.next()?;
    let kind = AiKind::from_keyword(kind_pair.as_str())?;
    let mut def = AiDef::new(kind, span(file, &kind_pair));
    for part in parts {
        let at = span(file, &part);
        let rule = part.as_rule();
        let Some(value) = children(part.clone()).next() else {
            continue;
        };
        match rule {
            Rule::ai_model => {
                let text = string(cx, file, &value);
                def.model.set(text.value, text.span);
            }
            Rule::ai_system => {
                let text = string(cx, file, &value);
                def.system.set(text.value, text.span);
            }
            Rule::ai_tools => {
                let tools: Vec<ActionRef> = children(part)
                    .filter_map(|p| path(file, &p))
                    .map(|(path, name)| ActionRef { path, name })
                    .collect();
                def.tools.set(tools, at);
            }
            Rule::ai_approve => {
                let tools = children(part).map(|p| name(file, &p)).collect();
                def.approve.set(tools, at);
            }
            Rule::ai_max_iterations => {
                if let Some(n) = int(cx, file, &value, "`max_iterations`") {
                    def.max_iterations.set(n.value, n.span);
                }
            }
            Rule::ai_max_tokens => {
                if let Some(n) = int(cx, file, &value, "`max_tokens`") {
                    def.max_tokens.set(n.value, n.span);
                }
            }
            Rule::ai_temperature => {
                if let Some(n) = number(cx, file, &value) {
                    let t = match n.value {
                        Number::Int(i) => i as f64,
                        Number::Float(f) => f,
                    };
                    def.temperature.set(t, n.span);
                }
            }
            Rule::ai_option => {
                if let Some(option) = reasoning_option(cx, file, part) {
                    def.reasoning.push(option);
                }
            }
            _ => {}
        }
    }
    Some(def)
}

/// `name value, value...` -> a search option (one value, or a list of them).
pub(super) fn reasoning_option(
    cx: &Ctxt,
    file: FileId,
    pair: Pair<'_, Rule>,
) -> Option<ReasoningOption> {
    let mut parts = pair.into_inner();
    let name = parts.next()?;
    let name = Spanned::new(name.as_str().to_string(), span(file, &name));
    let mut values: Vec<Spanned<OptionValue>> = Vec::new();
    for value in parts {
        let inner = value.into_inner().next()?;
        let at = span(file, &inner);
        let v = match inner.as_rule() {
            Rule::string => OptionValue::Text(string(cx, file, &inner).value),
            Rule::number => match number(cx, file, &inner)?.value {
                Number::Int(i) => OptionValue::Int(i64::try_from(i).unwrap_or(i64::MAX)),
                Number::Float(f) => OptionValue::Float(f),
            },
            _ => OptionValue::Word(inner.as_str().to_string()),
        };
        values.push(Spanned::new(v, at));
    }
    let value = if values.len() == 1 {
        values.pop()?
    } else {
        let at = match (values.first()?.span, values.last()?.span) {
            (Span::File { file, start, .. }, Span::File { end, .. }) => {
                Span::File { file, start, end }
            }
            (first, _) => first,
        };
        Spanned::new(OptionValue::List(values), at)
    };
    Some(ReasoningOption { name, value })
}
