//! `routes { "pattern" => target [priority N] ... }`.

use syn::parse::ParseStream;
use syn::{LitStr, Token};

use super::common;
use crate::model::{RouteDef, RouteTargetDef, Span, Spanned};

/// Parses the inside of a `routes { ... }` block; commas between routes are optional.
pub fn routes(input: ParseStream<'_>) -> syn::Result<Vec<RouteDef>> {
    let mut routes = Vec::new();
    while !input.is_empty() {
        let pattern: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a route pattern string such as `\"order.paid\"`",
            )
        })?;
        input.parse::<Token![=>]>()?;
        let target = if input.peek(syn::Ident)
            && input
                .fork()
                .parse::<syn::Ident>()
                .is_ok_and(|i| i == "tick")
            && !input.peek2(Token![::])
        {
            let tick: syn::Ident = input.parse()?;
            RouteTargetDef::Tick(tick.span().into())
        } else {
            let path = syn::Path::parse_mod_style(input).map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected a route target: an action, an event or `tick`",
                )
            })?;
            let span = path
                .segments
                .last()
                .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span());
            RouteTargetDef::Named(Spanned::new(path, span))
        };
        let priority = if input.peek(syn::Ident)
            && input
                .fork()
                .parse::<syn::Ident>()
                .is_ok_and(|i| i == "priority")
        {
            input.parse::<syn::Ident>()?;
            Some(common::int(input)?)
        } else {
            None
        };
        routes.push(RouteDef {
            pattern: Spanned::new(pattern.value(), pattern.span()),
            target,
            priority,
            span: Span::Macro(pattern.span()),
        });
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(routes)
}
