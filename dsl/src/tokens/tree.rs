//! Trees in macros: `bt! { ... }` and `tree = ...` of `#[agent(strategy = BehaviorTree)]`.
//!
//! The node syntax is the grammar's `node`, token for token, so a tree moves between a macro and
//! a `.agent` file by copy and paste:
//!
//! ```text
//! reactive_sequence {
//!     condition battery_ok
//!     selector {
//!         timeout(2s) { action move_to(speed = 2, mode = "fast") }
//!         retry(3) { action recharge }
//!     }
//!     parallel(success = 2, failure = 1) { action scan_left  action scan_right  wait(500ms) }
//!     subtree Report
//! }
//! ```
//!
//! `bt!` takes either a root tree followed by the behaviours its subtrees name (an expression),
//! or `for Type` followed by behaviours (items: one type per behaviour, implementing
//! `Behavior<Type>`). Only the token grammar is enforced here (children counts included); the
//! tree rules are checks in `check/tree.rs`.

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitFloat, LitInt, LitStr, Token, braced, bracketed, parenthesized};

use super::common;
use crate::check::suggest::{did_you_mean, list};
use crate::model::{
    AgentDef, ArgDef, AskDef, BehaviorDef, BtDef, Literal, Name, NodeDef, NodeKind, Setting,
    Spanned, StrategyDef, TreeRef, TreeStrategyDef,
};

/// Every node keyword.
pub const NODES: &[&str] = NodeKind::KEYWORDS;

/// Parses the input of `bt! { ... }`.
pub fn bt(input: TokenStream) -> syn::Result<BtDef> {
    super::nesting::check(&input)?;
    let parser = |input: ParseStream<'_>| {
        let mut def = BtDef {
            blackboard: None,
            root: None,
            behaviors: Vec::new(),
            runtime: Setting::default(),
        };
        if input.peek(Token![crate]) {
            let krate = input.parse::<Token![crate]>()?;
            input.parse::<Token![=]>()?;
            def.runtime.set(common::runtime_path(input)?, krate.span);
            input.parse::<Token![;]>()?;
        }
        if input.peek(Token![for]) {
            input.parse::<Token![for]>()?;
            let ty: syn::Type = input.parse()?;
            let span = syn::spanned::Spanned::span(&ty);
            def.blackboard = Some(Spanned::new(ty, span));
            if input.is_empty() {
                return Err(input.error(
                    "expected `behavior Name { ... }` after the blackboard type\n  = help: `bt! { for Sentry  behavior Patrol { sequence { ... } } }` defines the type `Patrol`",
                ));
            }
        } else if !starts_behavior(input) {
            def.root = Some(node(input)?);
            skip_comma(input)?;
        }
        while !input.is_empty() {
            def.behaviors.push(behavior(input)?);
            skip_comma(input)?;
        }
        if def.root.is_none() && def.behaviors.is_empty() {
            return Err(input.error(format!(
                "`bt!` needs a tree\n  = help: write a node such as `sequence {{ ... }}`; nodes are {}",
                list(NODES)
            )));
        }
        Ok(def)
    };
    parser.parse2(input)
}

fn starts_behavior(input: ParseStream<'_>) -> bool {
    input.peek(Token![pub]) || (input.peek(Ident::peek_any) && peek_word(input, "behavior"))
}

fn peek_word(input: ParseStream<'_>, word: &str) -> bool {
    input
        .fork()
        .call(Ident::parse_any)
        .is_ok_and(|ident| ident == word)
}

fn skip_comma(input: ParseStream<'_>) -> syn::Result<()> {
    if input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

/// `[vis] behavior Name { node }`.
fn behavior(input: ParseStream<'_>) -> syn::Result<BehaviorDef> {
    let vis: syn::Visibility = input.parse()?;
    let keyword = common::name(input)?;
    if keyword.value != "behavior" {
        return Err(syn::Error::new(
            keyword.span.to_proc_macro(),
            format!(
                "expected `behavior`, found `{}`\n  = help: after the root tree, `bt!` takes only `behavior Name {{ ... }}` items for its subtrees",
                keyword.value
            ),
        ));
    }
    let name = common::name(input)
        .map_err(|e| syn::Error::new(e.span(), "expected the behavior's name after `behavior`"))?;
    let content;
    braced!(content in input);
    let root = node(&content)?;
    skip_comma(&content)?;
    if !content.is_empty() {
        return Err(content.error(format!(
            "a behavior holds one root node\n  = help: wrap the nodes of `{}` in a `sequence {{ ... }}` or a `selector {{ ... }}`",
            name.value
        )));
    }
    let vis = match vis {
        syn::Visibility::Inherited => None,
        vis => Some(vis),
    };
    Ok(BehaviorDef { name, root, vis })
}

/// Parses one node.
pub fn node(input: ParseStream<'_>) -> syn::Result<NodeDef> {
    let word = common::name(input)
        .map_err(|e| syn::Error::new(e.span(), format!("expected a tree node: {}", list(NODES))))?;
    let span = word.span;
    let kind =
        match word.value.as_str() {
            "sequence" => NodeKind::Sequence,
            "reactive_sequence" => NodeKind::ReactiveSequence,
            "selector" => NodeKind::Selector,
            "reactive_selector" => NodeKind::ReactiveSelector,
            "parallel" => parallel(input)?,
            "invert" => NodeKind::Invert,
            "force_success" => NodeKind::ForceSuccess,
            "force_failure" => NodeKind::ForceFailure,
            "run_once" => NodeKind::RunOnce,
            "repeat" => NodeKind::Repeat(in_parens(
                input,
                "repeat",
                "a count such as `3`",
                common::count,
            )?),
            "retry" => NodeKind::Retry(in_parens(
                input,
                "retry",
                "a count such as `3`",
                common::count,
            )?),
            "timeout" => NodeKind::Timeout(in_parens(
                input,
                "timeout",
                "a duration such as `2s`",
                common::duration,
            )?),
            "delay" => NodeKind::Delay(in_parens(
                input,
                "delay",
                "a duration such as `500ms`",
                common::duration,
            )?),
            "wait" => NodeKind::Wait(in_parens(
                input,
                "wait",
                "a duration such as `500ms`",
                common::duration,
            )?),
            "action" => action(input)?,
            "ask" => NodeKind::Ask(Box::new(ask(input)?)),
            "condition" => NodeKind::Condition(path(input, "condition")?),
            "subtree" => NodeKind::Subtree(common::name(input).map_err(|e| {
                syn::Error::new(e.span(), "expected a behavior name after `subtree`")
            })?),
            other => {
                let hint = did_you_mean(other, NODES.iter().copied())
                    .unwrap_or_else(|| format!("nodes are {}", list(NODES)));
                return Err(syn::Error::new(
                    span.to_proc_macro(),
                    format!("unknown tree node `{other}`\n  = help: {hint}"),
                ));
            }
        };
    let children = match kind.arity() {
        Some(0) => Vec::new(),
        arity => {
            if !input.peek(syn::token::Brace) {
                return Err(syn::Error::new(
                    input.span(),
                    format!(
                        "expected `{{` after `{}`\n  = help: write its {} in braces: `{} {{ ... }}`",
                        word.value,
                        if arity == Some(1) {
                            "child"
                        } else {
                            "children"
                        },
                        word.value
                    ),
                ));
            }
            let content;
            let brace = braced!(content in input);
            let mut children = Vec::new();
            while !content.is_empty() {
                children.push(node(&content)?);
                skip_comma(&content)?;
            }
            match (arity, children.len()) {
                (None, 0) => {
                    return Err(syn::Error::new(
                        brace.span.join(),
                        format!(
                            "`{}` needs at least one child\n  = help: put the nodes it runs inside the braces",
                            word.value
                        ),
                    ));
                }
                (Some(1), n) if n != 1 => {
                    return Err(syn::Error::new(
                        brace.span.join(),
                        format!(
                            "`{}` takes exactly one child, found {n}\n  = help: wrap several nodes in a `sequence {{ ... }}`",
                            word.value
                        ),
                    ));
                }
                _ => {}
            }
            children
        }
    };
    Ok(NodeDef {
        kind,
        children,
        span,
    })
}

fn in_parens<T>(
    input: ParseStream<'_>,
    keyword: &str,
    what: &str,
    inner: impl FnOnce(ParseStream<'_>) -> syn::Result<T>,
) -> syn::Result<T> {
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            input.span(),
            format!("expected `(` after `{keyword}`\n  = help: write `{keyword}(...)` with {what}"),
        ));
    }
    let content;
    parenthesized!(content in input);
    let value = inner(&content)?;
    if !content.is_empty() {
        return Err(content.error(format!("expected `)` after {what}")));
    }
    Ok(value)
}

fn path(input: ParseStream<'_>, after: &str) -> syn::Result<Spanned<syn::Path>> {
    let path = syn::Path::parse_mod_style(input)
        .map_err(|e| syn::Error::new(e.span(), format!("expected a path after `{after}`")))?;
    let span = path
        .segments
        .last()
        .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span());
    Ok(Spanned::new(path, span))
}

/// `parallel(success = N[, failure = M])`.
fn parallel(input: ParseStream<'_>) -> syn::Result<NodeKind> {
    const HELP: &str = "write `parallel(success = 2)` or `parallel(success = 2, failure = 1)`";
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            input.span(),
            format!("expected `(` after `parallel`\n  = help: {HELP}"),
        ));
    }
    let content;
    parenthesized!(content in input);
    let mut success = None;
    let mut failure = None;
    while !content.is_empty() {
        let key = common::name(&content)?;
        content.parse::<Token![=]>()?;
        let value = common::count(&content)?;
        let slot = match key.value.as_str() {
            "success" => &mut success,
            "failure" => &mut failure,
            other => {
                return Err(syn::Error::new(
                    key.span.to_proc_macro(),
                    format!("unknown `parallel` threshold `{other}`\n  = help: {HELP}"),
                ));
            }
        };
        if slot.is_some() {
            return Err(syn::Error::new(
                key.span.to_proc_macro(),
                format!("`{}` is given twice\n  = help: {HELP}", key.value),
            ));
        }
        *slot = Some(value);
        skip_comma(&content)?;
    }
    let Some(success) = success else {
        return Err(syn::Error::new(
            content.span(),
            format!("`parallel` needs `success = N`\n  = help: {HELP}"),
        ));
    };
    Ok(NodeKind::Parallel { success, failure })
}

/// `action path[(k = v, ...)]`.
fn action(input: ParseStream<'_>) -> syn::Result<NodeKind> {
    let path = path(input, "action")?;
    let mut args = Vec::new();
    if input.peek(syn::token::Paren) {
        let content;
        parenthesized!(content in input);
        while !content.is_empty() {
            let name: Name = common::name(&content)?;
            if !content.peek(Token![=]) {
                return Err(syn::Error::new(
                    content.span(),
                    format!(
                        "expected `=` after `{}`\n  = help: arguments are named: `action {}({} = ...)`",
                        name.value,
                        path.value
                            .segments
                            .last()
                            .map(|s| s.ident.to_string())
                            .unwrap_or_default(),
                        name.value
                    ),
                ));
            }
            content.parse::<Token![=]>()?;
            let value = literal(&content)?;
            args.push(ArgDef { name, value });
            skip_comma(&content)?;
        }
    }
    Ok(NodeKind::Action { path, args })
}

/// `ask name(Payload) -> Answer do action`.
fn ask(input: ParseStream<'_>) -> syn::Result<AskDef> {
    const HELP: &str = "write `ask approval(Request) -> Decision do apply_decision`";
    let name = common::name(input).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("expected an interrupt name after `ask`\n  = help: {HELP}"),
        )
    })?;
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            input.span(),
            format!(
                "expected `(Payload)` after `ask {}`\n  = help: an `ask` leaf declares what the person is shown: {HELP}",
                name.value
            ),
        ));
    }
    let inner;
    parenthesized!(inner in input);
    let payload = common::spanned_type(&inner)?;
    if !inner.is_empty() {
        return Err(inner.error(format!("expected one payload type\n  = help: {HELP}")));
    }
    if !input.peek(Token![->]) {
        return Err(syn::Error::new(
            name.span.to_proc_macro(),
            format!(
                "expected `-> AnswerType` after `ask {}(...)`\n  = help: an `ask` leaf declares the type of its answer: {HELP}",
                name.value
            ),
        ));
    }
    input.parse::<Token![->]>()?;
    let resume = common::spanned_type(input)?;
    if !peek_word(input, "do") {
        return Err(syn::Error::new(
            name.span.to_proc_macro(),
            format!(
                "expected `do action` after `ask {}(...) -> ...`\n  = help: the action runs with the answer as its parameters and decides the leaf's status: {HELP}",
                name.value
            ),
        ));
    }
    input.parse::<Token![do]>()?;
    let action = path(input, "do")?;
    Ok(AskDef {
        name,
        payload,
        resume,
        action,
    })
}

/// A literal: string, integer, float, `true`, `false`, `none`, `[...]`.
pub fn literal(input: ParseStream<'_>) -> syn::Result<Spanned<Literal>> {
    let neg = input.peek(Token![-]);
    if neg {
        input.parse::<Token![-]>()?;
    }
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        let value: i128 = lit.base10_parse().map_err(|_| {
            syn::Error::new(
                lit.span(),
                format!(
                    "{} is too large",
                    crate::check::quote::quote_name(lit.base10_digits())
                ),
            )
        })?;
        return Ok(Spanned::new(
            Literal::Int(if neg { -value } else { value }),
            lit.span(),
        ));
    }
    if input.peek(LitFloat) {
        let lit: LitFloat = input.parse()?;
        let value: f64 = lit.base10_parse()?;
        return Ok(Spanned::new(
            Literal::Float(if neg { -value } else { value }),
            lit.span(),
        ));
    }
    if neg {
        return Err(input.error("expected a number after `-`"));
    }
    if input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        return Ok(Spanned::new(Literal::Str(lit.value()), lit.span()));
    }
    if input.peek(syn::token::Bracket) {
        let content;
        let bracket = bracketed!(content in input);
        let mut items = Vec::new();
        while !content.is_empty() {
            items.push(literal(&content)?);
            skip_comma(&content)?;
        }
        return Ok(Spanned::new(Literal::List(items), bracket.span.join()));
    }
    let word = Ident::parse_any(input).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected a literal: a string, a number, `true`, `false`, `none` or `[...]`",
        )
    })?;
    let value = match word.to_string().as_str() {
        "true" => Literal::Bool(true),
        "false" => Literal::Bool(false),
        "none" => Literal::None,
        other => {
            return Err(syn::Error::new(
                word.span(),
                format!(
                    "expected a literal, found `{other}`\n  = help: arguments are literals: a string, a number, `true`, `false`, `none` or `[...]`"
                ),
            ));
        }
    };
    Ok(Spanned::new(value, word.span()))
}

/// `tree = Path` (a behaviour type) or `tree = { node }` (a tree in place).
pub fn tree_option(
    slot: &mut Option<Spanned<TreeRef>>,
    key: &Name,
    input: ParseStream<'_>,
) -> syn::Result<()> {
    input.parse::<Token![=]>()?;
    let tree = if input.peek(syn::token::Brace) {
        let content;
        braced!(content in input);
        let root = node(&content)?;
        skip_comma(&content)?;
        if !content.is_empty() {
            return Err(content.error(
                "a tree has one root node\n  = help: wrap the nodes in a `sequence { ... }` or a `selector { ... }`",
            ));
        }
        TreeRef::Inline(root)
    } else {
        TreeRef::Rust(path(input, "tree =")?)
    };
    if slot.is_some() {
        return Err(syn::Error::new(
            key.span.to_proc_macro(),
            "`tree` is given more than once\n  = help: keep one `tree`",
        ));
    }
    *slot = Some(Spanned::new(tree, key.span));
    Ok(())
}

/// Puts the `tree` option into the strategy: `tree = ...` alone implies `strategy = BehaviorTree`.
pub fn attach(def: &mut AgentDef, tree: Option<Spanned<TreeRef>>) -> syn::Result<()> {
    match (def.strategy.get_mut(), tree) {
        (None, Some(tree)) => {
            let span = tree.span;
            def.strategy.set(
                StrategyDef::BehaviorTree(TreeStrategyDef {
                    tree: Some(tree.value),
                    span,
                }),
                span,
            );
        }
        (Some(StrategyDef::BehaviorTree(slot)), Some(tree)) => slot.tree = Some(tree.value),
        (Some(other), Some(tree)) => {
            return Err(syn::Error::new(
                tree.span.to_proc_macro(),
                format!(
                    "`tree` belongs to `strategy = BehaviorTree`, but this agent's strategy is `{}`\n  = help: write `strategy = BehaviorTree` or remove `tree`",
                    other.keyword()
                ),
            ));
        }
        // A missing tree is a check (`E0408`), so both front-ends report it alike.
        (_, None) => {}
    }
    Ok(())
}
