//! Entry points of the procedural macros. `agent-macros` only forwards to these.
//!
//! Each returns the original item plus the generated code; on error it returns the original item,
//! `compile_error!` at each offending token, and fallback items (after tokio-macros and
//! thiserror), so one mistake shows as one error and not as a cascade.

use proc_macro2::TokenStream;
use quote::quote;

use crate::check::{self, Diagnostic};
use crate::model::ParamKind;
use crate::{emit, tokens};

/// `#[agent(...)]`.
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    // The struct's field types and the attribute's trees are parsed recursively.
    if let Err(e) = tokens::nesting::check(&attr) {
        return with_error(item, e);
    }
    if let Err(e) = tokens::nesting::check(&item) {
        // The item goes on to other derives (serde's parse it recursively too, and can overflow
        // rustc's stack) and to rustc's trait solver (which overflows on deep types): the error
        // comes first, and the item without its fields.
        let error = e.to_compile_error();
        let stub = without_fields(item);
        return quote!(#error #stub);
    }
    let parsed: syn::Item = match syn::parse2(item.clone()) {
        Ok(parsed) => parsed,
        Err(e) => return with_error(item, e),
    };
    let mut def = match tokens::agent(attr, &parsed) {
        Ok(def) => def,
        Err(e) => return with_error(item, coded(e)),
    };
    match check::agent(&def) {
        Ok(_warnings) => {
            let tracked = match crate::build::macro_lock::check(&mut def) {
                // Editing the lock file rebuilds the crate, so the check runs again.
                Ok(Some(path)) => {
                    let path = path.to_string_lossy();
                    quote!(
                        const _: &[u8] = ::core::include_bytes!(#path);
                    )
                }
                Ok(None) => TokenStream::new(),
                Err(diagnostics) => {
                    let fallback = emit::agent_fallback(&def);
                    return with_diagnostics(quote!(#item #fallback), &diagnostics);
                }
            };
            let names = emit::macro_names::for_agent(&def, &emit::runtime(&def.runtime));
            let generated =
                emit::rust_names::with_macro_aliases(names.aliases, || emit::agent(&def));
            let names = names.items;
            quote!(#item #names #generated #tracked)
        }
        Err(diagnostics) => {
            let fallback = emit::agent_fallback(&def);
            with_diagnostics(quote!(#item #fallback), &diagnostics)
        }
    }
}

/// `#[derive(Params)]`.
pub fn params(item: TokenStream) -> TokenStream {
    // Field types are read recursively.
    if let Err(e) = tokens::nesting::check(&item) {
        return e.to_compile_error();
    }
    emit::params::derive(item)
}

/// `#[action(...)]`.
pub fn action(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Err(e) = tokens::nesting::check(&attr) {
        return with_error(item, e);
    }
    let parsed: syn::Item = match syn::parse2(item.clone()) {
        Ok(parsed) => parsed,
        Err(e) => return with_error(item, e),
    };
    let def = match tokens::action(attr, &parsed) {
        Ok(def) => def,
        Err(e) => return with_error(item, coded(e)),
    };
    match check::action(&def) {
        Ok((shape, _warnings)) => {
            let generated = emit::action(&def, &shape);
            quote!(#item #generated)
        }
        Err(diagnostics) => {
            // A method's `#[action]` sits inside an `impl` block, where a fallback struct cannot.
            let in_impl = def.params.iter().any(|p| p.kind == ParamKind::Receiver);
            let fallback = (!in_impl).then(|| emit::action_fallback(&def));
            with_diagnostics(quote!(#item #fallback), &diagnostics)
        }
    }
}

/// `bt! { ... }`: a tree expression, or one `Behavior` type per behaviour (`for Type`).
pub fn bt(input: TokenStream) -> TokenStream {
    let def = match tokens::bt(input) {
        Ok(def) => def,
        Err(e) => return coded(e).to_compile_error(),
    };
    match check::bt(&def) {
        Ok(_warnings) => {
            let krate = emit::runtime(&def.runtime);
            let roots = def.root.iter().chain(def.behaviors.iter().map(|b| &b.root));
            // Items share the caller's module with other expansions; an expression has a block.
            let scope = match (&def.blackboard, def.behaviors.first()) {
                (Some(_), Some(first)) => format!("bt_{}", first.name.value),
                _ => "tree".to_owned(),
            };
            let names = emit::macro_names::for_trees(&scope, roots.collect(), &krate);
            let generated =
                emit::rust_names::with_macro_aliases(names.aliases, || emit::tree::bt(&def));
            let names = names.items;
            match (&def.blackboard, names.is_empty()) {
                (_, true) => generated,
                (Some(_), false) => quote!(#names #generated),
                (None, false) => quote!({ #names #generated }),
            }
        }
        Err(diagnostics) => {
            let fallback = emit::tree::bt_fallback(&def);
            let errors = check::to_syn_error(&diagnostics).map(|e| e.to_compile_error());
            if def.blackboard.is_some() {
                quote!(#fallback #errors)
            } else {
                // An expression: the errors go first, in a block whose value is the fallback.
                quote!({ #errors #fallback })
            }
        }
    }
}

/// A token-level error (what the macro input's own grammar rejects) with the code of syntax
/// errors, unless it names a code of its own: every macro error carries a code, as `.agent`
/// errors do.
fn coded(error: syn::Error) -> syn::Error {
    let mut out: Option<syn::Error> = None;
    for e in error {
        let message = e.to_string();
        let e = if message.contains("`agentc explain ") {
            e
        } else {
            let note = tokens::common::explained(check::codes::SYNTAX);
            syn::Error::new(e.span(), format!("{message}{note}"))
        };
        match &mut out {
            Some(out) => out.combine(e),
            None => out = Some(e),
        }
    }
    out.unwrap_or_else(|| syn::Error::new(proc_macro2::Span::call_site(), "invalid input"))
}

/// The item's tokens with its top-level braces emptied: `struct Deep { field: ... }` becomes
/// `struct Deep {}`, keeping its attributes, visibility and name.
fn without_fields(item: TokenStream) -> TokenStream {
    use proc_macro2::{Delimiter, Group, TokenTree};
    item.into_iter()
        .map(|token| match token {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let mut empty = Group::new(Delimiter::Brace, TokenStream::new());
                empty.set_span(g.span());
                TokenTree::Group(empty)
            }
            other => other,
        })
        .collect()
}

fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.to_compile_error();
    quote!(#item #error)
}

fn with_diagnostics(item: TokenStream, diagnostics: &[Diagnostic]) -> TokenStream {
    match check::to_syn_error(diagnostics) {
        Some(error) => with_error(item, error),
        None => item,
    }
}
