//! `plugins = [Chat { default_model = capable }, Quota { max_requests = 50 },
//! custom(my::Plugin) { option = 1 }]` in `#[agent(...)]`.

use syn::parse::ParseStream;
use syn::{Token, braced, bracketed, parenthesized};

use super::ai::option_value;
use crate::model::{PluginDef, PluginOption, Spanned};

/// Reads the bracketed plugin list after `plugins`.
pub fn plugins(input: ParseStream<'_>) -> syn::Result<Vec<PluginDef>> {
    input.parse::<Option<Token![=]>>()?;
    let content;
    bracketed!(content in input);
    let mut out = Vec::new();
    while !content.is_empty() {
        out.push(plugin(&content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(out)
}

fn plugin(input: ParseStream<'_>) -> syn::Result<PluginDef> {
    let ident: syn::Ident = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected a plugin such as `Quota { max_requests = 50 }` or `custom(path::To::Plugin)`",
        )
    })?;
    let name = Spanned::new(ident.to_string(), ident.span());
    let custom = if ident == "custom" && input.peek(syn::token::Paren) {
        let content;
        parenthesized!(content in input);
        let path = syn::Path::parse_mod_style(&content)?;
        let span = path
            .segments
            .last()
            .map_or(ident.span(), |s| s.ident.span());
        Some(Spanned::new(path, span))
    } else {
        None
    };
    let mut options = Vec::new();
    if input.peek(syn::token::Brace) {
        let content;
        braced!(content in input);
        while !content.is_empty() {
            let key: syn::Ident = content.parse()?;
            content.parse::<Token![=]>()?;
            let value = option_value(&content)?;
            options.push(PluginOption {
                name: Spanned::new(key.to_string(), key.span()),
                value,
            });
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
    }
    Ok(PluginDef {
        name,
        custom,
        options,
    })
}
