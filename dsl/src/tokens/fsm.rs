//! `transitions { ... }` of `#[agent(strategy = Fsm, ...)]` -> [`FsmDef`].
//!
//! The syntax is the grammar's `fsm_part`, token for token, so a block moves between a macro and
//! a `.agent` file by copy and paste:
//!
//! ```text
//! initial Cart
//! terminal Delivered
//! terminal Cancelled as failure
//! enter Paid do send_receipt
//! exit Pending do release_hold
//! Cart    -> Pending   on checkout do validate_order
//! Pending -> Paid      on pay      if paid_in_full do charge
//! Pending -> Cancelled after 30m
//! ```
//!
//! Parts may be separated by commas. Only the token grammar is enforced here; every rule about
//! the machine itself is a check in `check/fsm.rs`.

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Token};

use super::common;
use crate::model::{
    AgentDef, FsmDef, HookDef, HookKind, Name, RowDef, Spanned, StrategyDef, TerminalDef,
    TerminalKind, Trigger,
};

const EXPECTED: &str = "expected `initial`, `terminal`, `enter`, `exit` or a row such as `Cart -> Pending on checkout`";

/// Parses the inside of a `transitions { ... }` block.
pub fn transitions(input: ParseStream<'_>, span: proc_macro2::Span) -> syn::Result<FsmDef> {
    let mut fsm = FsmDef::new(span);
    while !input.is_empty() {
        let word = common::name(input).map_err(|e| syn::Error::new(e.span(), EXPECTED))?;
        if input.peek(Token![->]) {
            fsm.rows.push(row(word, input)?);
        } else {
            match word.value.as_str() {
                "initial" => fsm.initial.push(state(input, "initial")?),
                "terminal" => fsm.terminals.push(terminal(input)?),
                "enter" => fsm.hooks.push(hook(HookKind::Enter, &word, input)?),
                "exit" => fsm.hooks.push(hook(HookKind::Exit, &word, input)?),
                other => {
                    return Err(syn::Error::new(
                        word.span.to_proc_macro(),
                        format!(
                            "unexpected `{other}` in `transitions`\n  = help: {EXPECTED}; a row needs `->` after its source state"
                        ),
                    ));
                }
            }
        }
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(fsm)
}

fn state(input: ParseStream<'_>, after: &str) -> syn::Result<Name> {
    common::name(input)
        .map_err(|e| syn::Error::new(e.span(), format!("expected a state name after `{after}`")))
}

fn terminal(input: ParseStream<'_>) -> syn::Result<TerminalDef> {
    let state = state(input, "terminal")?;
    let mut kind = TerminalKind::Success;
    if input.peek(Token![as]) {
        input.parse::<Token![as]>()?;
        let word = Ident::parse_any(input)?;
        kind = match word.to_string().as_str() {
            "success" => TerminalKind::Success,
            "failure" => TerminalKind::Failure,
            other => {
                return Err(syn::Error::new(
                    word.span(),
                    format!(
                        "expected `success` or `failure` after `as`, found `{other}`\n  = help: write `terminal {} as failure` for a state that ends the machine unsuccessfully",
                        state.value
                    ),
                ));
            }
        };
    }
    Ok(TerminalDef { state, kind })
}

fn hook(kind: HookKind, keyword: &Name, input: ParseStream<'_>) -> syn::Result<HookDef> {
    let state = state(input, kind.keyword())?;
    if !input.peek(Token![do]) {
        return Err(syn::Error::new(
            input.span(),
            format!(
                "expected `do` after `{} {}`\n  = help: write `{} {} do some_action`",
                kind.keyword(),
                state.value,
                kind.keyword(),
                state.value
            ),
        ));
    }
    input.parse::<Token![do]>()?;
    let action = path(input, "do")?;
    Ok(HookDef {
        kind: Spanned::new(kind, keyword.span),
        state,
        action,
    })
}

fn row(from: Name, input: ParseStream<'_>) -> syn::Result<RowDef> {
    let arrow = input.parse::<Token![->]>()?;
    let to = state(input, "->")?;
    let trigger = if input.peek(Ident) && peek_word(input, "on") {
        input.parse::<Ident>()?;
        let event = common::name(input)
            .map_err(|e| syn::Error::new(e.span(), "expected an event name after `on`"))?;
        Trigger::Event(event)
    } else if input.peek(Ident) && peek_word(input, "after") {
        input.parse::<Ident>()?;
        Trigger::After(common::duration(input)?)
    } else {
        return Err(syn::Error::new(
            input.span(),
            format!(
                "expected `on event` or `after DURATION` after `{} -> {}`",
                from.value, to.value
            ),
        ));
    };
    let guard = if input.peek(Token![if]) {
        input.parse::<Token![if]>()?;
        Some(path(input, "if")?)
    } else {
        None
    };
    let action = if input.peek(Token![do]) {
        input.parse::<Token![do]>()?;
        Some(path(input, "do")?)
    } else {
        None
    };
    Ok(RowDef {
        from,
        to,
        trigger,
        guard,
        action,
        span: arrow.spans[0].into(),
    })
}

fn peek_word(input: ParseStream<'_>, word: &str) -> bool {
    input.fork().parse::<Ident>().is_ok_and(|i| i == word)
}

/// A path to a guard or action; its span is the last segment (the name users see in errors).
fn path(input: ParseStream<'_>, after: &str) -> syn::Result<Spanned<syn::Path>> {
    let path = syn::Path::parse_mod_style(input).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("expected a path to a function after `{after}`"),
        )
    })?;
    let span = path
        .segments
        .last()
        .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span());
    Ok(Spanned::new(path, span))
}

/// Puts a parsed `transitions` block into the agent: it is the body of `strategy = Fsm`, and
/// implies that strategy when none is given.
pub fn attach(def: &mut AgentDef, transitions: Option<FsmDef>) -> syn::Result<()> {
    let strategy = def.strategy.spanned().map(|s| (s.span, &s.value));
    match (strategy, transitions) {
        (None, Some(fsm)) => {
            let span = fsm.span;
            def.strategy.set(StrategyDef::Fsm(fsm), span);
        }
        (Some((_, StrategyDef::Fsm(_))), Some(fsm)) => {
            let Some(StrategyDef::Fsm(slot)) = def.strategy.get_mut() else {
                unreachable!("matched just above")
            };
            *slot = fsm;
        }
        (Some((span, StrategyDef::Fsm(_))), None) => {
            return Err(syn::Error::new(
                span.to_proc_macro(),
                "`strategy = Fsm` needs a `transitions { ... }` block\n  = help: add `transitions { initial A  terminal B  A -> B on go }` to `#[agent(...)]`",
            ));
        }
        (Some((_, other)), Some(fsm)) => {
            return Err(syn::Error::new(
                fsm.span.to_proc_macro(),
                format!(
                    "`transitions` belongs to `strategy = Fsm`, but this agent's strategy is `{}`\n  = help: write `strategy = Fsm` or remove the `transitions` block",
                    other.keyword()
                ),
            ));
        }
        (_, None) => {}
    }
    Ok(())
}
