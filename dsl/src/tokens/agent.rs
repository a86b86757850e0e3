//! `#[agent(...)]` on a struct -> [`AgentDef`].

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Token, bracketed, parenthesized};

use super::common::{self, options, unknown_option};
use super::routes::routes;
use crate::check::codes;
use crate::check::suggest::{did_you_mean, list};
use crate::model::{
    ActionRef, AgentDef, FsmDef, Name, Spanned, StateDef, StrategyDef, TreeStrategyDef,
};

/// The options `#[agent]` accepts.
pub const OPTIONS: &[&str] = &[
    "strategy",
    "description",
    "actions",
    "routes",
    "tick",
    "crate",
    "transitions",
    "tree",
    "plugins",
    "default_plugins",
    "migrate",
    "lock",
    // The AI strategies' options (`tokens/ai.rs`).
    "model",
    "system",
    "tools",
    "max_iterations",
    "temperature",
    "max_tokens",
    "hooks",
];

/// The strategies `strategy = ...` accepts (besides `custom(Path)`).
pub const STRATEGIES: &[&str] = &[
    "Direct",
    "Fsm",
    "BehaviorTree",
    "React",
    "ChainOfThought",
    "ChainOfDraft",
    "TreeOfThoughts",
    "GraphOfThoughts",
    "AlgorithmOfThoughts",
    "Trm",
    "Adaptive",
];

/// Reads `#[agent(attr)]` on `item`. `item` must be a non-generic struct.
pub fn agent(attr: TokenStream, item: &syn::Item) -> syn::Result<AgentDef> {
    let syn::Item::Struct(item) = item else {
        return Err(syn::Error::new_spanned(
            item_keyword(item),
            format!(
                "`#[agent]` goes on a struct: the struct is the agent's state{}",
                common::explained(codes::UNSUPPORTED_ITEM)
            ),
        ));
    };
    if !item.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &item.generics,
            format!(
                "agent structs cannot be generic\n  = help: the generated action table and router are per agent type; use a concrete state type{}",
                common::explained(codes::UNSUPPORTED_ITEM)
            ),
        ));
    }
    let name = Spanned::new(item.ident.unraw().to_string(), item.ident.span());
    let mut def = AgentDef::new(name, StateDef::External);
    def.schema = item
        .fields
        .iter()
        .filter_map(|f| {
            let ident = f.ident.as_ref()?;
            let name = Spanned::new(ident.unraw().to_string(), ident.span());
            Some((name, Spanned::new(f.ty.clone(), ident.span())))
        })
        .collect();
    let mut transitions = None;
    let mut tree = None;
    let mut ai = super::ai::AiOptions::default();
    let parser = |input: ParseStream<'_>| {
        options(input, |key, input| {
            if key.value == "transitions" {
                return fsm_block(&mut transitions, key, input);
            }
            if key.value == "tree" {
                return super::tree::tree_option(&mut tree, key, input);
            }
            if super::ai::is_option(&key.value) {
                return super::ai::option(&mut ai, key, input);
            }
            option(&mut def, key, input)
        })
    };
    parser.parse2(attr)?;
    super::fsm::attach(&mut def, transitions)?;
    super::tree::attach(&mut def, tree)?;
    super::ai::attach(&mut def, ai)?;
    if !def.description.is_set()
        && let Some(doc) = common::doc_summary(&item.attrs)
    {
        def.description.set(doc, item.ident.span());
    }
    Ok(def)
}

fn item_keyword(item: &syn::Item) -> TokenStream {
    use quote::ToTokens;
    match item {
        syn::Item::Enum(e) => e.enum_token.to_token_stream(),
        syn::Item::Fn(f) => f.sig.fn_token.to_token_stream(),
        syn::Item::Union(u) => u.union_token.to_token_stream(),
        other => other.to_token_stream(),
    }
}

fn option(def: &mut AgentDef, key: &Name, input: ParseStream<'_>) -> syn::Result<()> {
    let span = key.span.to_proc_macro();
    match key.value.as_str() {
        "strategy" => {
            input.parse::<Token![=]>()?;
            let strategy = strategy(input)?;
            def.strategy.set(strategy, span);
        }
        "description" => {
            input.parse::<Token![=]>()?;
            let text: syn::LitStr = input.parse()?;
            def.description.set(text.value(), text.span());
        }
        "actions" => {
            input.parse::<Option<Token![=]>>()?;
            let content;
            bracketed!(content in input);
            while !content.is_empty() {
                let path = syn::Path::parse_mod_style(&content)?;
                let last = path.segments.last().expect("a parsed path has a segment");
                let name = Spanned::new(last.ident.unraw().to_string(), last.ident.span());
                def.actions.push(ActionRef {
                    path: Spanned::new(path.clone(), last.ident.span()),
                    name,
                });
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
        }
        "routes" => {
            input.parse::<Option<Token![=]>>()?;
            let content;
            syn::braced!(content in input);
            def.routes.extend(routes(&content)?);
        }
        "tick" => {
            input.parse::<Token![=]>()?;
            let every = common::duration(input)?;
            def.tick.set(every.value, every.span);
        }
        "crate" => {
            input.parse::<Token![=]>()?;
            let path = common::runtime_path(input)?;
            def.runtime.set(path, span);
        }
        "plugins" => {
            let plugins = super::plugins::plugins(input)?;
            def.plugins.set(plugins, span);
        }
        "migrate" => {
            let migration = super::migration::migration(key, input)?;
            def.migrations.push(migration);
        }
        "lock" => {
            input.parse::<Token![=]>()?;
            let path: syn::LitStr = input.parse()?;
            def.lock.set(path.value(), path.span());
        }
        "default_plugins" => {
            input.parse::<Token![=]>()?;
            let value: syn::LitBool = input.parse()?;
            def.default_plugins.set(value.value, value.span());
        }
        other => {
            // The search strategies' options count as known: a typo in one gets its suggestion.
            let known: Vec<&str> = OPTIONS
                .iter()
                .copied()
                .chain(crate::model::REASONING_OPTIONS.iter().map(|o| o.name))
                .collect();
            return Err(unknown_option(span, other, "agent", &known));
        }
    }
    Ok(())
}

fn strategy(input: ParseStream<'_>) -> syn::Result<StrategyDef> {
    let name = common::name(input)?;
    let span = name.span.to_proc_macro();
    match name.value.as_str() {
        "Direct" => Ok(StrategyDef::Direct),
        // Its body comes from the `transitions` option (see `fsm::attach`).
        "Fsm" => Ok(StrategyDef::Fsm(FsmDef::new(span))),
        // Its tree comes from the `tree` option (see `tree::attach`).
        "BehaviorTree" => Ok(StrategyDef::BehaviorTree(TreeStrategyDef {
            tree: None,
            span: span.into(),
        })),
        keyword
            if crate::model::AiKind::ALL
                .iter()
                .any(|k| k.keyword() == keyword) =>
        {
            let kind = crate::model::AiKind::from_keyword(keyword).expect("matched above");
            Ok(StrategyDef::Ai(Box::new(crate::model::AiDef::new(
                kind, span,
            ))))
        }
        "custom" => {
            let content;
            parenthesized!(content in input);
            let path = syn::Path::parse_mod_style(&content)?;
            Ok(StrategyDef::Custom(Spanned::new(path, span)))
        }
        other => {
            let hint = did_you_mean(other, STRATEGIES.iter().copied()).unwrap_or_else(|| {
                format!(
                    "built-in strategies are {}; for your own strategy type write `custom(path::To::Strategy)`",
                    list(STRATEGIES)
                )
            });
            Err(syn::Error::new(
                span,
                format!(
                    "unknown strategy `{other}`\n  = help: {hint}{}",
                    common::explained(codes::UNKNOWN_STRATEGY)
                ),
            ))
        }
    }
}

/// `transitions { ... }`; a second block adds to the first.
fn fsm_block(slot: &mut Option<FsmDef>, key: &Name, input: ParseStream<'_>) -> syn::Result<()> {
    input.parse::<Option<Token![=]>>()?;
    let content;
    syn::braced!(content in input);
    let block = super::fsm::transitions(&content, key.span.to_proc_macro())?;
    match slot {
        Some(fsm) => fsm.extend(block),
        None => *slot = Some(block),
    }
    Ok(())
}
