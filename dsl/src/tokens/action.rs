//! `#[action(...)]` on a function -> [`ActionDef`].

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned as _;
use syn::{FnArg, Token, Type};

use super::common::{self, options, unknown_option};
use crate::model::{ActionDef, ActionParam, ExecSettings, Name, ParamKind, Setting, Span, Spanned};

/// The options `#[action]` accepts.
pub const OPTIONS: &[&str] = &[
    "description",
    "timeout",
    "max_retries",
    "backoff",
    "backoff_cap",
    "on_halt",
    "crate",
];

/// Reads `#[action(attr)]` on `item`, which must be a function.
pub fn action(attr: TokenStream, item: &syn::Item) -> syn::Result<ActionDef> {
    let syn::Item::Fn(item) = item else {
        return Err(syn::Error::new_spanned(
            item_head(item),
            format!(
                "`#[action]` goes on a function\n  = help: write `#[action] fn name(state: &mut State, params: Params) -> Result<(), Error>`{}",
                super::common::explained(crate::check::codes::ACTION_ITEM)
            ),
        ));
    };
    let sig = &item.sig;
    let mut def = ActionDef {
        name: Spanned::new(sig.ident.unraw().to_string(), sig.ident.span()),
        vis: item.vis.clone(),
        asyncness: sig.asyncness.map(|a| Span::Macro(a.span)),
        params: sig.inputs.iter().map(param).collect(),
        unsupported: Vec::new(),
        description: Setting::default(),
        doc: common::doc_summary(&item.attrs),
        exec: ExecSettings::default(),
        on_halt: Setting::default(),
        runtime: Setting::default(),
        output: match &sig.output {
            syn::ReturnType::Type(_, ty) => Span::Macro(ty.span()),
            syn::ReturnType::Default => Span::Macro(sig.ident.span()),
        },
        finishes_each_run: finishes_each_run(&sig.output),
    };
    let mut flag = |what: &'static str, tokens: &dyn ToTokens| {
        def.unsupported
            .push(Spanned::new(what, tokens.to_token_stream().span()));
    };
    if let Some(c) = &sig.constness {
        flag("`const`", c);
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        flag("`unsafe`", u);
    }
    if let Some(abi) = &sig.abi {
        flag("an `extern` ABI", abi);
    }
    if let Some(v) = &sig.variadic {
        flag("variadic parameters", v);
    }
    if let Some(generic) = sig
        .generics
        .params
        .iter()
        .find(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
    {
        flag("type or const generic parameters", generic);
    }
    if let Some(w) = &sig.generics.where_clause {
        flag("a `where` clause", w);
    }
    let parser = |input: ParseStream<'_>| options(input, |key, input| option(&mut def, key, input));
    parser.parse2(attr)?;
    Ok(def)
}

fn item_head(item: &syn::Item) -> TokenStream {
    match item {
        syn::Item::Struct(s) => s.struct_token.to_token_stream(),
        syn::Item::Enum(e) => e.enum_token.to_token_stream(),
        other => other.to_token_stream(),
    }
}

fn param(arg: &FnArg) -> ActionParam {
    match arg {
        FnArg::Receiver(r) => ActionParam {
            kind: ParamKind::Receiver,
            ty: syn::parse_quote!(Self),
            span: Span::Macro(r.self_token.span),
        },
        FnArg::Typed(t) => {
            let (kind, ty) = match &*t.ty {
                Type::Reference(r) if r.mutability.is_some() => {
                    (ParamKind::MutRef, (*r.elem).clone())
                }
                Type::Reference(r) => (ParamKind::SharedRef, (*r.elem).clone()),
                Type::ImplTrait(_) => (ParamKind::ImplTrait, (*t.ty).clone()),
                other => (ParamKind::Value, other.clone()),
            };
            ActionParam {
                kind,
                ty,
                span: Span::Macro(t.span()),
            }
        }
    }
}

fn option(def: &mut ActionDef, key: &Name, input: ParseStream<'_>) -> syn::Result<()> {
    let span = key.span.to_proc_macro();
    input.parse::<Token![=]>()?;
    match key.value.as_str() {
        "description" => {
            let text: syn::LitStr = input.parse()?;
            def.description.set(text.value(), text.span());
        }
        "timeout" => {
            let d = common::duration(input)?;
            def.exec.timeout.set(d.value, span);
        }
        "backoff" => {
            let d = common::duration(input)?;
            def.exec.backoff.set(d.value, span);
        }
        "backoff_cap" => {
            let d = common::duration(input)?;
            def.exec.backoff_cap.set(d.value, span);
        }
        "max_retries" => {
            let n = common::count(input)?;
            def.exec.max_retries.set(n.value, span);
        }
        "on_halt" => {
            let path: syn::Path = input.parse()?;
            def.on_halt.set(path, span);
        }
        "crate" => {
            let path = common::runtime_path(input)?;
            def.runtime.set(path, span);
        }
        other => return Err(unknown_option(span, other, "action", OPTIONS)),
    }
    Ok(())
}

/// Whether a return type always means a finished run: none, `()`, or a `Result` (any path
/// ending in `Result`, such as `io::Result<()>`) whose value is `()`. Read from the tokens: any
/// other type may be an outcome in progress.
fn finishes_each_run(output: &syn::ReturnType) -> bool {
    let is_unit = |ty: &syn::Type| matches!(ty, syn::Type::Tuple(t) if t.elems.is_empty());
    match output {
        syn::ReturnType::Default => true,
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Path(path) if path.qself.is_none() => path
                .path
                .segments
                .last()
                .filter(|last| last.ident == "Result")
                .and_then(|last| match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => args.args.first(),
                    _ => None,
                })
                .is_some_and(|first| matches!(first, syn::GenericArgument::Type(t) if is_unit(t))),
            ty => is_unit(ty),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::finishes_each_run;

    fn finishes(output: &str) -> bool {
        let sig: syn::Signature = syn::parse_str(&format!("fn f() {output}")).unwrap();
        finishes_each_run(&sig.output)
    }

    #[test]
    fn unit_results_always_finish_and_other_outputs_may_run_on() {
        for output in ["", "-> ()", "-> Result<(), E>", "-> std::io::Result<()>"] {
            assert!(finishes(output), "{output}");
        }
        for output in [
            "-> bt::Status",
            "-> Outcome",
            "-> Result<Outcome, E>",
            "-> Result<bt::Status, ActionError>",
            "-> Result",
            "-> <T as Tr>::Result<()>",
        ] {
            assert!(!finishes(output), "{output}");
        }
    }
}
