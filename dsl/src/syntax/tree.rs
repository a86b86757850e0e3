//! `behavior Name { ... }` items and `strategy behavior ...` -> the tree model, the same one
//! `bt!` and `#[agent(strategy = BehaviorTree)]` build, so the tree checks, generator and graphs
//! run unchanged.

use pest::iterators::Pair;

use super::literal::{count, duration, literal, name, path, rust_type};
use super::{Rule, children, span};
use crate::check::Ctxt;
use crate::model::{
    ArgDef, AskDef, BehaviorDef, DurationMs, FileId, NodeDef, NodeKind, Spanned, TreeRef,
    TreeStrategyDef,
};

/// Lowers a `behavior` item.
pub fn behavior(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<BehaviorDef> {
    let mut parts = children(pair);
    let name = name(file, &parts.next()?);
    let root = node(cx, file, parts.next()?)?;
    Some(BehaviorDef {
        name,
        root,
        vis: None,
    })
}

/// Lowers `strategy behavior Name` / `strategy behavior { ... }`.
pub fn strategy(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> TreeStrategyDef {
    let keyword = pair
        .clone()
        .into_inner()
        .next()
        .map_or_else(|| span(file, &pair), |k| span(file, &k));
    let tree = children(pair)
        .next()
        .and_then(|inner| match inner.as_rule() {
            Rule::ident => Some(TreeRef::Behavior(name(file, &inner))),
            Rule::node => node(cx, file, inner).map(TreeRef::Inline),
            _ => None,
        });
    TreeStrategyDef {
        tree,
        span: keyword,
    }
}

/// A `node` pair. `None` only when a part of it was malformed (and reported).
fn node(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<NodeDef> {
    let inner = pair.into_inner().next()?;
    match inner.as_rule() {
        Rule::composite | Rule::decorator => {
            let mut parts = inner.into_inner();
            let head = parts.next()?;
            let kind = head_kind(cx, file, &head)?;
            let mut children = Vec::new();
            for child in parts {
                children.push(node(cx, file, child)?);
            }
            Some(NodeDef {
                kind,
                children,
                span: keyword_span(file, &head),
            })
        }
        Rule::leaf => {
            let leaf = inner.into_inner().next()?;
            let at = keyword_span(file, &leaf);
            let mut parts = children(leaf.clone());
            let kind = match leaf.as_rule() {
                Rule::leaf_action => {
                    let (path, _) = path(file, &parts.next()?)?;
                    let mut args = Vec::new();
                    for arg in parts {
                        let mut kv = arg.into_inner();
                        let name = name(file, &kv.next()?);
                        let value = literal(cx, file, kv.next()?)?;
                        args.push(ArgDef { name, value });
                    }
                    NodeKind::Action { path, args }
                }
                Rule::leaf_condition => NodeKind::Condition(path(file, &parts.next()?)?.0),
                Rule::leaf_wait => NodeKind::Wait(duration_or_stand_in(cx, file, &parts.next()?)),
                Rule::leaf_subtree => NodeKind::Subtree(name(file, &parts.next()?)),
                Rule::leaf_ask => {
                    let interrupt = name(file, &parts.next()?);
                    let payload = rust_type(cx, file, &parts.next()?)?;
                    let resume = rust_type(cx, file, &parts.next()?)?;
                    let (action, _) = path(file, &parts.next()?)?;
                    NodeKind::Ask(Box::new(AskDef {
                        name: interrupt,
                        payload,
                        resume,
                        action,
                    }))
                }
                _ => return None,
            };
            Some(NodeDef::leaf(kind, at))
        }
        _ => None,
    }
}

/// The kind named by a composite's or decorator's head (a keyword, or a rule with arguments).
fn head_kind(cx: &Ctxt, file: FileId, head: &Pair<'_, Rule>) -> Option<NodeKind> {
    let number = |i: usize, what: &str| {
        let n = children(head.clone())
            .filter(|p| p.as_rule() == Rule::number)
            .nth(i)?;
        count(cx, file, &n, what)
    };
    let time = || {
        let d = children(head.clone()).find(|p| p.as_rule() == Rule::duration)?;
        Some(duration_or_stand_in(cx, file, &d))
    };
    Some(match head.as_rule() {
        Rule::kw_sequence => NodeKind::Sequence,
        Rule::kw_reactive_sequence => NodeKind::ReactiveSequence,
        Rule::kw_selector => NodeKind::Selector,
        Rule::kw_reactive_selector => NodeKind::ReactiveSelector,
        Rule::parallel => {
            let success = number(0, "a `parallel` threshold")?;
            let has_failure = children(head.clone())
                .filter(|p| p.as_rule() == Rule::number)
                .count()
                > 1;
            let failure = if has_failure {
                Some(number(1, "a `parallel` threshold")?)
            } else {
                None
            };
            NodeKind::Parallel { success, failure }
        }
        Rule::kw_invert => NodeKind::Invert,
        Rule::kw_force_success => NodeKind::ForceSuccess,
        Rule::kw_force_failure => NodeKind::ForceFailure,
        Rule::kw_run_once => NodeKind::RunOnce,
        Rule::repeat => NodeKind::Repeat(number(0, "a `repeat` count")?),
        Rule::retry => NodeKind::Retry(number(0, "a `retry` count")?),
        Rule::timeout => NodeKind::Timeout(time()?),
        Rule::delay => NodeKind::Delay(time()?),
        _ => return None,
    })
}

/// A duration, or (when malformed, and already reported) a stand-in that keeps the node for the
/// other checks; a file with an error generates nothing.
fn duration_or_stand_in(cx: &Ctxt, file: FileId, pair: &Pair<'_, Rule>) -> Spanned<DurationMs> {
    duration(cx, file, pair).unwrap_or_else(|| Spanned::new(DurationMs(1), span(file, pair)))
}

/// The span of a node's keyword: the pair itself for keywords, its first child otherwise.
fn keyword_span(file: FileId, pair: &Pair<'_, Rule>) -> crate::model::Span {
    if super::is_keyword(pair.as_rule()) {
        return span(file, pair);
    }
    pair.clone()
        .into_inner()
        .next()
        .map_or_else(|| span(file, pair), |k| span(file, &k))
}
