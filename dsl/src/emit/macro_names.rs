//! The action names a macro's input writes (`actions [close]`, `action close`, FSM row actions,
//! hooks, tools), imported under aliases so that a plain function without `#[action]` is one
//! error at the name that says to add the attribute.
//!
//! `#[action]` adds a type named like the function; a name without it is a function only, and
//! naming it as a type would be rustc's "expected type, found function". So each single name
//! is imported (`use close as __stratagem_agent_Door_0;`, which takes whatever namespaces the
//! name has) beside a glob import of a fallback type under the alias's name: an explicit import
//! shadows a glob, so the alias is the user's type when there is one and the fallback only when
//! the name is a function alone. The fallback implements every action trait (no further errors)
//! and answers `__stratagem_resolved()` itself, which one check per name requires to be the
//! runtime's answer, with a message that names the function. Paths (`acts::close`) keep their
//! own resolution: the fallback needs a single name.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;

use super::rust_names::{RustName, collect_in};
use crate::check::codes;
use crate::model::{AgentDef, NodeDef};

/// What one macro expansion adds for its names: the items, and the alias of each name for
/// [`super::rust_names::with_macro_aliases`].
pub struct MacroNames {
    /// The fallback module, the imports and the checks.
    pub items: TokenStream,
    /// Name -> alias.
    pub aliases: HashMap<String, syn::Ident>,
}

/// The names of `agent`'s actions, FSM rows and hooks, AI tools and inline tree.
pub fn for_agent(agent: &AgentDef, krate: &TokenStream) -> MacroNames {
    let names = collect_in(0, std::slice::from_ref(agent), Vec::new());
    aliased(&format!("agent_{}", agent.name.value), &names, krate)
}

/// The names of the action leaves of `roots`; `scope` tells two expansions in one module apart.
pub fn for_trees(scope: &str, roots: Vec<&NodeDef>, krate: &TokenStream) -> MacroNames {
    let names = collect_in(0, &[], roots);
    aliased(scope, &names, krate)
}

fn aliased(scope: &str, names: &[RustName], krate: &TokenStream) -> MacroNames {
    let single = names.iter().filter(|n| {
        matches!(n.role, "action" | "hook" | "tool")
            && n.path.leading_colon.is_none()
            && n.path.segments.len() == 1
            && n.path.segments[0].arguments.is_none()
    });
    let module = format_ident!("__stratagem_fallback_{}", scope);
    let mut aliases = HashMap::new();
    let mut structs = Vec::new();
    let mut imports = Vec::new();
    let mut checks = Vec::new();
    for (index, name) in single.enumerate() {
        let written = &name.path.segments[0].ident;
        // `r#tally` is `tally` to people, and the key `rust_path` looks up as written.
        let (key, text) = (written.to_string(), written.unraw().to_string());
        // The name as written, where it was written: a name that does not exist is reported
        // at the user's token.
        let span = name.span.to_proc_macro();
        let mut user = written.clone();
        user.set_span(span);
        let alias = format_ident!("__stratagem_{}_{}", scope, index);
        structs.push(fallback_items(&alias));
        let alias_at = syn::Ident::new(&alias.to_string(), span);
        imports.push(quote_spanned! {span=>
            #[allow(unused_imports)]
            use #user as #alias_at;
        });
        checks.push(check(&text, "", span, &module, &alias, krate));
        aliases.insert(key, alias);
    }
    if structs.is_empty() {
        return MacroNames {
            items: TokenStream::new(),
            aliases,
        };
    }
    let items = quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
        mod #module {
            #(#structs)*
        }
        #[allow(unused_imports)]
        use #module::*;
        #(#imports)*
        #(#checks)*
    };
    MacroNames { items, aliases }
}

/// The fallback module's items for one alias: a type (the fallback action) and a value (`()`,
/// which no function is), so the check tells a plain function from a name that is nothing.
pub(super) fn fallback_items(alias: &syn::Ident) -> TokenStream {
    quote! {
        pub struct #alias {}
        pub const #alias: () = ();
    }
}

/// The fallback's impls, and the check that the alias is not the fallback. `location` starts
/// the message (a `.agent` file's `path:line:col: `, empty for macros).
pub(super) fn check(
    text: &str,
    location: &str,
    span: proc_macro2::Span,
    module: &syn::Ident,
    alias: &syn::Ident,
    krate: &TokenStream,
) -> TokenStream {
    let message = format!("{location}`{text}` is not an action");
    let label = format!("add `#[action]` to `{text}`");
    let note = format!(
        "an action is a function marked `#[action]`; `agentc explain {}` explains this error",
        codes::ACTION_ATTRIBUTE
    );
    let fallback = quote!(#module::#alias);
    let impls = super::action::fallback_impls(&fallback, text, krate);
    // Spanned at the name: the error is reported where the user wrote it.
    let alias_at = syn::Ident::new(&alias.to_string(), span);
    let call = quote_spanned!(span=> require(#alias_at::__stratagem_resolved(), &#alias_at));
    quote! {
        #[allow(dead_code)]
        const _: () = {
            #[allow(unused_imports)]
            use #krate::__private::ResolvedAction as _;
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait HasActionAttribute<V> {}
            // A type is what it is (its own impls say whether it is an action); the fallback
            // with the fallback value is a name that is nothing, already an unresolved import.
            #[diagnostic::do_not_recommend]
            impl<V> HasActionAttribute<V> for #krate::__private::Resolved {}
            #[diagnostic::do_not_recommend]
            impl HasActionAttribute<()> for MissingActionAttribute {}
            // A second impl, so rustc does not infer `V` from the first one.
            #[diagnostic::do_not_recommend]
            impl HasActionAttribute<MissingActionAttribute> for MissingActionAttribute {}
            /// What the fallback answers: the name is not a type.
            struct MissingActionAttribute;
            fn require<T: HasActionAttribute<V>, V>(_: T, _: &V) {}
            fn check() {
                #call
            }
            impl #fallback {
                fn __stratagem_resolved() -> MissingActionAttribute {
                    MissingActionAttribute
                }
            }
            #impls
        };
    }
}
