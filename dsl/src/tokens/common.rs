//! Small parsers shared by the macro front-end: names, durations, integers, option lists.

use proc_macro2::Span as PmSpan;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, LitInt, Token};

use crate::check::codes::{self, Code};
use crate::check::quote::quote_name;
use crate::check::suggest::{did_you_mean, list};
use crate::model::{DurationMs, Name, Spanned, separated_unit};

/// Any identifier, keywords included: the checker reports keywords with a better message.
pub fn name(input: ParseStream<'_>) -> syn::Result<Name> {
    let ident = Ident::parse_any(input)?;
    Ok(Spanned::new(ident.unraw().to_string(), ident.span()))
}

/// A Rust type, spanned at its first token (an interrupt's payload or answer type).
pub fn spanned_type(input: ParseStream<'_>) -> syn::Result<Spanned<syn::Type>> {
    let span = input.span();
    let ty = input.parse::<syn::Type>()?;
    Ok(Spanned::new(ty, span))
}

/// A duration literal: `500ms`, `2s`, `30m`, `1h` (an integer token with a unit suffix).
pub fn duration(input: ParseStream<'_>) -> syn::Result<Spanned<DurationMs>> {
    let lit: LitInt = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "expected a duration such as `500ms`, `2s`, `30m` or `1h`{}",
                explained(codes::BAD_LITERAL)
            ),
        )
    })?;
    if lit.suffix().is_empty()
        && let Ok(word) = input.fork().call(Ident::parse_any)
        && let Some((message, help)) = separated_unit(lit.base10_digits(), &word.to_string())
    {
        let span = lit.span().join(word.span()).unwrap_or(lit.span());
        return Err(syn::Error::new(
            span,
            format!(
                "{message}\n  = help: {help}{}",
                explained(codes::BAD_LITERAL)
            ),
        ));
    }
    let text = format!("{}{}", lit.base10_digits(), lit.suffix());
    DurationMs::parse(&text)
        .map(|d| Spanned::new(d, lit.span()))
        .map_err(|e| syn::Error::new(lit.span(), format!("{e}{}", explained(codes::BAD_LITERAL))))
}

/// An integer, optionally negative (`-10` is two tokens in Rust).
pub fn int(input: ParseStream<'_>) -> syn::Result<Spanned<i64>> {
    let neg = input.parse::<Option<Token![-]>>()?;
    let lit: LitInt = input.parse()?;
    if !lit.suffix().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            format!("expected a plain integer, found suffix `{}`", lit.suffix()),
        ));
    }
    let value: i64 = lit.base10_parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("{} is too large", quote_name(lit.base10_digits())),
        )
    })?;
    let span = lit.span();
    Ok(Spanned::new(
        if neg.is_some() { -value } else { value },
        span,
    ))
}

/// A non-negative integer that fits `u32`.
pub fn count(input: ParseStream<'_>) -> syn::Result<Spanned<u32>> {
    let lit: LitInt = input.parse()?;
    let value = lit.base10_parse::<u32>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("expected a count from 0 to {}", u32::MAX),
        )
    })?;
    Ok(Spanned::new(value, lit.span()))
}

/// The error for an option a macro does not know, with the list and a suggestion.
pub fn unknown_option(span: PmSpan, option: &str, macro_name: &str, known: &[&str]) -> syn::Error {
    let hint = did_you_mean(option, known.iter().copied())
        .unwrap_or_else(|| format!("expected {}", list(known)));
    syn::Error::new(
        span,
        format!(
            "unknown option `{option}` for `#[{macro_name}]`\n  = help: {hint}{}",
            explained(codes::UNKNOWN_OPTION)
        ),
    )
}

/// The note that names a code, for errors raised while reading tokens (the checker's own
/// diagnostics add it in `Diagnostic::to_syn_error`).
pub fn explained(code: Code) -> String {
    format!("\n  = note: `agentc explain {code}` explains this error")
}

/// Parses `key = value, key { ... }, ...` options until the end of input, handing each key to
/// `option` (which parses the rest of that option).
pub fn options(
    input: ParseStream<'_>,
    mut option: impl FnMut(&Name, ParseStream<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    while !input.is_empty() {
        let key = name(input)?;
        option(&key, input)?;
        if input.is_empty() {
            break;
        }
        // Options written as blocks (`routes { .. }`) need no comma after them, as in `.agent` files.
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(())
}

/// The first paragraph of the doc comments among `attrs`.
pub fn doc_summary(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            lines.push(s.value());
        }
    }
    let text: Vec<String> = lines
        .iter()
        .map(|l| l.trim().to_string())
        .skip_while(String::is_empty)
        .take_while(|l| !l.is_empty())
        .collect();
    (!text.is_empty()).then(|| text.join(" "))
}

/// `crate = path` or `crate = "path"`.
pub fn runtime_path(input: ParseStream<'_>) -> syn::Result<syn::Path> {
    if input.peek(syn::LitStr) {
        let lit: syn::LitStr = input.parse()?;
        lit.parse_with(syn::Path::parse_mod_style)
    } else {
        syn::Path::parse_mod_style(input)
    }
}
