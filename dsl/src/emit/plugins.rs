//! `fn plugins()` of an agent: its plugin stack, built once. A plugin is its configuration
//! struct, so each mounted plugin is a struct literal (`Quota { max_requests: 50,
//! ..Default::default() }`), and rustc checks a custom plugin's options at their spans.

use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};

use crate::model::{
    AgentDef, DEFAULT_AI_PLUGINS, OptionValue, PluginDef, PluginOptionType, Spanned, StrategyDef,
};

/// The plugins an agent mounts, in mount order: for an AI agent, ModelRouting and Policy first
/// (unless listed or `default_plugins = false`), then those declared.
pub fn mounted(def: &AgentDef) -> Vec<Mounted<'_>> {
    let declared = def.plugins.get().map_or(&[][..], Vec::as_slice);
    let mut out = Vec::new();
    let ai = matches!(def.strategy.get(), Some(StrategyDef::Ai(_)));
    if ai && def.default_plugins.get() != Some(&false) {
        for name in DEFAULT_AI_PLUGINS {
            let listed = declared
                .iter()
                .any(|p| p.custom.is_none() && p.name.value == *name);
            if !listed {
                out.push(Mounted::Default(name));
            }
        }
    }
    out.extend(declared.iter().map(Mounted::Declared));
    out
}

/// One plugin of the stack.
pub enum Mounted<'a> {
    /// A default plugin with its default configuration.
    Default(&'static str),
    /// A declared one.
    Declared(&'a PluginDef),
}

/// `fn plugins()` for the `AgentSpec` impl, or nothing when the agent mounts none.
pub fn plugins_fn(def: &AgentDef, krate: &TokenStream) -> TokenStream {
    let mounted = mounted(def);
    if mounted.is_empty() {
        return quote!();
    }
    let plugins = mounted.iter().map(|m| match m {
        Mounted::Default(name) => {
            let ty = syn::Ident::new(name, proc_macro2::Span::call_site());
            quote!(<#krate::ai::plugins::#ty as ::core::default::Default>::default())
        }
        Mounted::Declared(plugin) => declared(plugin, krate),
    });
    quote! {
        // Every option given leaves `..Default::default()` with nothing to fill.
        #[allow(clippy::needless_update)]
        fn plugins() -> &'static #krate::plugin::PluginStack {
            static PLUGINS: #krate::__private::OnceLock<#krate::plugin::PluginStack> =
                #krate::__private::OnceLock::new();
            PLUGINS.get_or_init(|| #krate::plugin::PluginStack::new() #(.with(#plugins))*)
        }
    }
}

fn declared(plugin: &PluginDef, krate: &TokenStream) -> TokenStream {
    let ty = match &plugin.custom {
        Some(path) => {
            let path = &path.value;
            quote!(#path)
        }
        None => {
            let ty = syn::Ident::new(&plugin.name.value, plugin.name.span.to_proc_macro());
            quote!(#krate::ai::plugins::#ty)
        }
    };
    if plugin.options.is_empty() {
        return quote!(<#ty as ::core::default::Default>::default());
    }
    let builtin = plugin.builtin();
    let fields = plugin.options.iter().map(|option| {
        let field = syn::Ident::new(&option.name.value, option.name.span.to_proc_macro());
        let ty = builtin
            .and_then(|b| b.option(&option.name.value))
            .map(|o| o.ty);
        let value = value(ty, &option.value);
        quote!(#field: #value)
    });
    quote!(#ty { #(#fields,)* ..::core::default::Default::default() })
}

/// A value as Rust: by the built-in option's type when known, else by its shape.
fn value(ty: Option<PluginOptionType>, value: &Spanned<OptionValue>) -> TokenStream {
    let span = value.span.to_proc_macro();
    match (&value.value, ty) {
        (OptionValue::List(items), Some(PluginOptionType::ModelRoutes)) => {
            let pairs = items.iter().filter_map(|item| match &item.value {
                OptionValue::Text(t) => crate::check::model_route(t),
                _ => None,
            });
            let pairs = pairs.map(|(p, a)| {
                quote_spanned!(span=> (::std::string::String::from(#p), ::std::string::String::from(#a)))
            });
            quote_spanned!(span=> ::core::convert::From::from([#(#pairs),*]))
        }
        (OptionValue::Text(_), Some(PluginOptionType::ModelRoutes)) => {
            let one = Spanned::new(OptionValue::List(vec![value.clone()]), value.span);
            self::value(ty, &one)
        }
        (OptionValue::Text(_) | OptionValue::Word(_), Some(PluginOptionType::Texts)) => {
            let item = self::value(None, value);
            quote_spanned!(span=> ::std::vec![#item])
        }
        (OptionValue::Int(n), Some(PluginOptionType::Decimal { .. })) => {
            let lit = with_span(Literal::f64_unsuffixed(*n as f64), span);
            quote!(#lit)
        }
        (OptionValue::Int(n), _) => {
            let lit = with_span(Literal::i64_unsuffixed(*n), span);
            quote!(#lit)
        }
        (OptionValue::Float(f), _) => {
            let lit = with_span(Literal::f64_unsuffixed(*f), span);
            quote!(#lit)
        }
        (OptionValue::Word(w), _) if w == "true" || w == "false" => {
            let b = syn::LitBool::new(w == "true", span);
            quote!(#b)
        }
        (OptionValue::Text(t) | OptionValue::Word(t), _) => {
            quote_spanned!(span=> ::core::convert::From::from(#t))
        }
        (OptionValue::List(items), _) => {
            let items = items.iter().map(|i| self::value(None, i));
            quote_spanned!(span=> ::std::vec![#(#items),*])
        }
    }
}

fn with_span(mut lit: Literal, span: proc_macro2::Span) -> Literal {
    lit.set_span(span);
    lit
}
