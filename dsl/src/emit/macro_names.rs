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
    let single = names.iter().filter(|n| is_single(n));
    let module = format_ident!("__stratagem_fallback_{}", scope);
    let mut aliases = HashMap::new();
    let mut fallbacks = Vec::new();
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
        let alias_at = syn::Ident::new(&alias.to_string(), span);
        imports.push(quote_spanned! {span=>
            #[allow(unused_imports)]
            use #user as #alias_at;
        });
        checks.push(check(&text, "", span, &module, &alias));
        fallbacks.push((alias.clone(), text));
        aliases.insert(key, alias);
    }
    if fallbacks.is_empty() {
        return MacroNames {
            items: TokenStream::new(),
            aliases,
        };
    }
    let fallback = fallback_module(&module, &fallbacks, krate);
    let checks = self::checks(checks);
    let items = quote! {
        #fallback
        #(#imports)*
        #checks
    };
    MacroNames { items, aliases }
}

/// Whether `name` is an action, hook or tool written as one bare name: the names the fallback
/// can stand in for (a path keeps its own resolution).
pub(super) fn is_single(name: &RustName) -> bool {
    matches!(name.role, "action" | "hook" | "tool")
        && name.path.leading_colon.is_none()
        && name.path.segments.len() == 1
        && name.path.segments[0].arguments.is_none()
}

/// The fallback module of one expansion or file, glob-imported: for each `(alias, name)` a type
/// (the fallback action, `Fallback<index>`) and a value (`()`, which no function is), so the
/// check tells a plain function from a name that is nothing; and, once for all names, the
/// fallback's impls and what the checks require. Per name only the alias and the message
/// remain, so 10,000 names cost 10,000 short items, not 10,000 sets of impls.
pub(super) fn fallback_module(
    module: &syn::Ident,
    fallbacks: &[(syn::Ident, String)],
    krate: &TokenStream,
) -> TokenStream {
    let count = fallbacks.len();
    let names = fallbacks.iter().map(|(_, name)| name);
    let aliases = fallbacks.iter().enumerate().map(|(index, (alias, _))| {
        quote! {
            pub type #alias = Fallback<#index>;
            pub const #alias: () = ();
        }
    });
    let impls = super::action::fallback_impls(
        &quote!(const __N: usize,),
        &quote!(Fallback<__N>),
        &quote!(NAMES[__N]),
        krate,
    );
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
        mod #module {
            /// What a name that is a function alone is as a type.
            pub struct Fallback<const N: usize>;
            /// What the fallback answers: the name is not a type.
            pub struct MissingActionAttribute;
            /// The names as written, for the fallback's `NAME`.
            pub const NAMES: [&str; #count] = [#(#names),*];
            /// What each name's own check requires: a type is what it is (its own impls say
            /// whether it is an action); the fallback with the fallback value is a name that is
            /// nothing, already an unresolved import.
            pub trait IsAction<V> {}
            #[diagnostic::do_not_recommend]
            impl<V> IsAction<V> for #krate::__private::Resolved {}
            #[diagnostic::do_not_recommend]
            impl IsAction<()> for MissingActionAttribute {}
            // A second impl, so rustc does not infer `V` from the first one.
            #[diagnostic::do_not_recommend]
            impl IsAction<MissingActionAttribute> for MissingActionAttribute {}
            impl<const N: usize> Fallback<N> {
                pub fn __stratagem_resolved() -> MissingActionAttribute {
                    MissingActionAttribute
                }
            }
            #impls
            #(#aliases)*
        }
        #[allow(unused_imports)]
        use #module::*;
        #[allow(unused_imports)]
        use #krate::__private::ResolvedAction as _;
    }
}

/// The check that `alias` is not the fallback, with a message naming `text`: a block of the
/// function [`checks`] makes. `location` starts the message (a `.agent` file's `path:line:col: `,
/// empty for macros).
pub(super) fn check(
    text: &str,
    location: &str,
    span: proc_macro2::Span,
    module: &syn::Ident,
    alias: &syn::Ident,
) -> TokenStream {
    let message = format!("{location}`{text}` is not an action");
    let label = format!("add `#[action]` to `{text}`");
    let note = format!(
        "an action is a function marked `#[action]`; `agentc explain {}` explains this error",
        codes::ACTION_ATTRIBUTE
    );
    // Spanned at the name: the error is reported where the user wrote it.
    let alias_at = syn::Ident::new(&alias.to_string(), span);
    let call = quote_spanned!(span=>
        HasActionAttribute::require(#alias_at::__stratagem_resolved(), &#alias_at)
    );
    // A block of its own, so every name's trait can have the name rustc shows.
    quote! {
        {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait HasActionAttribute<V>: Sized {
                fn require(self, _: &V) {}
            }
            #[diagnostic::do_not_recommend]
            impl<T: #module::IsAction<V>, V> HasActionAttribute<V> for T {}
            #call;
        }
    }
}

/// The [`check`]s of one expansion or file, in one function that is never called.
pub(super) fn checks(checks: impl IntoIterator<Item = TokenStream>) -> TokenStream {
    let checks = checks.into_iter();
    quote! {
        const _: () = {
            #[allow(dead_code)]
            fn check() {
                #(#checks)*
            }
        };
    }
}
