//! `migrate "<fingerprint>" { ... }` of `#[agent(...)]` -> [`MigrationDef`]: the same text as a
//! `.agent` file's `migrate` part.
//!
//! ```text
//! migrate "9f86d081884c7d65" {
//!     state Settled was Paid        // an FSM state renamed
//!     field amount was total        // a state field renamed
//!     field note = "none"           // a value for a field older checkpoints lack
//!     with migrate_refund           // fn(&mut serde_json::Value) -> Result<(), String>
//! }
//! ```

use syn::Token;
use syn::ext::IdentExt;
use syn::parse::ParseStream;

use super::common;
use crate::model::{MigrationDef, Name, Rename, Spanned};

const EXPECTED: &str =
    "expected `state New was Old`, `field new was old`, `field name = value` or `with path::to_fn`";

/// Parses `"<fingerprint>" { ... }` after the `migrate` keyword.
pub fn migration(keyword: &Name, input: ParseStream<'_>) -> syn::Result<MigrationDef> {
    let from: syn::LitStr = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected the fingerprint of the definition to migrate from, in quotes: `migrate \"9f86d081884c7d65\" { ... }`",
        )
    })?;
    let mut def = MigrationDef::new(Spanned::new(from.value(), from.span()), keyword.span);
    let content;
    syn::braced!(content in input);
    while !content.is_empty() {
        let word = common::name(&content).map_err(|e| syn::Error::new(e.span(), EXPECTED))?;
        match word.value.as_str() {
            "state" => def.states.push(rename(&content)?),
            "field" if content.peek2(Token![=]) => {
                let name = common::name(&content)?;
                content.parse::<Token![=]>()?;
                def.defaults.push((name, super::tree::literal(&content)?));
            }
            "field" => def.fields.push(rename(&content)?),
            "with" => {
                let path = syn::Path::parse_mod_style(&content)?;
                let span = path
                    .segments
                    .last()
                    .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span());
                def.with = Some(Spanned::new(path, span));
            }
            other => {
                return Err(syn::Error::new(
                    word.span.to_proc_macro(),
                    format!("unexpected `{other}` in `migrate`\n  = help: {EXPECTED}"),
                ));
            }
        }
        if content.peek(Token![,]) {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(def)
}

/// `New was Old`.
fn rename(input: ParseStream<'_>) -> syn::Result<Rename> {
    let new = common::name(input)?;
    let was = input.call(syn::Ident::parse_any)?;
    if was != "was" {
        return Err(syn::Error::new(
            was.span(),
            format!(
                "expected `was` after `{}`\n  = help: write `{} was OldName`",
                new.value, new.value
            ),
        ));
    }
    let old = common::name(input)?;
    Ok(Rename { new, old })
}
