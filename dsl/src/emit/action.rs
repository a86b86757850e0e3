//! The marker type `#[action]` adds next to the function, and its `Action` impls.
//!
//! The marker is a braced struct named like the function: braced structs live only in the type
//! namespace, so the function stays callable under its own name (Rocket's route handlers use the
//! same trick) and `actions [charge]` names the marker.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::{ident, runtime};
use crate::check::{ActionShape, StateAccess};
use crate::model::ActionDef;

/// The marker struct plus `Action` and `SyncAction`/`AsyncAction` impls.
pub fn action(def: &ActionDef, shape: &ActionShape) -> TokenStream {
    let krate = runtime(&def.runtime);
    let function = ident(&def.name.value, def.name.span);
    let name = &def.name.value;
    let description = def
        .description
        .get()
        .or(def.doc.as_ref())
        .map(String::as_str)
        .unwrap_or_default();
    let params = match &shape.params {
        Some(ty) => quote!(#ty),
        None => quote!(#krate::NoParams),
    };
    let (generics, state) = match &shape.state {
        StateAccess::None => (quote!(<__S: ::core::marker::Send + 'static>), quote!(__S)),
        StateAccess::Mut(ty) | StateAccess::Shared(ty) => (quote!(), quote!(#ty)),
    };
    let state_arg = match (&shape.state, shape.is_async) {
        (StateAccess::None, _) => None,
        (StateAccess::Mut(_), _) => Some(quote!(__state)),
        (StateAccess::Shared(_), false) => Some(quote!(&*__state)),
        (StateAccess::Shared(_), true) => Some(quote!(&__state)),
    };
    let params_arg = shape.params.as_ref().map(|_| quote!(__params));
    let args = state_arg.into_iter().chain(params_arg);
    let call = quote!(#function(#(#args),*));
    // Spanned at the return type, so a type that is not an outcome is reported there.
    let output = def.output.to_proc_macro();
    let into_outcome = quote_spanned!(output=> #krate::IntoOutcome::into_outcome(__output));
    let exec = exec_const(def, &krate);
    let marker_doc =
        format!("The action marker of [`{name}`](fn@{name}): list it in an agent's `actions`.");

    let (entry, body) = if shape.is_async {
        (
            quote!(#krate::ActionEntry::asynchronous::<Self>()),
            quote! {
                impl #generics #krate::AsyncAction<#state> for #function {
                    #[allow(unused_variables)]
                    fn run(
                        __state: #state,
                        __params: #params,
                    ) -> #krate::__private::BoxFuture<'static, ::core::result::Result<#krate::Outcome, #krate::ActionError>> {
                        #krate::__private::box_future(async move {
                            let __output = #call.await;
                            #into_outcome
                        })
                    }
                }
            },
        )
    } else {
        (
            quote!(#krate::ActionEntry::sync::<Self>()),
            quote! {
                impl #generics #krate::SyncAction<#state> for #function {
                    #[allow(unused_variables)]
                    fn run(
                        __state: &mut #state,
                        __params: #params,
                    ) -> ::core::result::Result<#krate::Outcome, #krate::ActionError> {
                        let __output = #call;
                        #into_outcome
                    }
                }
            },
        )
    };
    let vis = &def.vis;
    quote! {
        #[doc = #marker_doc]
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #function {}

        impl #generics #krate::Action<#state> for #function {
            type Params = #params;
            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = #description;
            #exec
            const ENTRY: #krate::ActionEntry<#state> = #entry;
        }

        #body
    }
}

fn exec_const(def: &ActionDef, krate: &TokenStream) -> TokenStream {
    if !def.exec.any() {
        return quote!();
    }
    let ms = |d: Option<&crate::model::DurationMs>| d.map(|d| d.0);
    let duration = |field: &str, value: Option<u64>| {
        let field = syn::Ident::new(field, proc_macro2::Span::call_site());
        value.map(|ms| quote!(#field: #krate::__private::Duration::from_millis(#ms),))
    };
    let timeout = duration("timeout", ms(def.exec.timeout.get()));
    let backoff = duration("backoff", ms(def.exec.backoff.get()));
    let backoff_cap = duration("backoff_cap", ms(def.exec.backoff_cap.get()));
    let max_retries = def.exec.max_retries.get().map(|n| quote!(max_retries: #n,));
    quote! {
        const EXEC: #krate::ExecOptions = #krate::ExecOptions {
            #timeout #backoff #backoff_cap #max_retries
            ..#krate::ExecOptions::DEFAULT
        };
    }
}

/// What `#[action]` emits beside its errors: a marker that is an action of every agent, so
/// agents listing it report no further errors.
pub fn action_fallback(def: &ActionDef) -> TokenStream {
    let krate = runtime(&def.runtime);
    let function = ident(&def.name.value, def.name.span);
    let name = &def.name.value;
    let vis = &def.vis;
    quote! {
        #[allow(non_camel_case_types)]
        #vis struct #function {}
        impl<__S: 'static> #krate::Action<__S> for #function {
            type Params = #krate::NoParams;
            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = "";
            const ENTRY: #krate::ActionEntry<__S> = #krate::ActionEntry::sync::<Self>();
        }
        impl<__S: 'static> #krate::SyncAction<__S> for #function {
            fn run(_: &mut __S, _: #krate::NoParams) -> ::core::result::Result<#krate::Outcome, #krate::ActionError> {
                ::core::unreachable!("`#[action]` reported an error for this function")
            }
        }
    }
}
