//! The marker type `#[action]` adds next to the function, and its `Action` impls.
//!
//! The marker is a braced struct named like the function: braced structs live only in the type
//! namespace, so the function stays callable under its own name (Rocket's route handlers use the
//! same trick) and `actions [charge]` names the marker.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::{ident, local, runtime};
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
    let writes_state = matches!(shape.state, StateAccess::Mut(_));
    // A type that cannot be parameters (most often the state taken by value) is reported at
    // the parameter with the runtime's explanation, beside rustc's own missing-trait error.
    let params_check = shape.params.as_ref().map(|ty| {
        let span = syn::spanned::Spanned::span(ty);
        let check = quote_spanned!(span=> #krate::__private::action_params::<#ty>);
        quote!(const _: () = { let _ = #check; };)
    });
    let (generics, state) = match &shape.state {
        StateAccess::None => (quote!(<__S: ::core::marker::Send + 'static>), quote!(__S)),
        StateAccess::Mut(ty) | StateAccess::Shared(ty) => (quote!(), quote!(#ty)),
    };
    // Mixed-site locals: a function called `state`, or a return type written by another
    // macro (whose `output` would not see a call-site `output`), cannot meet them.
    let (state_local, params_local, output_local) =
        (local("state"), local("params"), local("output"));
    let state_arg = match (&shape.state, shape.is_async) {
        (StateAccess::None, _) => None,
        (StateAccess::Mut(_), _) => Some(quote!(#state_local)),
        (StateAccess::Shared(_), false) => Some(quote!(&*#state_local)),
        (StateAccess::Shared(_), true) => Some(quote!(&#state_local)),
    };
    let params_arg = shape.params.as_ref().map(|_| quote!(#params_local));
    let args = state_arg.into_iter().chain(params_arg);
    let call = quote!(#function(#(#args),*));
    // Spanned at the return type, so a type that is not an outcome is reported there.
    let output = def.output.to_proc_macro();
    // The same local, resolved mixed-site but located at the return type.
    let output_at = proc_macro2::Ident::new("output", local("output").span().located_at(output));
    let into_outcome = quote_spanned!(output=> #krate::IntoOutcome::into_outcome(#output_at));
    let exec = exec_const(def, &krate);
    let on_halt = def.on_halt.spanned().map(|hook| {
        let path = &hook.value;
        let hook_name = path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::");
        // Spanned at the path: a function that is not `fn(&mut State)` is reported there.
        let new = quote_spanned!(hook.span.to_proc_macro()=> #krate::HaltHook::<#state>::new(#hook_name, #path));
        quote!(const ON_HALT: ::core::option::Option<#krate::HaltHook<#state>> = ::core::option::Option::Some(#new);)
    });
    // Nothing to decode for an action without parameters: running it skips the decoder.
    let without_params = shape.params.is_none().then(|| {
        quote! {
            #[inline(always)]
            fn without_params() -> ::core::option::Option<#krate::NoParams> {
                ::core::option::Option::Some(#krate::NoParams {})
            }
        }
    });
    // A sync function returning `()` or `Result<(), _>` never ends a run in progress: its tree
    // leaves store no progress flag.
    let may_be_in_progress = (def.finishes_each_run && !shape.is_async).then(|| {
        quote!(
            const MAY_BE_IN_PROGRESS: bool = false;
        )
    });
    let marker_doc =
        format!("The action marker of [`{name}`](fn@{name}): list it in an agent's `actions`.");

    let (entry, body) = if shape.is_async {
        (
            quote!(#krate::ActionEntry::asynchronous::<Self>()),
            quote! {
                impl #generics #krate::AsyncAction<#state> for #function {
                    #[allow(unused_variables)]
                    fn run(
                        #state_local: #state,
                        #params_local: #params,
                    ) -> #krate::__private::BoxFuture<'static, ::core::result::Result<#krate::Outcome, #krate::ActionError>> {
                        #krate::__private::box_future(async move {
                            let #output_local = #call.await;
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
                        #state_local: &mut #state,
                        #params_local: #params,
                    ) -> ::core::result::Result<#krate::Outcome, #krate::ActionError> {
                        let #output_local = #call;
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
            const WRITES_STATE: bool = #writes_state;
            #may_be_in_progress
            #exec
            #on_halt
            #without_params
            const ENTRY: #krate::ActionEntry<#state> = #entry;
        }

        impl #krate::__private::ParamsOf for #function {
            type Params = #params;
        }

        #body
        #params_check
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
    let vis = &def.vis;
    let name = &def.name.value;
    let impls = fallback_impls(&quote!(), &quote!(#function), &quote!(#name), &krate);
    quote! {
        #[allow(non_camel_case_types)]
        #vis struct #function {}
        #impls
    }
}

/// The impls that make `ty` an action of every agent that never runs (the build has already
/// failed), hidden from rustc's "implemented for" lists of other errors. `generics` are the
/// impls' own parameters (each with a trailing comma) and `name` the expression of `NAME`.
pub(super) fn fallback_impls(
    generics: &TokenStream,
    ty: &TokenStream,
    name: &TokenStream,
    krate: &TokenStream,
) -> TokenStream {
    quote! {
        #[diagnostic::do_not_recommend]
        impl<#generics __S: 'static> #krate::Action<__S> for #ty {
            type Params = #krate::NoParams;
            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = "";
            const ENTRY: #krate::ActionEntry<__S> = #krate::ActionEntry::sync::<Self>();
        }
        // Open parameters: trees naming it report nothing more.
        #[diagnostic::do_not_recommend]
        impl<#generics> #krate::__private::ParamsOf for #ty {
            type Params = #krate::__private::serde_json::Value;
        }
        #[diagnostic::do_not_recommend]
        impl<#generics __S: 'static> #krate::SyncAction<__S> for #ty {
            fn run(_: &mut __S, _: #krate::NoParams) -> ::core::result::Result<#krate::Outcome, #krate::ActionError> {
                ::core::unreachable!("the build reported an error for this action")
            }
        }
    }
}
