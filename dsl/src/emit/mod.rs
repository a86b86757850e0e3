//! The one code generator: model -> `TokenStream`. It runs only on models the checker accepted,
//! and refers to the runtime through one path (`::stratagem` unless `crate = ...` says otherwise).

mod action;
mod agent;
mod ai;
pub mod definition;
mod fsm;
pub mod macro_names;
pub mod params;
mod plugins;
pub mod rust_names;
mod state;
mod statechart;
pub mod tree;

pub use action::{action, action_fallback};
pub use agent::{agent, agent_fallback, agent_with_behaviors};
pub use fsm::{event_enum, state_enum};
pub use plugins::{Mounted, mounted};
pub use state::state_struct;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::ident::{Case, to_ident};
use crate::model::{Setting, Span};

/// The path generated code uses to reach the runtime.
pub fn runtime(setting: &Setting<syn::Path>) -> TokenStream {
    match setting.get() {
        Some(path) => quote!(#path),
        None => quote!(::stratagem),
    }
}

/// A Rust type as compact text (`Vec<String>`): how interrupts name their types in signals,
/// errors and fingerprints.
pub fn type_text(ty: &syn::Type) -> String {
    quote!(#ty).to_string().replace(' ', "")
}

/// An identifier for a model name, carrying its span when it came from a macro. Built by the
/// one naming rule ([`crate::model::ident`]) the checker applies, so it never panics.
pub fn ident(name: &str, span: Span) -> syn::Ident {
    to_ident(name, Case::AsWritten, span.to_proc_macro())
}

/// The `<Agent>Event` variant of an event (`add_item` -> `AddItem`).
pub fn event_ident(name: &str, span: Span) -> syn::Ident {
    to_ident(name, Case::UpperCamel, span.to_proc_macro())
}

/// A local variable of generated code: mixed-site (`macro_rules!` hygiene), so no name of the
/// user's, a guard called `agent` or an action called `state`, resolves to it or shadows it.
pub(crate) fn local(name: &str) -> proc_macro2::Ident {
    proc_macro2::Ident::new(name, proc_macro2::Span::mixed_site())
}

/// Everything a `.agent` file's agents generate: each state struct, then its `AgentSpec` impl
/// (trees inline the file's `behaviors`).
pub fn file(
    agents: &[crate::model::AgentDef],
    behaviors: &[crate::model::BehaviorDef],
) -> TokenStream {
    let mut code = TokenStream::new();
    file_each(agents, behaviors, |chunk| code.extend(chunk));
    code
}

/// [`file`] in whole items handed to `out` one agent at a time (the checks of the behaviours
/// run first), so that a caller printing them never holds every agent's tokens.
pub fn file_each(
    agents: &[crate::model::AgentDef],
    behaviors: &[crate::model::BehaviorDef],
    mut out: impl FnMut(TokenStream),
) {
    let by_name = crate::model::behaviors_by_name(behaviors);
    // The action arguments of each behaviour an agent runs, checked once however many agents
    // run it (the others generate no code, so nothing of theirs can fail at run time).
    if let Some(agent) = agents.first() {
        let krate = runtime(&agent.runtime);
        for behavior in behaviors_run(agents, behaviors, &by_name) {
            out(tree::arg_checks(&behavior.root, &krate));
        }
    }
    for def in agents {
        let state = state_struct(def);
        let spec = agent::agent_in(def, &by_name);
        out(quote!(#state #spec));
    }
}

/// The behaviours some agent of the file runs, directly or as a subtree, each once, in the
/// order first reached.
fn behaviors_run<'a>(
    agents: &'a [crate::model::AgentDef],
    behaviors: &'a [crate::model::BehaviorDef],
    by_name: &std::collections::HashMap<&'a str, &'a crate::model::BehaviorDef>,
) -> Vec<&'a crate::model::BehaviorDef> {
    use crate::model::{StrategyDef, TreeRef};
    if behaviors.is_empty() {
        return Vec::new();
    }
    let mut names: Vec<&str> = Vec::new();
    for agent in agents {
        if let Some(StrategyDef::BehaviorTree(tree)) = agent.strategy.get() {
            match &tree.tree {
                Some(TreeRef::Behavior(name)) => names.push(&name.value),
                Some(TreeRef::Inline(root)) => {
                    names.extend(root.subtrees().into_iter().map(|n| n.value.as_str()))
                }
                _ => {}
            }
        }
    }
    // An explicit stack: a chain of subtrees can be as long as the file.
    names.reverse();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while let Some(name) = names.pop() {
        let Some(&behavior) = by_name.get(name) else {
            continue;
        };
        if seen.insert(name) {
            out.push(behavior);
            let mut uses: Vec<&str> = behavior
                .root
                .subtrees()
                .into_iter()
                .map(|n| n.value.as_str())
                .collect();
            uses.reverse();
            names.extend(uses);
        }
    }
    out
}
