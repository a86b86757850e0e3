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
//! Pending on remind do send_reminder      // internal: no exit, no entry, timers kept
//! interrupt approval(Request) -> Decision  // a person's answer, fired as event `approval`
//! Review -> Waiting on submit ask approval
//! state On {                               // a compound state and its children
//!     initial Idle
//!     history Resume                       // `history deep H`, `history H -> Default`
//!     Idle -> Playing on play
//!     On -> local Idle on reset             // local: `On` is not left
//! }
//! parallel Running {                       // regions, all active at once
//!     state Washer { initial Wash  Wash -> Rinsed on rinse  final Rinsed }
//!     state Dryer  { initial Cold  Cold -> Warm on heat  final Warm }
//! }
//! Running -> Finished when done            // every region reached a `final` state
//! ```
//!
//! Parts may be separated by commas. Only the token grammar is enforced here; every rule about
//! the machine itself is a check in `check/fsm.rs`.

use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Token};

use super::common;
use crate::model::{
    AgentDef, CompoundDef, FinalDef, FsmDef, HistoryDef, HookDef, HookKind, InterruptDef, Name,
    RowDef, Spanned, StrategyDef, TerminalDef, TerminalKind, Trigger,
};

const EXPECTED: &str = "expected `initial`, `terminal`, `final`, `enter`, `exit`, `state`, `parallel`, `history`, `interrupt` or a row such as `Cart -> Pending on checkout`";

/// The words that start a part other than a row.
const KEYWORDS: &[&str] = &["initial", "terminal", "enter", "exit"];

/// Parses the inside of a `transitions { ... }` block.
pub fn transitions(input: ParseStream<'_>, span: proc_macro2::Span) -> syn::Result<FsmDef> {
    let mut fsm = FsmDef::new(span);
    body(input, &mut fsm, None)?;
    Ok(fsm)
}

/// The parts of the top level or of a `state X { ... }` block (`block`). Recursion is bounded:
/// the input's nesting was checked against the limit before parsing.
fn body(input: ParseStream<'_>, fsm: &mut FsmDef, block: Option<&str>) -> syn::Result<()> {
    while !input.is_empty() {
        let word = common::name(input).map_err(|e| syn::Error::new(e.span(), EXPECTED))?;
        let opens_block = input.peek(Ident::peek_any) && input.peek2(syn::token::Brace);
        if (word.value == "state" || word.value == "parallel") && opens_block {
            compound(word, input, fsm, block)?;
        } else if word.value == "final"
            && input.peek(Ident::peek_any)
            && !peek_word(input, "on")
            && !peek_word(input, "after")
        {
            let state = state(input, "final")?;
            fsm.finals.push(FinalDef {
                state,
                block: block.map(str::to_string),
            });
        } else if word.value == "history"
            && input.peek(Ident::peek_any)
            && !input.peek(Token![->])
            && !peek_word(input, "on")
            && !peek_word(input, "after")
        {
            fsm.histories.push(history(&word, input, block)?);
        } else if word.value == "interrupt"
            && input.peek(Ident::peek_any)
            && input.peek2(syn::token::Paren)
        {
            fsm.interrupts.push(interrupt(&word, input)?);
        } else if input.peek(Token![->]) {
            let mut row = row(word, input)?;
            row.block = block.map(str::to_string);
            fsm.rows.push(row);
        } else if !KEYWORDS.contains(&word.value.as_str())
            && input.peek(Ident)
            && peek_word(input, "on")
        {
            let mut row = internal_row(word, input)?;
            row.block = block.map(str::to_string);
            fsm.rows.push(row);
        } else if !KEYWORDS.contains(&word.value.as_str())
            && input.peek(Ident)
            && peek_word(input, "after")
        {
            return Err(syn::Error::new(
                word.span.to_proc_macro(),
                format!(
                    "a timer row needs a target state\n  = help: write `{0} -> Next after ...`; a row without a target (`{0} on event`) is internal, and a timer cannot be: it is armed when its state is entered, which an internal row never does",
                    word.value
                ),
            ));
        } else {
            match word.value.as_str() {
                "initial" => {
                    let initial = state(input, "initial")?;
                    let compound = block
                        .and_then(|b| fsm.compounds.iter_mut().rev().find(|c| c.state.value == b));
                    match compound {
                        Some(compound) => compound.initial.push(initial),
                        None => fsm.initial.push(initial),
                    }
                }
                "terminal" => {
                    let mut terminal = terminal(input)?;
                    terminal.block = block.map(str::to_string);
                    fsm.terminals.push(terminal);
                }
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
    Ok(())
}

/// `state X { ... }` or `parallel X { ... }`: the compound state is recorded before its
/// children, so the model lists blocks in document order with each block before the blocks
/// it holds.
fn compound(
    keyword: Name,
    input: ParseStream<'_>,
    fsm: &mut FsmDef,
    block: Option<&str>,
) -> syn::Result<()> {
    let name = state(input, &keyword.value)?;
    let inner;
    syn::braced!(inner in input);
    fsm.compounds.push(CompoundDef {
        state: name.clone(),
        block: block.map(str::to_string),
        initial: Vec::new(),
        parallel: keyword.value == "parallel",
        span: keyword.span,
    });
    body(&inner, fsm, Some(&name.value))
}

/// `interrupt name(Payload) -> Resume`.
fn interrupt(keyword: &Name, input: ParseStream<'_>) -> syn::Result<InterruptDef> {
    let name = common::name(input)?;
    let inner;
    syn::parenthesized!(inner in input);
    let payload = common::spanned_type(&inner)?;
    if !inner.is_empty() {
        return Err(inner.error("expected one payload type: `interrupt name(Payload) -> Resume`"));
    }
    if !input.peek(Token![->]) {
        return Err(syn::Error::new(
            name.span.to_proc_macro(),
            format!(
                "expected `-> ResumeType` after `interrupt {}(...)`\n  = help: an interrupt declares the type of its answer: `interrupt {}(Payload) -> Decision`",
                name.value, name.value
            ),
        ));
    }
    input.parse::<Token![->]>()?;
    let resume = common::spanned_type(input)?;
    Ok(InterruptDef {
        name,
        payload,
        resume,
        span: keyword.span,
    })
}

/// `history [deep] H [-> Default]`.
fn history(keyword: &Name, input: ParseStream<'_>, block: Option<&str>) -> syn::Result<HistoryDef> {
    let mut name = state(input, "history")?;
    let mut deep = false;
    if name.value == "deep" && input.peek(Ident::peek_any) {
        deep = true;
        name = state(input, "history deep")?;
    }
    let default = if input.peek(Token![->]) {
        input.parse::<Token![->]>()?;
        Some(state(input, "->")?)
    } else {
        None
    };
    Ok(HistoryDef {
        name,
        deep,
        default,
        block: block.map(str::to_string),
        span: keyword.span,
    })
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
    Ok(TerminalDef {
        state,
        kind,
        block: None,
    })
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

/// `A on event [if guard] [do action]`: an internal transition. A timer cannot be internal
/// (there is no `A after D`): it belongs to an entry of the state, which an internal row
/// does not make.
fn internal_row(from: Name, input: ParseStream<'_>) -> syn::Result<RowDef> {
    let on = input.parse::<Ident>()?;
    let event = common::name(input)
        .map_err(|e| syn::Error::new(e.span(), "expected an event name after `on`"))?;
    let (guard, action, ask) = guard_and_action(input)?;
    Ok(RowDef {
        to: from.clone(),
        from,
        internal: true,
        local: false,
        block: None,
        trigger: Trigger::Event(event),
        guard,
        action,
        ask,
        span: on.span().into(),
    })
}

fn row(from: Name, input: ParseStream<'_>) -> syn::Result<RowDef> {
    let arrow = input.parse::<Token![->]>()?;
    // `local` is a keyword only before a target: `A -> local on e` targets a state `local`.
    let local = peek_word(input, "local") && {
        let fork = input.fork();
        fork.parse::<Ident>().is_ok()
            && fork.peek(Ident::peek_any)
            && !peek_word(&fork, "on")
            && !peek_word(&fork, "after")
            && !peek_word(&fork, "when")
    };
    if local {
        input.parse::<Ident>()?;
    }
    let to = state(input, "->")?;
    let trigger = if input.peek(Ident) && peek_word(input, "on") {
        input.parse::<Ident>()?;
        let event = common::name(input)
            .map_err(|e| syn::Error::new(e.span(), "expected an event name after `on`"))?;
        Trigger::Event(event)
    } else if input.peek(Ident) && peek_word(input, "after") {
        input.parse::<Ident>()?;
        Trigger::After(common::duration(input)?)
    } else if input.peek(Ident) && peek_word(input, "when") {
        let when = input.parse::<Ident>()?;
        if !peek_word(input, "done") {
            return Err(syn::Error::new(
                input.span(),
                format!(
                    "expected `done` after `when`\n  = help: write `{} -> {} when done` for a row that fires when `{}` completes",
                    from.value, to.value, from.value
                ),
            ));
        }
        input.parse::<Ident>()?;
        Trigger::Done(when.span().into())
    } else {
        return Err(syn::Error::new(
            input.span(),
            format!(
                "expected `on event`, `after DURATION` or `when done` after `{} -> {}`",
                from.value, to.value
            ),
        ));
    };
    let (guard, action, ask) = guard_and_action(input)?;
    Ok(RowDef {
        from,
        to,
        internal: false,
        local,
        block: None,
        trigger,
        guard,
        action,
        ask,
        span: arrow.spans[0].into(),
    })
}

/// `[if guard] [do action] [ask interrupt]`, the end of every row.
type GuardAndAction = (
    Option<Spanned<syn::Path>>,
    Option<Spanned<syn::Path>>,
    Option<Name>,
);

fn guard_and_action(input: ParseStream<'_>) -> syn::Result<GuardAndAction> {
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
    // `ask` is a word only when an interrupt name follows: a next row may start with a state
    // called `ask` (`ask -> B on e`, `ask on e`).
    let ask = if peek_word(input, "ask") && {
        let fork = input.fork();
        fork.parse::<Ident>().is_ok() && fork.peek(Ident::peek_any) && !peek_word(&fork, "on")
    } {
        input.parse::<Ident>()?;
        Some(
            common::name(input)
                .map_err(|e| syn::Error::new(e.span(), "expected an interrupt name after `ask`"))?,
        )
    } else {
        None
    };
    Ok((guard, action, ask))
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
