//! `impl AiAgent` for an agent run by an AI strategy: its configuration as a constant, and its
//! hooks when `hooks = ...` names them.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::ident;
use crate::model::{ActionRef, AgentDef, AiDef, AiKind};

/// The strategy type of an AI kind.
pub fn strategy_type(kind: AiKind, krate: &TokenStream) -> TokenStream {
    match kind {
        AiKind::React => quote!(#krate::ai::React),
        AiKind::ChainOfThought => quote!(#krate::ai::ChainOfThought),
        AiKind::ChainOfDraft => quote!(#krate::ai::ChainOfDraft),
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
    let hooks = ai.hooks.get().map(|path| {
        quote! {
            fn hooks() -> &'static dyn #krate::ai::StepHooks<Self> {
                &#path
            }
        }
    });
    quote! {
        impl #krate::ai::AiAgent for #agent {
            const AI: #krate::ai::AiConfig = #krate::ai::AiConfig {
                model: #model,
                system: #system,
                tools: &[#(#tools),*],
                max_iterations: #max_iterations,
                temperature: #temperature,
                max_tokens: #max_tokens,
                ..#krate::ai::AiConfig::DEFAULT
            };
            #hooks
        }
    }
}
