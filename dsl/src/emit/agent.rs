//! `impl AgentSpec` for an agent: action table, name dispatch, routes, router.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::rust_names::rust_path;
use super::{ident, runtime};
use std::collections::{HashMap, HashSet};

use crate::model::{AgentDef, BehaviorDef, RouteTargetDef, StrategyDef, behaviors_by_name};

/// The impls `#[agent]` adds next to the struct.
pub fn agent(def: &AgentDef) -> TokenStream {
    agent_with_behaviors(def, &[])
}

/// [`agent`] for an agent of a `.agent` file, whose tree may name the file's behaviours.
pub fn agent_with_behaviors(def: &AgentDef, behaviors: &[BehaviorDef]) -> TokenStream {
    agent_in(def, &behaviors_by_name(behaviors))
}

/// [`agent_with_behaviors`] with the behaviours already indexed by name, once per file.
pub(crate) fn agent_in(def: &AgentDef, by_name: &HashMap<&str, &BehaviorDef>) -> TokenStream {
    let krate = runtime(&def.runtime);
    let agent = ident(&def.name.value, def.name.span);
    let name = &def.name.value;
    let description = def
        .description
        .get()
        .map(String::as_str)
        .unwrap_or_default();
    let strategy = match def.strategy.get() {
        None | Some(StrategyDef::Direct) => quote!(#krate::Direct),
        Some(StrategyDef::Custom(path)) => {
            let path = &path.value;
            quote!(#path)
        }
        Some(StrategyDef::Fsm(_)) => quote!(#krate::Fsm),
        Some(StrategyDef::BehaviorTree(_)) => quote!(#krate::BehaviorTree),
        Some(StrategyDef::Ai(ai)) => super::ai::strategy_type(ai.kind, &krate),
    };
    let strategy_items = match def.strategy.get() {
        Some(StrategyDef::Fsm(machine)) => super::fsm::fsm(def, machine, &krate),
        Some(StrategyDef::Ai(ai)) => super::ai::ai(def, ai, &krate),
        Some(StrategyDef::BehaviorTree(tree)) => {
            super::tree::agent_tree(def, tree, by_name, &krate)
        }
        _ => quote!(),
    };
    let events: HashSet<String> = match def.strategy.get() {
        Some(StrategyDef::Fsm(machine)) => {
            machine.events().iter().map(|e| e.value.clone()).collect()
        }
        _ => HashSet::new(),
    };

    let tick = def.tick.get().map(|every| {
        let ms = every.0;
        quote! {
            const TICK_INTERVAL: ::core::option::Option<::core::time::Duration> =
                ::core::option::Option::Some(::core::time::Duration::from_millis(#ms));
        }
    });
    let ai = match def.strategy.get() {
        Some(StrategyDef::Ai(ai)) => Some(&**ai),
        _ => None,
    };
    let action_refs = super::ai::action_refs(def, ai);
    // Each entry spanned at its name, so an item that is not an action of this agent (an
    // `actions` entry, an AI tool) is reported where the list names it.
    let action_entries: Vec<TokenStream> = action_refs
        .iter()
        .map(|a| {
            let path = rust_path(&a.path.value);
            quote_spanned!(a.path.span.to_proc_macro()=> <#path as #krate::Action<#agent>>::ENTRY)
        })
        .collect();
    let action_names: Vec<&str> = action_refs.iter().map(|a| a.name.value.as_str()).collect();
    let action_count = action_refs.len();
    let indices = 0..action_count;

    // A tree's async actions are run by the host through `action`, listed or not.
    let tree_fallback = matches!(def.strategy.get(), Some(StrategyDef::BehaviorTree(_)))
        .then(|| quote!(.or_else(|| <Self as #krate::TreeAgent>::tree_action(name))));
    let route_count = def.routes.len();
    let routes = def.routes.iter().map(|route| {
        let pattern = &route.pattern.value;
        let priority = route.priority.as_ref().map_or(0, |p| p.value);
        let priority = i32::try_from(priority).unwrap_or_default();
        let target = match &route.target {
            RouteTargetDef::Tick(_) => quote!(#krate::RouteTarget::Tick),
            RouteTargetDef::Named(_) => {
                let target = route.target.name().unwrap_or_default();
                // An FSM event wins over an action of the same name.
                if events.contains(&target) {
                    quote!(#krate::RouteTarget::Event(::std::borrow::Cow::Borrowed(#target)))
                } else {
                    quote!(#krate::RouteTarget::Action(::std::borrow::Cow::Borrowed(#target)))
                }
            }
        };
        quote!(#krate::RouteSpec::new(#pattern, #target, #priority))
    });

    let plugins = super::plugins::plugins_fn(def, &krate);
    let definition = super::definition::definition(def, &krate, &def.accepted_definitions);

    quote! {
        #strategy_items

        impl #krate::AgentSpec for #agent {
            #plugins

            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = #description;
            #tick
            #definition
            type Strategy = #strategy;

            fn actions() -> &'static [#krate::ActionEntry<Self>] {
                static ACTIONS: [#krate::ActionEntry<#agent>; #action_count] = [
                    #(#action_entries),*
                ];
                &ACTIONS
            }

            // An agent without actions has a match with only `_` and an unused table.
            #[allow(clippy::match_single_binding, unused_variables)]
            fn action(name: &str) -> ::core::option::Option<&'static #krate::ActionEntry<Self>> {
                let actions = <Self as #krate::AgentSpec>::actions();
                match name {
                    #(#action_names => ::core::option::Option::Some(&actions[#indices]),)*
                    _ => ::core::option::Option::None,
                }
                #tree_fallback
            }

            fn routes() -> &'static [#krate::RouteSpec] {
                static ROUTES: [#krate::RouteSpec; #route_count] = [#(#routes),*];
                &ROUTES
            }

            fn router() -> ::core::result::Result<&'static #krate::Router, &'static #krate::RouteError> {
                static ROUTER: #krate::__private::OnceLock<
                    ::core::result::Result<#krate::Router, #krate::RouteError>,
                > = #krate::__private::OnceLock::new();
                ROUTER.get_or_init(#krate::agent::build_router::<#agent>).as_ref()
            }
        }
    }
}

/// What `#[agent]` emits beside its errors: a minimal `AgentSpec` so that code using the agent
/// does not add a cascade of errors to the one that matters.
pub fn agent_fallback(def: &AgentDef) -> TokenStream {
    let krate = runtime(&def.runtime);
    let agent = ident(&def.name.value, def.name.span);
    let name = &def.name.value;
    let strategy_items = match def.strategy.get() {
        Some(StrategyDef::Fsm(machine)) => super::fsm::fsm_fallback(def, machine, &krate),
        _ => quote!(),
    };
    quote! {
        #strategy_items
        impl #krate::AgentSpec for #agent {
            const NAME: &'static str = #name;
            type Strategy = #krate::Direct;
            fn actions() -> &'static [#krate::ActionEntry<Self>] {
                &[]
            }
        }
    }
}
