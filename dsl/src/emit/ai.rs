//! `impl AiAgent` for an agent run by an AI strategy: its configuration as a constant, and its
//! hooks when `hooks = ...` names them.

use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};

use super::ident;
use crate::model::{ActionRef, AgentDef, AiDef, AiKind, OptionValue};

/// The strategy type of an AI kind.
pub fn strategy_type(kind: AiKind, krate: &TokenStream) -> TokenStream {
    match kind {
        AiKind::React => quote!(#krate::ai::React),
        AiKind::ChainOfThought => quote!(#krate::ai::ChainOfThought),
        AiKind::ChainOfDraft => quote!(#krate::ai::ChainOfDraft),
        AiKind::TreeOfThoughts => quote!(#krate::ai::TreeOfThoughts),
        AiKind::GraphOfThoughts => quote!(#krate::ai::GraphOfThoughts),
        AiKind::AlgorithmOfThoughts => quote!(#krate::ai::AlgorithmOfThoughts),
        AiKind::Trm => quote!(#krate::ai::Trm),
        AiKind::Adaptive => quote!(#krate::ai::Adaptive),
    }
}

/// The agent's actions: those listed in `actions`, then the AI tools not listed there.
pub fn action_refs<'a>(def: &'a AgentDef, ai: Option<&'a AiDef>) -> Vec<&'a ActionRef> {
    let mut refs: Vec<&ActionRef> = def.actions.iter().collect();
    for tool in ai.map_or(&[][..], AiDef::tool_refs) {
        if !refs.iter().any(|a| a.name.value == tool.name.value) {
            refs.push(tool);
        }
    }
    refs
}

/// `impl AiAgent for Agent { const AI: AiConfig = ...; fn hooks() ... }`.
pub fn ai(def: &AgentDef, ai: &AiDef, krate: &TokenStream) -> TokenStream {
    let agent = ident(&def.name.value, def.name.span);
    let model = ai.model.get().map_or("fast", String::as_str);
    let system = match ai.system.get() {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    };
    let tools = ai.tool_refs().iter().map(|t| t.name.value.as_str());
    let approve = ai.approved_tools().iter().map(|t| t.value.as_str());
    // The checker accepted the values, so they fit `u32`.
    let max_iterations =
        u32::try_from(ai.max_iterations.get().copied().unwrap_or(10)).unwrap_or(10);
    let temperature = match ai.temperature.get() {
        Some(t) => {
            let t = Literal::f32_suffixed(*t as f32);
            quote!(::core::option::Option::Some(#t))
        }
        None => quote!(::core::option::Option::None),
    };
    let max_tokens = match ai.max_tokens.get().and_then(|n| u32::try_from(*n).ok()) {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let hooks = ai.hooks.spanned().map(|hooks| {
        let path = &hooks.value;
        // Spanned at the path: a value that is not hooks for this agent is reported there.
        let value = quote_spanned!(hooks.span.to_proc_macro()=> &#path);
        quote! {
            fn hooks() -> &'static dyn #krate::ai::StepHooks<Self> {
                #value
            }
        }
    });
    let reasoning = reasoning(ai, krate);
    quote! {
        impl #krate::ai::AiAgent for #agent {
            const AI: #krate::ai::AiConfig = #krate::ai::AiConfig {
                model: #model,
                system: #system,
                tools: &[#(#tools),*],
                approve: &[#(#approve),*],
                max_iterations: #max_iterations,
                temperature: #temperature,
                max_tokens: #max_tokens,
                reasoning: #reasoning,
            };
            #hooks
        }
    }
}

/// A strategy name the checker accepted (`cot` or `ChainOfThought`) as the runtime's kind.
fn strategy_kind(word: &str, krate: &TokenStream) -> TokenStream {
    let variant = match AiKind::from_keyword(word) {
        Some(AiKind::React) => "React",
        Some(AiKind::ChainOfThought) => "Cot",
        Some(AiKind::ChainOfDraft) => "Cod",
        Some(AiKind::TreeOfThoughts) => "Tot",
        Some(AiKind::GraphOfThoughts) => "Got",
        Some(AiKind::AlgorithmOfThoughts) => "Aot",
        Some(AiKind::Trm) => "Trm",
        Some(AiKind::Adaptive) | None => "Cot",
    };
    let variant = quote::format_ident!("{variant}");
    quote!(#krate::ai::StrategyKind::#variant)
}

fn float(value: &OptionValue) -> f32 {
    match value {
        OptionValue::Int(i) => *i as f32,
        OptionValue::Float(f) => *f as f32,
        _ => 0.0,
    }
}

/// `ReasoningConfig { <given options>, ..ReasoningConfig::DEFAULT }`; the checker accepted
/// every value, so each has its option's shape.
fn reasoning(ai: &AiDef, krate: &TokenStream) -> TokenStream {
    let mut fields = Vec::new();
    for option in &ai.reasoning {
        let value = &option.value.value;
        let field = match option.name.value.as_str() {
            "traversal_strategy" => "traversal",
            "aggregation_strategy" => "aggregation",
            other => other,
        };
        let expr = match (field, value) {
            ("traversal", OptionValue::Word(w)) => {
                let variant = match w.as_str() {
                    "dfs" => quote!(Dfs),
                    "best_first" => quote!(BestFirst),
                    _ => quote!(Bfs),
                };
                quote!(#krate::ai::Traversal::#variant)
            }
            ("aggregation", OptionValue::Word(w)) => {
                let variant = match w.as_str() {
                    "weighted" => quote!(Weighted),
                    "best" => quote!(Best),
                    _ => quote!(Synthesis),
                };
                quote!(#krate::ai::Aggregation::#variant)
            }
            ("default_strategy", OptionValue::Word(w)) => strategy_kind(w, krate),
            ("available_strategies", value) => {
                let words: Vec<&str> = match value {
                    OptionValue::List(items) => items
                        .iter()
                        .filter_map(|i| match &i.value {
                            OptionValue::Word(w) => Some(w.as_str()),
                            _ => None,
                        })
                        .collect(),
                    OptionValue::Word(w) => vec![w.as_str()],
                    _ => Vec::new(),
                };
                let kinds = words.into_iter().map(|w| strategy_kind(w, krate));
                quote!(&[#(#kinds),*])
            }
            ("complexity_thresholds", OptionValue::List(items)) if items.len() == 2 => {
                let (low, high) = (
                    Literal::f32_suffixed(float(&items[0].value)),
                    Literal::f32_suffixed(float(&items[1].value)),
                );
                quote!((#low, #high))
            }
            ("act_threshold", value) => {
                let f = Literal::f32_suffixed(float(value));
                quote!(#f)
            }
            ("token_budget", OptionValue::Int(n)) => {
                let n = Literal::u64_suffixed(u64::try_from(*n).unwrap_or(u64::MAX));
                quote!(::core::option::Option::Some(#n))
            }
            (_, OptionValue::Int(n)) => {
                let n = Literal::u32_suffixed(u32::try_from(*n).unwrap_or(u32::MAX));
                quote!(#n)
            }
            (_, OptionValue::Text(text)) => quote!(::core::option::Option::Some(#text)),
            _ => continue,
        };
        let field = quote::format_ident!("{field}");
        fields.push(quote!(#field: #expr));
    }
    quote! {
        #krate::ai::ReasoningConfig {
            #(#fields,)*
            ..#krate::ai::ReasoningConfig::DEFAULT
        }
    }
}
