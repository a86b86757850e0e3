//! The state struct of an agent declared in a `.agent` file: the fields as declared, serde
//! through the runtime's re-export (so users need no serde dependency of their own), and a
//! `Default` impl built from the declared defaults.

use proc_macro2::TokenStream;
use quote::quote;

use super::{ident, runtime};
use crate::model::{AgentDef, Literal, Spanned, StateDef};

/// The struct and its `Default` impl; nothing for agents whose struct is the user's own.
pub fn state_struct(def: &AgentDef) -> TokenStream {
    let StateDef::Fields(fields) = &def.state else {
        return quote!();
    };
    let krate = runtime(&def.runtime);
    let serde_path = format!("{krate}::__private::serde").replace(' ', "");
    let agent = ident(&def.name.value, def.name.span);
    let doc = def
        .description
        .get()
        .map(|d| format!(" {d}"))
        .unwrap_or_else(|| format!(" The state of agent `{}`.", def.name.value));
    let doc = quote!(#[doc = #doc]);
    let names: Vec<syn::Ident> = fields
        .iter()
        .map(|f| ident(&f.name.value, f.name.span))
        .collect();
    let types = fields.iter().map(|f| &f.ty.value);
    let docs = fields.iter().map(|f| {
        format!(
            " `{}: {}`, declared in the `.agent` file.",
            f.name.value,
            crate::check::type_text(&f.ty.value)
        )
    });
    let defaults = fields.iter().map(|f| match &f.default {
        Some(lit) => value(&f.ty.value, lit),
        None => quote!(::core::default::Default::default()),
    });
    quote! {
        #doc
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            #krate::__private::serde::Serialize,
            #krate::__private::serde::Deserialize,
        )]
        #[serde(crate = #serde_path)]
        pub struct #agent {
            #(#[doc = #docs] pub #names: #types,)*
        }

        // The defaults may all be the type's own defaults; the impl is still the declared one.
        // `From::from` converts a literal into a field type rustc alone knows; for some types it
        // is the identity.
        #[allow(clippy::derivable_impls, clippy::useless_conversion)]
        impl ::core::default::Default for #agent {
            fn default() -> Self {
                #agent {
                    #(#names: #defaults,)*
                }
            }
        }
    }
}

/// A default literal as an expression of type `ty`. The checker has accepted the pair for the
/// types it knows; for others the conversions below let rustc decide.
fn value(ty: &syn::Type, lit: &Spanned<Literal>) -> TokenStream {
    let option_inner = match ty {
        syn::Type::Path(p) => p.path.segments.last().and_then(|s| {
            if s.ident != "Option" {
                return None;
            }
            match &s.arguments {
                syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                }),
                _ => None,
            }
        }),
        _ => None,
    };
    match (&lit.value, option_inner) {
        (Literal::None, _) => quote!(::core::option::Option::None),
        (_, Some(inner)) => {
            let inner = value(inner, lit);
            quote!(::core::option::Option::Some(#inner))
        }
        // The literal's own type must already be the field's: an integer default of a float
        // field is written as a float, a one-character string of a `char` field as a char.
        (Literal::Int(i), None) if is_named(ty, &["f32", "f64"]) => {
            let lit = proc_macro2::Literal::f64_unsuffixed(*i as f64);
            quote!(#lit)
        }
        (Literal::Str(text), None) if is_named(ty, &["char"]) => match text.chars().next() {
            Some(c) => {
                let lit = proc_macro2::Literal::character(c);
                quote!(#lit)
            }
            None => plain(lit),
        },
        (Literal::List(items), None) if items.is_empty() => {
            quote!(::core::default::Default::default())
        }
        (Literal::List(items), None) if matches!(ty, syn::Type::Array(_)) => {
            let elem = element_type(ty);
            let items = items.iter().map(|item| match elem {
                Some(elem) => value(elem, item),
                None => plain(item),
            });
            quote!([#(#items),*])
        }
        (Literal::List(items), None) => {
            let elem = element_type(ty);
            let items = items.iter().map(|item| match elem {
                Some(elem) => value(elem, item),
                None => plain(item),
            });
            quote!(::core::convert::From::from([#(#items),*]))
        }
        _ => plain(lit),
    }
}

/// Whether `ty` is a path type whose last segment is one of `names`.
fn is_named(ty: &syn::Type, names: &[&str]) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| names.iter().any(|n| s.ident == n)))
}

fn element_type(ty: &syn::Type) -> Option<&syn::Type> {
    match ty {
        syn::Type::Array(a) => Some(&a.elem),
        syn::Type::Path(p) => p.path.segments.last().and_then(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// A literal whose type rustc infers from the field.
fn plain(lit: &Spanned<Literal>) -> TokenStream {
    match &lit.value {
        Literal::Str(s) => quote!(::core::convert::From::from(#s)),
        Literal::Int(i) => {
            let lit = proc_macro2::Literal::i128_unsuffixed(*i);
            quote!(#lit)
        }
        Literal::Float(f) => {
            let lit = proc_macro2::Literal::f64_unsuffixed(*f);
            quote!(#lit)
        }
        Literal::Bool(b) => quote!(#b),
        Literal::None => quote!(::core::option::Option::None),
        Literal::List(items) => {
            let items = items.iter().map(plain);
            quote!(::core::convert::From::from([#(#items),*]))
        }
    }
}
