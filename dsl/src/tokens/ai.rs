//! The AI options of `#[agent(strategy = React, model = "fast", system = "...",
//! tools = [a, b], approve = [a], max_iterations = 8, temperature = 0.2, max_tokens = 512, hooks = HOOKS)]`,
//! and the search options (`branching_factor = 3`, `traversal_strategy = dfs`,
//! `available_strategies = [cot, tot]`, `complexity_thresholds = (0.3, 0.6)`, ...), read as
//! plain values for `check/reasoning.rs`.
//! Options may come before or after `strategy`; [`attach`] puts them into the strategy.

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Token, bracketed};

use super::common;
use crate::model::{
    ActionRef, AgentDef, AiDef, AiKind, Name, OptionValue, ReasoningOption, Span, Spanned,
    StrategyDef,
};

/// The AI options `#[agent]` accepts.
pub const OPTIONS: &[&str] = &[
    "model",
    "system",
    "tools",
    "approve",
    "max_iterations",
    "temperature",
    "max_tokens",
    "hooks",
];

/// AI options read so far, and where the first one was.
#[derive(Debug)]
pub struct AiOptions {
    def: AiDef,
    first: Option<Name>,
}

impl Default for AiOptions {
    fn default() -> Self {
        AiOptions {
            def: AiDef::new(AiKind::React, Span::Synthetic),
            first: None,
        }
    }
}

/// Whether `key` is an AI option (the common ones, or a search strategy's).
pub fn is_option(key: &str) -> bool {
    OPTIONS.contains(&key) || crate::model::reasoning_option(key).is_some()
}

/// A search option's value: a number, a string, a name, or a list of them in `[..]` or `(..)`.
pub(crate) fn option_value(input: ParseStream<'_>) -> syn::Result<Spanned<OptionValue>> {
    if input.peek(syn::token::Bracket) || input.peek(syn::token::Paren) {
        let content;
        let span = if input.peek(syn::token::Bracket) {
            bracketed!(content in input).span.join()
        } else {
            syn::parenthesized!(content in input).span.join()
        };
        let items = content.parse_terminated(scalar, Token![,])?;
        return Ok(Spanned::new(
            OptionValue::List(items.into_iter().collect()),
            span,
        ));
    }
    scalar(input)
}

fn scalar(input: ParseStream<'_>) -> syn::Result<Spanned<OptionValue>> {
    let neg = input.parse::<Option<Token![-]>>()?.is_some();
    let sign = if neg { -1.0 } else { 1.0 };
    if input.peek(syn::LitFloat) {
        let lit: syn::LitFloat = input.parse()?;
        let value = lit.base10_parse::<f64>()? * sign;
        return Ok(Spanned::new(OptionValue::Float(value), lit.span()));
    }
    if input.peek(syn::LitInt) {
        let lit: syn::LitInt = input.parse()?;
        let value = lit.base10_parse::<i64>()?;
        return Ok(Spanned::new(
            OptionValue::Int(if neg { -value } else { value }),
            lit.span(),
        ));
    }
    if input.peek(syn::LitStr) {
        let lit: syn::LitStr = input.parse()?;
        return Ok(Spanned::new(OptionValue::Text(lit.value()), lit.span()));
    }
    if input.peek(syn::LitBool) {
        let lit: syn::LitBool = input.parse()?;
        return Ok(Spanned::new(
            OptionValue::Word(lit.value.to_string()),
            lit.span(),
        ));
    }
    if input.peek(syn::Ident) {
        let ident: syn::Ident = input.parse()?;
        return Ok(Spanned::new(
            OptionValue::Word(ident.to_string()),
            ident.span(),
        ));
    }
    Err(input.error("expected a number, a string, a name, or a list such as `[cot, tot]`"))
}

/// Reads the value of the AI option `key`.
pub fn option(options: &mut AiOptions, key: &Name, input: ParseStream<'_>) -> syn::Result<()> {
    if options.first.is_none() {
        options.first = Some(key.clone());
    }
    let def = &mut options.def;
    let span = key.span;
    match key.value.as_str() {
        "model" => {
            input.parse::<Token![=]>()?;
            let text: syn::LitStr = input.parse()?;
            def.model.set(text.value(), text.span());
        }
        "system" => {
            input.parse::<Token![=]>()?;
            let text: syn::LitStr = input.parse()?;
            def.system.set(text.value(), text.span());
        }
        "tools" => {
            input.parse::<Option<Token![=]>>()?;
            let content;
            bracketed!(content in input);
            let mut tools = Vec::new();
            while !content.is_empty() {
                let path = syn::Path::parse_mod_style(&content)?;
                let last = path.segments.last().expect("a parsed path has a segment");
                tools.push(ActionRef {
                    path: Spanned::new(path.clone(), last.ident.span()),
                    name: Spanned::new(last.ident.unraw().to_string(), last.ident.span()),
                });
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            def.tools.set(tools, span);
        }
        "approve" => {
            input.parse::<Token![=]>()?;
            let content;
            bracketed!(content in input);
            let mut tools = Vec::new();
            while !content.is_empty() {
                tools.push(common::name(&content)?);
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            def.approve.set(tools, span);
        }
        "max_iterations" => {
            input.parse::<Token![=]>()?;
            let n = common::int(input)?;
            def.max_iterations.set(n.value, n.span);
        }
        "max_tokens" => {
            input.parse::<Token![=]>()?;
            let n = common::int(input)?;
            def.max_tokens.set(n.value, n.span);
        }
        "temperature" => {
            input.parse::<Token![=]>()?;
            let neg = input.parse::<Option<Token![-]>>()?;
            let (value, at) = if input.peek(syn::LitFloat) {
                let lit: syn::LitFloat = input.parse()?;
                (lit.base10_parse::<f64>()?, lit.span())
            } else {
                let lit: syn::LitInt = input.parse().map_err(|e| {
                    syn::Error::new(e.span(), "expected a temperature such as `0.2`")
                })?;
                (lit.base10_parse::<f64>()?, lit.span())
            };
            def.temperature
                .set(if neg.is_some() { -value } else { value }, at);
        }
        "hooks" => {
            input.parse::<Token![=]>()?;
            let path = syn::Path::parse_mod_style(input)?;
            def.hooks.set(path, span);
        }
        name if crate::model::reasoning_option(name).is_some() => {
            input.parse::<Token![=]>()?;
            let value = option_value(input)?;
            def.reasoning.push(ReasoningOption {
                name: key.clone(),
                value,
            });
        }
        other => unreachable!("`{other}` is not an AI option; callers check `is_option`"),
    }
    Ok(())
}

/// Puts the AI options into the agent's AI strategy; options without an AI strategy are an
/// error at the first of them.
pub fn attach(def: &mut AgentDef, options: AiOptions) -> syn::Result<()> {
    let AiOptions { def: mut ai, first } = options;
    match def.strategy.get_mut() {
        Some(StrategyDef::Ai(slot)) => {
            ai.kind = slot.kind;
            ai.span = slot.span;
            **slot = ai;
            Ok(())
        }
        other => match first {
            None => Ok(()),
            Some(first) => {
                let strategies = crate::check::suggest::list(&AiKind::ALL.map(AiKind::keyword));
                let why = match other {
                    None => "this agent has no `strategy`".to_string(),
                    Some(s) => format!("this agent's strategy is `{}`", s.keyword()),
                };
                Err(syn::Error::new(
                    first.span.to_proc_macro(),
                    format!(
                        "`{}` is an option of the AI strategies, but {why}\n  = help: choose an AI strategy ({strategies}), or remove `{}`",
                        first.value, first.value
                    ),
                ))
            }
        },
    }
}
